package testdb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
)

// ReplicaShape is a replication data set: Orgs organizations and Members members in the cell
// schema, their mappings in the control schema (the same schema for a monolith), with drift
// of every class laid out by id (see SeedReplicas), and queued outbox rows for some objects.
type ReplicaShape struct {
	Orgs, Members int
	Cell          string
}

// The drift layout, by organization id i (1..Orgs) and member id j (1..Members):
//
//	i % 20 == 3   no mapping (missing)            j % 25 == 4   no member mapping
//	i % 20 == 5   mapping slug 'old-org-<i>'      j % 25 == 6   mapping role 'owner'
//	i % 20 == 7   mapping require_2fa flipped     j % 25 == 8   mapping user_id NULL (if the member has one)
//	i % 20 == 9   mapping status NULL
//	Orgs+1 .. Orgs+Orgs/50: mappings without an organization (orphans); members likewise
//	Members+1 .. Members+Members/100
//	i % 40 == 3 or 10, and Orgs+1: an ORGANIZATION_UPDATE row queued (due for even ids, in
//	backoff for odd ones); j % 50 == 4 or 20, and Members+1: an ORGANIZATION_MEMBER_UPDATE row.
//	i % 40 == 5 and j % 50 == 6 (drifted): a row of the object's id in another shard (the
//	next organization's), which is not the object's: they stay stale, not pending.

// SeedReplicas builds the data set: the sources (and the outbox rows) in cellSchema, the
// mappings in controlSchema, then analyzes the tables.
func SeedReplicas(t testing.TB, cellSchema, controlSchema string, s ReplicaShape) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, r := pgx.Identifier{cellSchema}.Sanitize(), pgx.Identifier{controlSchema}.Sanitize()
	n, m := s.Orgs, s.Members
	stmts := []string{
		fmt.Sprintf(`INSERT INTO %s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test)
SELECT i, 'Org ' || i, 'org-' || i, CASE WHEN i %% 11 = 0 THEN 1 ELSE 0 END, now(), 'member', (i * 37) %% 2048, false
  FROM generate_series(1, %d) AS i`, c, n),
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmember (id, organization_id, user_id, email, role, flags, token, date_added,
       has_global_access, inviter_id, invite_status, type)
SELECT j, 1 + j %% %d, CASE WHEN j %% 10 = 0 THEN NULL ELSE j END, CASE WHEN j %% 10 = 0 THEN 'invite-' || j || '@example.com' END,
       CASE WHEN j %% 7 = 0 THEN 'admin' ELSE 'member' END, 0, NULL, now(), true, CASE WHEN j %% 5 = 0 THEN j - 1 END,
       CASE WHEN j %% 10 = 0 THEN 1 ELSE 0 END, 50
  FROM generate_series(1, %d) AS j`, c, n, m),
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmapping (organization_id, slug, name, date_created, customer_id, verified, idempotency_key,
       region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues,
       disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation,
       prevent_superuser_access, disable_member_invite)
SELECT i, CASE WHEN i %% 20 = 5 THEN 'old-org-' || i WHEN i > %[2]d THEN 'gone-' || i ELSE 'org-' || i END, 'Org ' || i, now(), NULL, false, '', %[3]s,
       CASE WHEN i %% 20 = 9 THEN NULL WHEN i %% 11 = 0 THEN 1 ELSE 0 END,
       f & 1 <> 0, f & 2 <> 0, (f & 16 <> 0) <> (i %% 20 = 7), f & 8 <> 0, f & 4 <> 0, f & 32 <> 0, f & 64 <> 0, f & 128 <> 0,
       f & 256 <> 0, f & 512 <> 0, f & 1024 <> 0
  FROM generate_series(1, %[2]d + %[2]d / 50) AS i, LATERAL (SELECT ((i * 37) %% 2048)::bigint AS f) AS x
 WHERE i %% 20 <> 3 OR i > %[2]d`, r, n, quote(s.Cell)),
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmembermapping (organization_id, organizationmember_id, date_added, role, user_id, email,
       inviter_id, invite_status)
SELECT 1 + j %% %[2]d, j, now(), CASE WHEN j %% 25 = 6 THEN 'owner' WHEN j %% 7 = 0 THEN 'admin' ELSE 'member' END,
       CASE WHEN j %% 10 = 0 OR j %% 25 = 8 THEN NULL ELSE j END, CASE WHEN j %% 10 = 0 THEN 'invite-' || j || '@example.com' END,
       CASE WHEN j %% 5 = 0 THEN j - 1 END, CASE WHEN j %% 10 = 0 THEN 1 ELSE 0 END
  FROM generate_series(1, %[3]d + %[3]d / 100) AS j
 WHERE j %% 25 <> 4 OR j > %[3]d`, r, n, m),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, i, 2, i, NULL, now(), CASE WHEN i %% 2 = 0 THEN %[3]s::timestamptz ELSE now() + interval '1 hour' END
  FROM generate_series(1, %[2]d + 1) AS i
 WHERE i %% 40 IN (3, 10) OR i = %[2]d + 1`, c, n, quote(fixture.ThePast)),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, 1 + j %% %[2]d, 3, j, jsonb_build_object('user_id', j), now(), CASE WHEN j %% 2 = 0 THEN %[4]s::timestamptz ELSE now() + interval '1 hour' END
  FROM generate_series(1, %[3]d + 1) AS j
 WHERE j %% 50 IN (4, 20) OR j = %[3]d + 1`, c, n, m, quote(fixture.ThePast)),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, i + 1, 2, i, NULL, now(), %[3]s::timestamptz FROM generate_series(1, %[2]d) AS i WHERE i %% 40 = 5`, c, n, quote(fixture.ThePast)),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, 2 + j %% %[2]d, 3, j, jsonb_build_object('user_id', j), now(), %[4]s::timestamptz FROM generate_series(1, %[3]d) AS j WHERE j %% 50 = 6`, c, n, m, quote(fixture.ThePast)),
	}
	for _, schema := range []string{c, r} {
		for _, tbl := range []string{"sentry_organization", "sentry_organizationmember", "sentry_organizationmapping", "sentry_organizationmembermapping", "sentry_regionoutbox"} {
			stmts = append(stmts, "ANALYZE "+schema+"."+tbl)
		}
	}
	for _, q := range stmts {
		if _, err := Pool(t).Exec(ctx, q); err != nil {
			t.Fatalf("seeding replicas: %v\n%s", err, q)
		}
	}
}

func quote(s string) string { return "'" + s + "'" }

// ModelDrift is one drifted object as the model of the layout says it: pair, class (and for
// a pending one the class it would be), object id, and the fields that differ.
type ModelDrift struct {
	Pair, Class, Would string
	Object             int64
	Fields             []string
}

// ReplicaModel is what a verify of the layout must find, computed from the layout's rules
// alone (no SQL): the drifted objects of both pairs in object order, and each pair's in-sync
// count. split says the control silo is read per cell, where a member mapping counts only
// when its organization's mapping names the cell.
func ReplicaModel(s ReplicaShape, split bool) (drifts []ModelDrift, inSync map[string]int64) {
	inSync = map[string]int64{}
	n, m := int64(s.Orgs), int64(s.Members)
	hasOrgMapping := func(i int64) bool { return i > n || i%20 != 3 }
	orgPending := func(i int64) bool { return i <= n+1 && (i%40 == 3 || i%40 == 10 || i == n+1) }
	for i := int64(1); i <= n+n/50; i++ {
		var d ModelDrift
		switch {
		case i > n:
			d.Class = "orphan"
		case !hasOrgMapping(i):
			d.Class = "missing"
		case i%20 == 5:
			d.Class, d.Fields = "stale", []string{"slug"}
		case i%20 == 7:
			d.Class, d.Fields = "stale", []string{"require_2fa"}
		case i%20 == 9:
			d.Class, d.Fields = "stale", []string{"status"}
		}
		if d.Class == "" {
			inSync["organization"]++
			continue
		}
		if orgPending(i) {
			d.Would, d.Class = d.Class, "pending"
		}
		d.Pair, d.Object = "organization", i
		drifts = append(drifts, d)
	}
	memberPending := func(j int64) bool { return j <= m+1 && (j%50 == 4 || j%50 == 20 || j == m+1) }
	for j := int64(1); j <= m+m/100; j++ {
		org := 1 + j%n
		visible := j > m && true || j <= m && j%25 != 4
		if split && !hasOrgMapping(org) {
			visible = false
		}
		var d ModelDrift
		switch {
		case j > m && !visible:
			continue // an orphan of a cell-less organization: not this cell's
		case j > m:
			d.Class = "orphan"
		case !visible:
			d.Class = "missing"
		case j%25 == 6:
			d.Class, d.Fields = "stale", []string{"role"}
		case j%25 == 8 && j%10 != 0:
			d.Class, d.Fields = "stale", []string{"user_id"}
		}
		if d.Class == "" {
			inSync["organizationmember"]++
			continue
		}
		if memberPending(j) {
			d.Would, d.Class = d.Class, "pending"
		}
		d.Pair, d.Object = "organizationmember", j
		drifts = append(drifts, d)
	}
	slices.SortStableFunc(drifts, func(a, b ModelDrift) int {
		if a.Pair != b.Pair {
			if a.Pair == "organization" {
				return -1
			}
			return 1
		}
		return int(a.Object - b.Object)
	})
	return drifts, inSync
}
