package replica_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestEngineRunsAControlToCellPair runs the engine on a pair whose source is a control
// table and whose replica lives in a cell (tables made up for the test: the engine, not a
// Sentry model, is under test): across two schemas, the cell's sources are the ones whose
// organization's mapping names the cell, the control outbox's rows are the cell's by
// region_name, and pending is the object's shard.
func TestEngineRunsAControlToCellPair(t *testing.T) {
	t.Parallel()
	control, cell := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	c, r := pgx.Identifier{control}.Sanitize(), pgx.Identifier{cell}.Sanitize()
	for _, q := range []string{
		`CREATE TABLE %[1]s.t_source (id bigserial PRIMARY KEY, organization_id bigint NOT NULL, label text NOT NULL)`,
		`CREATE TABLE %[2]s.t_replica (id bigserial PRIMARY KEY, source_id bigint NOT NULL, organization_id bigint NOT NULL, label text NOT NULL)`,
		`INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite)
SELECT o, 'o' || o, 'O', now(), false, '', CASE WHEN o = 1 THEN 'us' ELSE 'de' END, 0, false, false, false, false, false, false, false, false, false, false, false FROM generate_series(1, 2) AS o`,
		// 1 in sync, 2 stale (its queued row is for another cell), 3 another cell's, 4 missing
		// with a queued row for this cell (pending), 5 an orphan, 6 stale with a queued row of
		// its id in another shard (not its own).
		`INSERT INTO %[1]s.t_source (id, organization_id, label) VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 1, 'd'), (6, 1, 'f')`,
		`INSERT INTO %[2]s.t_replica (source_id, organization_id, label) VALUES (1, 1, 'a'), (2, 1, 'B'), (5, 1, 'e'), (6, 1, 'F')`,
		`INSERT INTO %[1]s.sentry_controloutbox (region_name, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
VALUES ('us', 0, 1, 28, 4, NULL, now(), now()), ('de', 0, 1, 28, 2, NULL, now(), now()), ('us', 0, 2, 28, 6, NULL, now(), now())`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, c, r)); err != nil {
			t.Fatal(err)
		}
	}
	pair := replica.Pair{ReplicaSpec: query.ReplicaSpec{Name: "test", SourceSilo: query.SiloControl,
		Source: "t_source", SourceKey: "id", Replica: "t_replica", ReplicaKey: "source_id",
		Fields: []query.ReplicaField{{Name: "organization_id", Source: query.Col("organization_id")}, {Name: "label", Source: query.Col("label")}},
		Shard:  query.Col("organization_id"), ReplicaShard: "organization_id",
		SourceCell: query.CellScope{ByOrganization: "organization_id"},
		Scope:      query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, Category: query.Enum{Value: 28, Name: "API_KEY_UPDATE"}}}
	col := &replica.Collector{Pair: pair}
	p := testdb.Pool(t)
	if err := replica.VerifySplit(context.Background(), p, p, replica.Sides{SourceSchema: control, ReplicaSchema: cell}, "us", nil, col); err != nil {
		t.Fatal(err)
	}
	want := []testdb.ModelDrift{{Pair: "test", Class: "stale", Object: 2, Fields: []string{"label"}}, {Pair: "test", Class: "pending", Would: "missing", Object: 4},
		{Pair: "test", Class: "orphan", Object: 5}, {Pair: "test", Class: "stale", Object: 6, Fields: []string{"label"}}}
	if g := got(col.Kept); !reflect.DeepEqual(g, want) {
		t.Errorf("drifts %+v, want %+v", g, want)
	}
	if col.Counts != (replica.Counts{InSync: 1, Stale: 2, Orphan: 1, Pending: 1}) {
		t.Errorf("counts %+v", col.Counts)
	}
	// A user-scoped source: the cell's rows are those of users who are members of an
	// organization of the cell (find_cells_for_user).
	for _, q := range []string{
		`CREATE TABLE %[1]s.t_user_source (id bigserial PRIMARY KEY, user_id bigint NOT NULL, label text NOT NULL)`,
		`CREATE TABLE %[2]s.t_user_replica (id bigserial PRIMARY KEY, source_id bigint NOT NULL, user_id bigint NOT NULL, label text NOT NULL)`,
		`INSERT INTO %[1]s.sentry_organizationmembermapping (organization_id, organizationmember_id, date_added, role, user_id) VALUES (1, 1, now(), 'member', 70), (2, 2, now(), 'member', 80)`,
		`INSERT INTO %[1]s.t_user_source (id, user_id, label) VALUES (1, 70, 'a'), (2, 80, 'b')`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, c, r)); err != nil {
			t.Fatal(err)
		}
	}
	byUser := replica.Pair{ReplicaSpec: query.ReplicaSpec{Name: "test-user", SourceSilo: query.SiloControl,
		Source: "t_user_source", SourceKey: "id", Replica: "t_user_replica", ReplicaKey: "source_id",
		Fields: []query.ReplicaField{{Name: "label", Source: query.Col("label")}},
		Shard:  query.Col("user_id"), ReplicaShard: "user_id", SourceCell: query.CellScope{ByUser: "user_id"},
		Scope: query.Enum{Value: 1, Name: "USER_SCOPE"}, Category: query.Enum{Value: 25, Name: "AUTH_IDENTITY_UPDATE"}}}
	col = &replica.Collector{Pair: byUser}
	if err := replica.VerifySplit(context.Background(), p, p, replica.Sides{SourceSchema: control, ReplicaSchema: cell}, "us", nil, col); err != nil {
		t.Fatal(err)
	}
	if g := got(col.Kept); !reflect.DeepEqual(g, []testdb.ModelDrift{{Pair: "test-user", Class: "missing", Object: 1}}) {
		t.Errorf("user-scoped drifts %+v, want user 70's source only (missing)", g)
	}
}
