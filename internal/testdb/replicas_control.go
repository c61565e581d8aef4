package testdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
)

// ControlShape is a data set of the control -> cell pairs: N sources of each pair in the
// control schema (api keys, api tokens, organization auth tokens, slug reservations, auth
// identities of Orgs auth providers, provider p organization p's), Orgs
// organization mappings there (every 7th names OtherCell, the rest Cell), the replicas of Cell
// in the cell schema (the same schema for a monolith), drift of every class laid out by id,
// and queued control outbox rows for some objects (see SeedControlReplicas).
type ControlShape struct {
	Orgs, N         int
	Cell, OtherCell string
}

// The layout, by source id i (1..N) of every pair (organization of a key or org auth token:
// 1 + i % Orgs; of a slug reservation: i; a slug reservation names OtherCell when i % 7 == 0):
//
//	i % 20 == 3    no replica (missing)
//	i % 20 == 5    a stale field: apikey label, apitoken token, orgauthtoken token_hashed,
//	               slug reservation slug, auth identity data
//	i % 20 == 7    apikey key, apitoken expires_at, orgauthtoken scope_list, identity ident
//	i % 20 == 9    apikey status, apitoken user_id, orgauthtoken date_deactivated, slug user_id,
//	               identity last_verified
//	i % 20 == 11   two replica rows: an older stale one and a newer one in sync (the newest
//	               wins; not a slug reservation's or an identity's, unique there)
//	i % 20 == 15   apikey allowed_origins
//	i % 20 == 13   a replica even when the source reaches OtherCell only
//	N+1 .. N+N/50  replicas without a source (orphans)
//
// A replica exists for a source that reaches the cell across silos (an organization's object:
// its organization's mapping names Cell; a slug reservation: it names Cell; an api token:
// always) or whose i % 20 == 13, unless i % 20 == 3. Queued control outbox rows: i % 40 == 3
// or 10 and N+1 for Cell (due for even ids, in backoff for odd ones); i % 40 == 15 for
// OtherCell (never this cell's pending).

// SeedControlReplicas builds the data set: sources, mappings and the control outbox in
// controlSchema, replicas in cellSchema.
func SeedControlReplicas(t testing.TB, controlSchema, cellSchema string, s ControlShape) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, r := pgx.Identifier{controlSchema}.Sanitize(), pgx.Identifier{cellSchema}.Sanitize()
	n, orgs, cell, other := s.N, s.Orgs, quote(s.Cell), quote(s.OtherCell)
	// reach is SQL of "source i reaches Cell across silos" for an organization's object.
	orgReach := fmt.Sprintf("(1 + i %% %d) %% 7 <> 0", orgs)
	keep := func(reach string) string {
		return fmt.Sprintf("(i > %[1]d OR (i %% 20 <> 3 AND (%[2]s OR i %% 20 = 13)))", n, reach)
	}
	stmts := []string{
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmapping (organization_id, slug, name, date_created, customer_id, verified, idempotency_key,
       region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues,
       disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation,
       prevent_superuser_access, disable_member_invite)
SELECT i, 'org-' || i, 'Org ' || i, now(), NULL, false, '', CASE WHEN i %% 7 = 0 THEN %s ELSE %s END, 0,
       false, false, false, false, false, false, false, false, false, false, false
  FROM generate_series(1, %d) AS i`, c, other, cell, orgs),
		// api keys and their replicas
		fmt.Sprintf(`INSERT INTO %s.sentry_apikey (id, organization_id, label, key, status, date_added, allowed_origins, scopes, scope_list)
SELECT i, 1 + i %% %d, 'Key ' || i, left(md5('key' || i), 32), i %% 2, now(),
       CASE i %% 3 WHEN 0 THEN E'https://a.example\n\nhttps://b.example' WHEN 1 THEN NULL ELSE '' END, 0, '{}'
  FROM generate_series(1, %d) AS i`, c, orgs, n),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_apikeyreplica (apikey_id, organization_id, label, key, status, date_added, allowed_origins, scopes, scope_list)
SELECT i, 1 + i %% %[2]d, CASE WHEN i %% 20 = 11 AND v = 0 THEN 'older' WHEN i %% 20 = 5 THEN 'old-label' ELSE 'Key ' || i END,
       CASE WHEN i %% 20 = 7 THEN left(md5('other' || i), 32) ELSE left(md5('key' || i), 32) END,
       CASE WHEN i %% 20 = 9 THEN 1 - i %% 2 ELSE i %% 2 END, now(),
       CASE WHEN i %% 20 = 15 THEN 'https://c.example' WHEN i %% 3 = 0 THEN E'https://a.example\nhttps://b.example' ELSE '' END,
       0, '{}'
  FROM generate_series(1, %[3]d + %[3]d / 50) AS g(i), generate_series(0, 1) AS v
 WHERE %[4]s AND (v = 1 OR i %% 20 = 11)
 ORDER BY v, g.i`, r, orgs, n, keep(orgReach)),
		// api tokens and their replicas (every token reaches every cell)
		fmt.Sprintf(`INSERT INTO %s.sentry_apitoken (id, application_id, user_id, scoping_organization_id, name, token, hashed_token, token_type,
       token_last_characters, refresh_token, hashed_refresh_token, expires_at, date_added, scopes, scope_list)
SELECT i, CASE WHEN i %% 3 = 0 THEN 1000 + i END, i, CASE WHEN i %% 4 = 0 THEN 1 + i %% %d END, NULL, tok,
       encode(sha256(convert_to(tok, 'UTF8')), 'hex'), 'sntryu_', right(tok, 4), NULL, NULL,
       CASE WHEN i %% 5 <> 0 THEN '2030-01-01 00:00:00+00'::timestamptz + i * interval '1 minute' END, now(), 0, '{}'
  FROM generate_series(1, %d) AS i, LATERAL (SELECT md5('token' || i) || md5('more' || i) AS tok) AS x`, c, orgs, n),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_apitokenreplica (application_id, organization_id, application_is_active, user_id, apitoken_id,
       hashed_token, token, expires_at, allowed_origins, date_added, scoping_organization_id, scopes, scope_list)
SELECT CASE WHEN i %% 3 = 0 THEN 1000 + i END, NULL, true, CASE WHEN i %% 20 = 9 OR (i %% 20 = 11 AND v = 0) THEN i + 1 ELSE i END, i,
       encode(sha256(convert_to(tok, 'UTF8')), 'hex'), CASE WHEN i %% 20 = 5 THEN md5('stolen' || i) ELSE tok END,
       CASE WHEN i %% 5 <> 0 THEN '2030-01-01 00:00:00+00'::timestamptz + i * interval '1 minute' + CASE WHEN i %% 20 = 7 THEN interval '1 second' ELSE interval '0' END END,
       NULL, now(), CASE WHEN i %% 4 = 0 THEN 1 + i %% %[2]d END, 0, '{}'
  FROM generate_series(1, %[3]d + %[3]d / 50) AS g(i), generate_series(0, 1) AS v,
       LATERAL (SELECT md5('token' || i) || md5('more' || i) AS tok) AS x
 WHERE %[4]s AND (v = 1 OR i %% 20 = 11)
 ORDER BY v, g.i`, r, orgs, n, keep("true")),
		// organization auth tokens and their replicas
		fmt.Sprintf(`INSERT INTO %s.sentry_orgauthtoken (id, organization_id, token_hashed, token_last_characters, name, scope_list, created_by_id,
       date_added, date_last_used, project_last_used_id, date_deactivated)
SELECT i, 1 + i %% %d, 'oat_' || md5('oat' || i), 'abcd', 'Token ' || i,
       CASE WHEN i %% 2 = 0 THEN '{org:ci}'::text[] ELSE '{org:ci,project:releases}'::text[] END, i, now(), NULL, NULL,
       CASE WHEN i %% 6 = 0 THEN '2026-01-01 00:00:00+00'::timestamptz END
  FROM generate_series(1, %d) AS i`, c, orgs, n),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_orgauthtokenreplica (organization_id, orgauthtoken_id, token_hashed, name, scope_list, created_by_id,
       date_added, date_deactivated)
SELECT 1 + i %% %[2]d, i, CASE WHEN i %% 20 = 5 THEN 'oat_' || md5('forged' || i) ELSE 'oat_' || md5('oat' || i) END,
       CASE WHEN i %% 20 = 11 AND v = 0 THEN 'older' ELSE 'Token ' || i END,
       CASE WHEN i %% 20 = 7 THEN '{org:read}'::text[] WHEN i %% 2 = 0 THEN '{org:ci}'::text[] ELSE '{org:ci,project:releases}'::text[] END, i, now(),
       CASE WHEN i %% 20 = 9 THEN '2025-01-01 00:00:00+00'::timestamptz WHEN i %% 6 = 0 THEN '2026-01-01 00:00:00+00'::timestamptz END
  FROM generate_series(1, %[3]d + %[3]d / 50) AS g(i), generate_series(0, 1) AS v
 WHERE %[4]s AND (v = 1 OR i %% 20 = 11)
 ORDER BY v, g.i`, r, orgs, n, keep(orgReach)),
		// slug reservations (each names its cell) and their replicas
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationslugreservation (id, slug, organization_id, user_id, region_name, reservation_type, date_added)
SELECT i, 'slug-' || i, i, i, CASE WHEN i %% 7 = 0 THEN %s ELSE %s END, i %% 2, now()
  FROM generate_series(1, %d) AS i`, c, other, cell, n),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_organizationslugreservationreplica (organization_slug_reservation_id, slug, organization_id, user_id,
       region_name, reservation_type, date_added)
SELECT i, CASE WHEN i %% 20 = 5 THEN 'old-slug-' || i ELSE 'slug-' || i END, i, CASE WHEN i %% 20 = 9 THEN i + 1 ELSE i END,
       CASE WHEN i %% 7 = 0 THEN %s ELSE %s END, i %% 2, now()
  FROM generate_series(1, %d + %d / 50) AS i
 WHERE %s`, r, other, cell, n, n, keep("i % 7 <> 0")),
	}
	// auth providers (provider p of organization p), auth identities and their replicas
	stmts = append(stmts,
		fmt.Sprintf(`INSERT INTO %s.sentry_authprovider (id, organization_id, provider, config, date_added, sync_time, last_sync, default_role,
       default_global_access, flags)
SELECT p, p, 'saml2', '{}', now(), NULL, NULL, 50, true, 0
  FROM generate_series(1, %d) AS p`, c, orgs),
		fmt.Sprintf(`INSERT INTO %s.sentry_authidentity (id, user_id, auth_provider_id, ident, data, last_verified, last_synced, date_added)
SELECT i, i, 1 + i %% %d, 'ident-' || i, '{"access_token": "at-' || md5('at' || i) || '"}',
       '2026-01-01 00:00:00+00'::timestamptz + i * interval '1 minute', now(), now()
  FROM generate_series(1, %d) AS i`, c, orgs, n),
		fmt.Sprintf(`INSERT INTO %s.sentry_authidentityreplica (auth_identity_id, user_id, auth_provider_id, ident, data, last_verified, date_added)
SELECT i, i, 1 + i %% %[2]d, CASE WHEN i %% 20 = 7 THEN 'old-ident-' || i ELSE 'ident-' || i END,
       '{"access_token": "at-' || md5(CASE WHEN i %% 20 = 5 THEN 'revoked' ELSE 'at' END || i) || '"}',
       '2026-01-01 00:00:00+00'::timestamptz + i * interval '1 minute' + CASE WHEN i %% 20 = 9 THEN interval '1 second' ELSE interval '0' END, now()
  FROM generate_series(1, %[3]d + %[3]d / 50) AS i
 WHERE %[4]s`, r, orgs, n, keep(orgReach)))
	// Queued control outbox rows: every pair's category, for the cell and for the other one.
	for _, p := range []struct {
		scope, category int
		shard           string
	}{{0, 28, fmt.Sprintf("1 + i %% %d", orgs)}, {11, 32, "i"}, {0, 33, fmt.Sprintf("1 + i %% %d", orgs)}, {0, 27, "i"}, {1, 25, "i"}} {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO %[1]s.sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, payload,
       scheduled_from, scheduled_for, region_name)
SELECT %[2]d, %[3]s, %[4]d, i, NULL, now(), CASE WHEN i %% 2 = 0 THEN %[5]s::timestamptz ELSE now() + interval '1 hour' END,
       CASE WHEN i %% 40 = 15 THEN %[7]s ELSE %[6]s END
  FROM generate_series(1, %[8]d + 1) AS i
 WHERE i %% 40 IN (3, 10, 15) OR i = %[8]d + 1`, c, p.scope, p.shard, p.category, quote(fixture.ThePast), cell, other, n))
	}
	for _, tbl := range []string{"sentry_organizationmapping", "sentry_apikey", "sentry_apitoken", "sentry_orgauthtoken", "sentry_organizationslugreservation",
		"sentry_authprovider", "sentry_authidentity", "sentry_controloutbox"} {
		stmts = append(stmts, "ANALYZE "+c+"."+tbl)
	}
	for _, tbl := range []string{"hybridcloud_apikeyreplica", "hybridcloud_apitokenreplica", "hybridcloud_orgauthtokenreplica", "hybridcloud_organizationslugreservationreplica",
		"sentry_authidentityreplica"} {
		stmts = append(stmts, "ANALYZE "+r+"."+tbl)
	}
	for _, q := range stmts {
		if _, err := Pool(t).Exec(ctx, q); err != nil {
			t.Fatalf("seeding control replicas: %v\n%s", err, q)
		}
	}
}

// ControlModel is what a verify of pair in the layout's Cell must find, from the layout's
// rules alone (no SQL): the drifted objects in object order and the in-sync count. split
// says the control silo and the cell are two databases, where an organization's object
// reaches the cell only when its organization's mapping names it and a slug reservation
// when it names the cell (in a monolith, one cell, every source reaches it).
func ControlModel(s ControlShape, pair string, split bool) (drifts []ModelDrift, inSync int64) {
	n := int64(s.N)
	orgReach := func(i int64) bool { return (1+i%int64(s.Orgs))%7 != 0 }
	crossReach := map[string]func(int64) bool{
		"apikey": orgReach, "orgauthtoken": orgReach, "authidentity": orgReach, // an identity's provider p is organization p's
		"apitoken":                    func(int64) bool { return true },
		"organizationslugreservation": func(i int64) bool { return i%7 != 0 },
	}[pair]
	reaches := func(i int64) bool {
		if i > n {
			return false
		}
		if split {
			return crossReach(i)
		}
		return true
	}
	hasReplica := func(i int64) bool { return i > n || (i%20 != 3 && (crossReach(i) || i%20 == 13)) }
	stale := map[string]map[int64]string{
		"apikey":                      {5: "label", 7: "key", 9: "status", 15: "allowed_origins"},
		"apitoken":                    {5: "token", 7: "expires_at", 9: "user_id"},
		"orgauthtoken":                {5: "token_hashed", 7: "scope_list", 9: "date_deactivated"},
		"organizationslugreservation": {5: "slug", 9: "user_id"},
		"authidentity":                {5: "data", 7: "ident", 9: "last_verified"},
	}[pair]
	// In a monolith every control outbox row is the one cell's (Sentry names no other there):
	// the rows naming OtherCell count too.
	pending := func(i int64) bool { return i <= n+1 && (i%40 == 3 || i%40 == 10 || i == n+1 || !split && i%40 == 15) }
	for i := int64(1); i <= n+n/50; i++ {
		src, rep := reaches(i), hasReplica(i)
		var d ModelDrift
		switch {
		case !src && !rep:
			continue
		case !rep:
			d.Class = "missing"
		case !src:
			d.Class = "orphan"
		case stale[i%20] != "":
			d.Class, d.Fields = "stale", []string{stale[i%20]}
		default:
			inSync++
			continue
		}
		if pending(i) {
			d.Would, d.Class = d.Class, "pending"
		}
		d.Pair, d.Object = pair, i
		drifts = append(drifts, d)
	}
	return drifts, inSync
}
