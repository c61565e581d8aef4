package query

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestKillswitchShardsRows pins the rows of the one-statement kill-switch listing against the
// seed: every listed id gets its rows per outbox and cell, an id with no rows gets one row at
// depth 0, and the printed form returns the same rows.
func TestKillswitchShardsRows(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	st := KillswitchShards(
		[]Target{{Silo: SiloCell, Schema: schema}, {Silo: SiloControl, Schema: schema}},
		[]KillswitchList{
			{OptionsTable: OptionTable, Scope: 0, IDs: []int64{1, 2, 404}},
			{OptionsTable: ControlOptionTable, Scope: 1, IDs: []int64{5}},
		})
	sql, args, err := st.Bind()
	if err != nil {
		t.Fatal(err)
	}
	printed, err := st.Render()
	if err != nil {
		t.Fatal(err)
	}
	bound := collect(ctx, t, tx, sql, args...)
	if p := collect(ctx, t, tx, printed, pgx.QueryExecModeSimpleProtocol); !reflect.DeepEqual(p, bound) {
		t.Fatalf("printed and bound forms differ\nprinted: %v\nbound:   %v", p, bound)
	}
	var got []string
	for _, r := range bound {
		dates := "dates"
		if r[7] == nil || r[8] == nil {
			dates = "no dates"
		}
		got = append(got, fmt.Sprintf("%v %v %v %v %v %v %v %s", r[0], r[1], r[2], r[3], r[4], r[5], r[6], dates))
	}
	want := []string{
		"sentry_controloption 1 5 cell <nil> 1 1 dates",
		"sentry_controloption 1 5 control eu 1 1 dates",
		"sentry_controloption 1 5 control us 1 1 dates",
		"sentry_controloption 1 5 control " + evilCell + " 1 1 dates",
		"sentry_option 0 1 cell <nil> 4 2 dates",
		"sentry_option 0 1 control eu 4 2 dates",
		"sentry_option 0 1 control us 4 2 dates",
		"sentry_option 0 1 control " + evilCell + " 4 2 dates",
		"sentry_option 0 2 cell <nil> 2 2 dates",
		"sentry_option 0 2 control eu 2 2 dates",
		"sentry_option 0 2 control us 2 2 dates",
		"sentry_option 0 2 control " + evilCell + " 2 2 dates",
		"sentry_option 0 404 <nil> <nil> 0 0 no dates",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestShardListUpdateNull runs the kill-switch add and remove statements, printed and bound,
// on an option holding JSON null, on jsonb and text value columns: Sentry reads null as the
// empty list, so add gives [ids] and remove gives [].
func TestShardListUpdateNull(t *testing.T) {
	t.Parallel()
	for _, vt := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(vt), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{OptionValue: vt})
			pool := testdb.Pool(t)
			ctx := context.Background()
			key := "hybrid_cloud.authentication.disabled_user_shards"
			for _, printedForm := range []bool{false, true} {
				for _, add := range []bool{true, false} {
					if _, err := pool.Exec(ctx, fmt.Sprintf("DELETE FROM %s; INSERT INTO %s (key, value, last_updated) VALUES ('%s', 'null', now())",
						qualified(schema, OptionTable), qualified(schema, OptionTable), key)); err != nil {
						t.Fatal(err)
					}
					st := ShardListUpdate(schema, OptionTable, string(vt), key, []int64{9, 3}, add, "null list")
					var rows pgx.Rows
					var err error
					if printedForm {
						text, rerr := st.Render()
						if rerr != nil {
							t.Fatal(rerr)
						}
						rows, err = pool.Query(ctx, text, pgx.QueryExecModeSimpleProtocol)
					} else {
						sql, args, berr := st.Bind()
						if berr != nil {
							t.Fatal(berr)
						}
						rows, err = pool.Query(ctx, sql, args...)
					}
					if err != nil {
						t.Fatal(err)
					}
					var got string
					for rows.Next() {
						if err := rows.Scan(&got); err != nil {
							t.Fatal(err)
						}
					}
					rows.Close()
					if err := rows.Err(); err != nil {
						t.Fatalf("add=%v printed=%v: %v", add, printedForm, err)
					}
					want := "[]"
					if add {
						want = "[3, 9]"
					}
					if got != want {
						t.Fatalf("add=%v printed=%v: value %q, want %q", add, printedForm, got, want)
					}
				}
			}
		})
	}
}
