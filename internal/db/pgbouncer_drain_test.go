package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDrainClaimThroughPgBouncer: the drain's claim reads its record of the replaced
// schedules as binary rows (query.AllBinary: a described statement, unnamed, inside the
// claim's transaction), the one statement that does; through PgBouncer in transaction
// pooling, over one pooled server connection, the claim and the unclaim put back exactly the
// schedules read before: rows sharing a schedule and rows each with their own
// scheduled_from (fresh rows), several times over.
func TestDrainClaimThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bin := pgbouncerBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	table := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
	ctx := context.Background()
	if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`INSERT INTO %s (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, 7, 2, i %% 5, '{}',
		       CASE WHEN i %% 2 = 0 THEN timestamptz '2026-11-30 10:00:00Z' + i * interval '1 microsecond' ELSE timestamptz '2026-11-30 09:00:00Z' END,
		       CASE WHEN i %% 2 = 0 THEN timestamptz '2016-08-01 00:00:00Z' ELSE timestamptz '2026-11-30 09:00:08Z' END
		  FROM generate_series(1, 600) i`, table)); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		var s string
		if err := testdb.Pool(t).QueryRow(ctx, "SELECT string_agg(id || ' ' || scheduled_from || ' ' || scheduled_for, ',' ORDER BY id) FROM "+table).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read()
	port := startPgBouncer(t, bin)
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/test?sslmode=disable", "bouncer-Pa55", port)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	k := query.ShardKey{Scope: query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, ID: 7}
	for i := range 3 {
		conn := connect(t, db.Config{DSN: dsn, Command: "pgbouncer-test"})
		c, err := drain.Claim(ctx, conn, target, k)
		if err != nil {
			t.Fatalf("claim %d through pgbouncer: %v", i, err)
		}
		if c.Before.Len() != 600 || read() == before {
			t.Fatalf("claim %d: %d schedules recorded, table changed: %v", i, c.Before.Len(), read() != before)
		}
		if n, err := drain.Unclaim(ctx, conn, target, k, c); err != nil || n != 600 {
			t.Fatalf("unclaim %d through pgbouncer: %d rows, %v", i, n, err)
		}
		if got := read(); got != before {
			t.Fatalf("after unclaim %d the schedules differ from those read before the claim", i)
		}
	}
}
