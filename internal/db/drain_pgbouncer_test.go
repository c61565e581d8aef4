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

// TestDrainLeavesNoPreparedStatementsThroughPgBouncer (found by review): the batch drain
// prepares named statements in each transaction. It used to drop them after the COMMIT,
// when under PgBouncer's transaction pooling the server connection is back in the pool: the
// Close went to whichever server connection PgBouncer picked next (here the other one:
// server_round_robin), the statement stayed for Sentry's next client of its connection, and
// the next drain, numbering its statements from 1 again, failed with 42P05 there. Now they
// are dropped inside the transaction and carry a per-process name.
func TestDrainLeavesNoPreparedStatementsThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bin := pgbouncerBinary(t)
	port := startPgBouncer(t, bin, "default_pool_size = 2", "server_round_robin = 1")
	dsn := fmt.Sprintf("postgres://postgres:bouncer-Pa55@127.0.0.1:%d/test?sslmode=disable", port)
	ctx := context.Background()
	raw := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, dsn+"&default_query_exec_mode=simple_protocol") // Sentry's psycopg
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(ctx) })
		return c
	}
	// Open both server connections of the pool: two clients in a transaction at once.
	a, b := raw(), raw()
	for _, c := range []*pgx.Conn{a, b} {
		if _, err := c.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*pgx.Conn{a, b} {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}

	schema := testdb.Schema(t, fixture.Options{})
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	shard := query.ShardKey{Scope: query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, ID: 1}
	seed := func() {
		var rows []testdb.Row
		for i := range 6 {
			rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i)})
		}
		testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
	}
	run := func(n int) {
		conn := connect(t, db.Config{DSN: dsn, Command: "drain"})
		h := drain.HandlerFunc(func(context.Context, drain.Message) error { return nil })
		res, err := drain.Run(ctx, conn, drain.Options{Target: target, Shard: shard, Handler: h, Mode: drain.ModeBatch, BatchSize: 2})
		if err != nil || res.Delivered != 6 {
			t.Fatalf("drain %d through pgbouncer: %+v, %v", n, res, err)
		}
		_ = conn.Close(ctx)
	}
	seed()
	run(1)

	// Each transaction of a simple-protocol client lands on the next server connection.
	c := raw()
	for i := range 4 {
		var left []string
		rows, err := c.Query(ctx, "SELECT name FROM pg_prepared_statements WHERE name LIKE 'outboxctl%' ORDER BY name")
		if err == nil {
			left, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Errorf("query %d: prepared statements the drain left on a pooled server connection: %v", i, left)
		}
	}

	seed()
	run(2) // numbers its statements from 1 again
}
