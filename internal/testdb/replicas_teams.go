package testdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
)

// The team, organization member team and external actor layout, on top of SeedReplicas'
// organizations and members (n organizations, m members), by team id k (1..T = 2n),
// membership id q (1..Q = m/2) and external actor id e (1..E = n):
//
//	team k: organization 1 + k % n            k % 17 == 3   no replica (missing)
//	                                          k % 17 == 5   replica slug 'old-team-<k>'
//	                                          k % 17 == 7   replica status 2
//	membership q: team 1 + q % T, member q    q % 19 == 4   no replica
//	  (organization: the member's, 1 + q % n) q % 19 == 6   replica is_active flipped
//	                                          q % 19 == 8   replica organization_id + 1
//	external actor e: organization 1 + e % n, e % 11 == 2   no replica
//	  integration 100 + e % 7, a team (even)  e % 11 == 4   replica external_name changed
//	  or a user (odd)                         e % 11 == 6   replica external_id NULL
//	orphans: replicas T+1..T+T/20, Q+1..Q+Q/20, E+1..E+E/10 (organization 1 + id % n)
//	queued: k % 34 == 3 TEAM_UPDATE in the team's organization (its shard); k % 34 == 5 one in
//	  the next organization (not the team's shard: it stays stale); q % 38 == 4 and
//	  q % 38 == 6 (the member's organization: pending); e % 22 == 2 EXTERNAL_ACTOR_UPDATE in
//	  INTEGRATION_SCOPE/its integration (pending); e % 22 == 4 in integration 1 (not its).

// TeamShape is the sizes SeedTeams derives from a ReplicaShape.
func TeamShape(s ReplicaShape) (teams, memberships, actors int) {
	return 2 * s.Orgs, s.Members / 2, s.Orgs
}

// SeedTeams adds the layout above to a SeedReplicas data set.
func SeedTeams(t testing.TB, cellSchema, controlSchema string, s ReplicaShape) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, r := pgx.Identifier{cellSchema}.Sanitize(), pgx.Identifier{controlSchema}.Sanitize()
	n := s.Orgs
	T, Q, E := TeamShape(s)
	stmts := []string{
		fmt.Sprintf(`INSERT INTO %s.sentry_team (id, organization_id, slug, name, status, idp_provisioned, date_added)
SELECT k, 1 + k %% %d, 'team-' || k, 'Team ' || k, CASE WHEN k %% 13 = 0 THEN 1 ELSE 0 END, false, now() FROM generate_series(1, %d) AS k`, c, n, T),
		fmt.Sprintf(`INSERT INTO %s.sentry_teamreplica (team_id, organization_id, slug, name, status, date_added)
SELECT k, 1 + k %% %[2]d, CASE WHEN k %% 17 = 5 THEN 'old-team-' || k ELSE 'team-' || k END, 'Team ' || k,
       CASE WHEN k %% 17 = 7 THEN 2 WHEN k %% 13 = 0 AND k <= %[3]d THEN 1 ELSE 0 END, now()
  FROM generate_series(1, %[3]d + %[3]d / 20) AS k WHERE k %% 17 <> 3 OR k > %[3]d`, r, n, T),
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmember_teams (id, team_id, organizationmember_id, is_active, role)
SELECT q, 1 + q %% %d, q, q %% 3 <> 0, CASE WHEN q %% 4 = 0 THEN 'admin' END FROM generate_series(1, %d) AS q`, c, T, Q),
		fmt.Sprintf(`INSERT INTO %s.sentry_organizationmember_teamsreplica (team_id, organization_id, organizationmember_id, organizationmemberteam_id, is_active, role, date_added)
SELECT 1 + q %% %[2]d, 1 + q %% %[3]d + CASE WHEN q %% 19 = 8 AND q <= %[4]d THEN 1 ELSE 0 END, q, q,
       (q %% 3 <> 0) <> (q %% 19 = 6 AND q <= %[4]d), CASE WHEN q %% 4 = 0 THEN 'admin' END, now()
  FROM generate_series(1, %[4]d + %[4]d / 20) AS q WHERE q %% 19 <> 4 OR q > %[4]d`, r, T, n, Q),
		fmt.Sprintf(`INSERT INTO %s.sentry_externalactor (id, date_updated, team_id, user_id, organization_id, integration_id, provider, external_name, external_id)
SELECT e, now(), CASE WHEN e %% 2 = 0 THEN 1 + e %% %[3]d END, CASE WHEN e %% 2 = 1 THEN e END, 1 + e %% %[2]d, 100 + e %% 7, 110,
       '@ext-' || e, CASE WHEN e %% 5 <> 0 THEN 'X' || e END
  FROM generate_series(1, %[4]d) AS e`, c, n, T, E),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_externalactorreplica (externalactor_id, team_id, user_id, organization_id, integration_id, provider, external_name, external_id)
SELECT e, CASE WHEN e %% 2 = 0 THEN 1 + e %% %[3]d END, CASE WHEN e %% 2 = 1 THEN e END, 1 + e %% %[2]d, 100 + e %% 7, 110,
       CASE WHEN e %% 11 = 4 AND e <= %[4]d THEN '@renamed-' || e ELSE '@ext-' || e END,
       CASE WHEN e %% 5 <> 0 AND (e %% 11 <> 6 OR e > %[4]d) THEN 'X' || e END
  FROM generate_series(1, %[4]d + %[4]d / 10) AS e WHERE e %% 11 <> 2 OR e > %[4]d`, r, n, T, E),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, 1 + (k + CASE WHEN k %% 34 = 5 THEN 1 ELSE 0 END) %% %[2]d, 11, k, NULL, now(), %[4]s::timestamptz
  FROM generate_series(1, %[3]d) AS k WHERE k %% 34 IN (3, 5)`, c, n, T, quote(fixture.ThePast)),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 0, 1 + q %% %[2]d, 26, q, NULL, now(), now() + interval '1 hour' FROM generate_series(1, %[3]d) AS q WHERE q %% 38 IN (4, 6)`, c, n, Q),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
SELECT 5, CASE WHEN e %% 22 = 2 THEN 100 + e %% 7 ELSE 1 END, 35, e, NULL, now(), %[3]s::timestamptz
  FROM generate_series(1, %[2]d) AS e WHERE e %% 22 IN (2, 4)`, c, E, quote(fixture.ThePast)),
	}
	for _, schema := range []string{c, r} {
		for _, tbl := range []string{"sentry_team", "sentry_teamreplica", "sentry_organizationmember_teams", "sentry_organizationmember_teamsreplica",
			"sentry_externalactor", "hybridcloud_externalactorreplica", "sentry_regionoutbox"} {
			stmts = append(stmts, "ANALYZE "+schema+"."+tbl)
		}
	}
	for _, q := range stmts {
		if _, err := Pool(t).Exec(ctx, q); err != nil {
			t.Fatalf("seeding teams: %v\n%s", err, q)
		}
	}
}

// TeamModel is what a verify of the team layout must find, from the layout's rules alone:
// the drifted objects of the team, organizationmemberteam and externalactor pairs (in that
// order, each in object order) and each pair's in-sync count. split: the control silo is
// read per cell, where a replica counts only when its organization's mapping names the cell.
func TeamModel(s ReplicaShape, split bool) (drifts []ModelDrift, inSync map[string]int64) {
	inSync = map[string]int64{}
	n := int64(s.Orgs)
	t, q, e := TeamShape(s)
	T, Q, E := int64(t), int64(q), int64(e)
	hasOrgMapping := func(org int64) bool { return org > n || org%20 != 3 }
	visible := func(org int64) bool { return !split || hasOrgMapping(org) }
	add := func(pair string, id int64, class string, fields []string, pending bool) {
		if class == "" {
			inSync[pair]++
			return
		}
		d := ModelDrift{Pair: pair, Class: class, Object: id, Fields: fields}
		if pending {
			d.Would, d.Class = d.Class, "pending"
		}
		drifts = append(drifts, d)
	}
	for k := int64(1); k <= T+T/20; k++ {
		org := 1 + k%n
		switch {
		case k > T:
			if visible(org) {
				add("team", k, "orphan", nil, false)
			}
		case k%17 == 3 || !visible(org):
			add("team", k, "missing", nil, k%34 == 3)
		case k%17 == 5:
			add("team", k, "stale", []string{"slug"}, false) // its queued row (k % 34 == 5) is another shard's
		case k%17 == 7:
			add("team", k, "stale", []string{"status"}, false)
		default:
			add("team", k, "", nil, false)
		}
	}
	for m := int64(1); m <= Q+Q/20; m++ {
		org := 1 + m%n
		replicaOrg := org
		if m <= Q && m%19 == 8 {
			replicaOrg++
		}
		pending := m <= Q && (m%38 == 4 || m%38 == 6)
		switch {
		case m > Q:
			if visible(org) {
				add("organizationmemberteam", m, "orphan", nil, false)
			}
		case m%19 == 4 || !visible(replicaOrg):
			add("organizationmemberteam", m, "missing", nil, pending)
		case m%19 == 6:
			add("organizationmemberteam", m, "stale", []string{"is_active"}, pending)
		case m%19 == 8:
			add("organizationmemberteam", m, "stale", []string{"organization_id"}, pending)
		default:
			add("organizationmemberteam", m, "", nil, false)
		}
	}
	for a := int64(1); a <= E+E/10; a++ {
		org := 1 + a%n
		switch {
		case a > E:
			if visible(org) {
				add("externalactor", a, "orphan", nil, false)
			}
		case a%11 == 2 || !visible(org):
			add("externalactor", a, "missing", nil, a%22 == 2)
		case a%11 == 4:
			add("externalactor", a, "stale", []string{"external_name"}, false) // queued in integration 1: not its shard
		case a%11 == 6 && a%5 != 0:
			add("externalactor", a, "stale", []string{"external_id"}, false)
		default:
			add("externalactor", a, "", nil, false)
		}
	}
	return drifts, inSync
}
