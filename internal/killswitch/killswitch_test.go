package killswitch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

func setup(t *testing.T, valueType fixture.PayloadType) (string, *db.Conn) {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{OptionValue: valueType})
	conn, err := db.Connect(context.Background(), db.Config{DSN: testdb.DSN(), Command: "killswitch-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return schema, conn
}

func exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, schema, table, key string) (value, by string) {
	t.Helper()
	err := testdb.Pool(t).QueryRow(context.Background(),
		fmt.Sprintf("SELECT value::text, last_updated_by FROM %s.%s WHERE key = $1", schema, table), key).Scan(&value, &by)
	if err != nil {
		t.Fatal(err)
	}
	return value, by
}

func orgScope() query.Enum { return query.Enum{Name: "ORGANIZATION_SCOPE", Value: 0} }

func TestParseIDs(t *testing.T) {
	t.Parallel()
	ids, err := killswitch.ParseIDs([]string{"7", " 3", "7", "0"})
	if err != nil || !slices.Equal(ids, []int64{0, 3, 7}) {
		t.Fatalf("ids %v err %v", ids, err)
	}
	for _, bad := range []string{"-1", "x", "1.5", ""} {
		_, err := killswitch.ParseIDs([]string{bad})
		if want := fmt.Sprintf("invalid shard id %q: want a non-negative integer", bad); err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", bad, err, want)
		}
	}
}

func TestApplyChange(t *testing.T) {
	t.Parallel()
	after, changed, unchanged := killswitch.ApplyChange([]int64{1, 5}, []int64{3, 5}, true)
	if !slices.Equal(after, []int64{1, 3, 5}) || !slices.Equal(changed, []int64{3}) || !slices.Equal(unchanged, []int64{5}) {
		t.Fatalf("add: %v %v %v", after, changed, unchanged)
	}
	after, changed, unchanged = killswitch.ApplyChange([]int64{1, 5}, []int64{5, 9}, false)
	if !slices.Equal(after, []int64{1}) || !slices.Equal(changed, []int64{5}) || !slices.Equal(unchanged, []int64{9}) {
		t.Fatalf("remove: %v %v %v", after, changed, unchanged)
	}
	if key := killswitch.KeyFor(1); key != options.DisabledUserShards {
		t.Fatalf("KeyFor(1) = %q", key)
	}
	if key := killswitch.KeyFor(2); key != "" {
		t.Fatalf("KeyFor(2) = %q", key)
	}
}

// TestChangePlanAndApply plans and applies an add, then a remove, on both value column
// types, and checks the plan, the stored value and Sentry's last_updated_by.
func TestChangePlanAndApply(t *testing.T) {
	t.Parallel()
	for _, vt := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(vt), func(t *testing.T) {
			t.Parallel()
			schema, conn := setup(t, vt)
			ctx := context.Background()
			// Two rows wait in shard 42 (one coalesce group).
			exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0, 42, 1, 9, NULL, now(), now(), now() FROM generate_series(1, 2)`, schema))
			ch := killswitch.Change{Target: query.Target{Silo: query.SiloCell, Schema: schema}, Scope: orgScope(),
				Key: options.DisabledOrgShards, IDs: []int64{42, 7}, Add: true, Reason: "test"}
			plan, err := ch.Plan(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Table != query.OptionTable || string(plan.ValueType) != string(vt) || len(plan.Before) != 0 ||
				!slices.Equal(plan.After, []int64{7, 42}) || !slices.Equal(plan.Changed, []int64{42, 7}) || *plan.Waiting != (killswitch.Totals{Rows: 2, Groups: 1}) {
				t.Fatalf("plan %+v waiting %+v", plan, plan.Waiting)
			}
			got, err := ch.Apply(ctx, conn, plan)
			if err != nil {
				t.Fatal(err)
			}
			if v, by := stored(t, schema, query.OptionTable, ch.Key); got != "[7, 42]" || v != got || by != "cli" {
				t.Fatalf("returned %q, stored %q by %q", got, v, by)
			}
			ch.Add, ch.IDs = false, []int64{7, 8}
			if plan, err = ch.Plan(ctx, conn); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plan.Before, []int64{7, 42}) || !slices.Equal(plan.Changed, []int64{7}) || !slices.Equal(plan.Unchanged, []int64{8}) {
				t.Fatalf("remove plan %+v", plan)
			}
			if got, err = ch.Apply(ctx, conn, plan); err != nil || got != "[42]" {
				t.Fatalf("remove returned %q, %v", got, err)
			}
		})
	}
}

// TestChangeRewritesPickle: a value still stored as a pickle (the tuple (42, 7)) is decoded
// under the row lock and written back as a JSON list.
func TestChangeRewritesPickle(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t, fixture.PayloadText)
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, 'gAJLKksHhnEALg==', now())`, schema), options.DisabledOrgShards)
	ch := killswitch.Change{Target: query.Target{Silo: query.SiloCell, Schema: schema}, Scope: orgScope(),
		Key: options.DisabledOrgShards, IDs: []int64{9}, Add: true}
	ctx := context.Background()
	plan, err := ch.Plan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Before, []int64{7, 42}) {
		t.Fatalf("before %v", plan.Before)
	}
	got, err := ch.Apply(ctx, conn, plan)
	if err != nil || got != "[7,9,42]" {
		t.Fatalf("stored %q, %v", got, err)
	}
}

// TestGatePlanAndApply writes a backfill gate to the control options table (a split
// deployment's control silo) and reads it back through Gates.
func TestGatePlanAndApply(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t, fixture.PayloadJSONB)
	ctx := context.Background()
	var tb backfill.Table
	for _, r := range backfill.Registered(nil) {
		if r.Silo == backfill.Control && r.Coded > 1 {
			tb = r
			break
		}
	}
	if tb.Name == "" {
		t.Fatal("no control table with coded version above 1 is registered")
	}
	g := killswitch.Gate{Schema: schema, Deployment: query.DeploymentSplit, Table: tb, Version: tb.Coded - 1, Reason: "hold"}
	plan, err := g.Plan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if plan.OptionsTable != query.ControlOptionTable || plan.Before != "(unset: 0)" || plan.ValueType != "jsonb" {
		t.Fatalf("plan %+v", plan)
	}
	got, err := g.Apply(ctx, conn, plan)
	if err != nil || got != fmt.Sprint(tb.Coded-1) {
		t.Fatalf("stored %q, %v", got, err)
	}
	if plan, err = g.Plan(ctx, conn); err != nil || plan.Before != fmt.Sprint(tb.Coded-1) {
		t.Fatalf("replan %+v, %v", plan, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	sch, err := query.LoadSchema(ctx, tx, schema, []string{query.OptionTable, query.ControlOptionTable})
	if err != nil {
		t.Fatal(err)
	}
	// Read where Sentry reads in the split deployment the gate was written for: the control
	// table's gate is the one set; every other table is gated by its unset option (#26).
	sch = sch.WithDeployment(query.DeploymentSplit)
	gates, err := killswitch.Gates(ctx, tx, schema, sch, []backfill.Table{tb, {Name: "sentry_team", Silo: backfill.Cell, Coded: 1}})
	want := []killswitch.HeldGate{
		{Table: query.ControlOptionTable, Key: g.Key(), Value: tb.Coded - 1, Coded: tb.Coded, Set: true},
		{Table: query.OptionTable, Key: backfill.OptionKey("sentry_team"), Value: 0, Coded: 1, Set: false},
	}
	if err != nil || !slices.Equal(gates, want) {
		t.Fatalf("gates %+v, %v; want %+v", gates, err, want)
	}
}

// TestListsAndWaiting reads the lists of both options tables and what waits behind them in
// one statement, typed.
func TestListsAndWaiting(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t, fixture.PayloadJSONB)
	ctx := context.Background()
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, '[42, 5]', now()), ($2, '"bad"', now())`, schema),
		options.DisabledOrgShards, options.DisabledUserShards)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
VALUES (0, 42, 1, 9, NULL, $1, $1, $1), (0, 42, 2, 9, NULL, $1, $1, $1)`, schema), at)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	sch, err := query.LoadSchema(ctx, tx, schema, []string{query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable})
	if err != nil {
		t.Fatal(err)
	}
	lists, err := killswitch.ReadLists(ctx, tx, schema, sch)
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 4 || !slices.Equal(lists[0].IDs, []int64{5, 42}) || lists[0].Err != nil || lists[1].Err == nil || lists[2].IDs != nil {
		t.Fatalf("lists %+v", lists)
	}
	rows, err := killswitch.Waiting(ctx, tx, schema, sch, lists)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	// Shard 5 waits nowhere; shard 42 waits in the cell outbox; the control outbox is empty.
	r5, r42 := rows[0], rows[1]
	if r5.ShardIdentifier != 5 || r5.Depth != 0 || r5.Silo != nil || r5.OldestMessage != nil {
		t.Fatalf("shard 5 %+v", r5)
	}
	if r42.ShardIdentifier != 42 || r42.Depth != 2 || r42.CoalesceGroups != 2 || *r42.Silo != "cell" || !r42.OldestMessage.Equal(at) {
		t.Fatalf("shard 42 %+v", r42)
	}
}

// TestChangeOnSQLNull: a list option whose jsonb value is SQL NULL (the column's
// nullability after Sentry's jsonb conversion is not known) reads as an empty list, in the
// plan and in the SQL that rewrites it, as a JSON null does.
func TestChangeOnSQLNull(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t, fixture.PayloadJSONB)
	ctx := context.Background()
	exec(t, fmt.Sprintf(`ALTER TABLE %[1]s.sentry_option ALTER COLUMN value DROP NOT NULL;
INSERT INTO %[1]s.sentry_option (key, value, last_updated) VALUES ('%[2]s', NULL, now())`, schema, options.DisabledOrgShards))
	ch := killswitch.Change{Target: query.Target{Silo: query.SiloCell, Schema: schema}, Scope: orgScope(),
		Key: options.DisabledOrgShards, IDs: []int64{9}, Add: true, Reason: "test"}
	plan, err := ch.Plan(ctx, conn)
	if err != nil || len(plan.Before) != 0 || !slices.Equal(plan.After, []int64{9}) {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	if got, err := ch.Apply(ctx, conn, plan); err != nil || got != "[9]" {
		t.Fatalf("returned %q, %v", got, err)
	}
}
