package query

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// repairCases are the statements compact, skip and restore run or print.
var repairCases = []testCase{ //nolint:gochecknoglobals // test table
	{"compact-superseded", func(t Target) Script {
		return Script{Superseded(t, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 0, Why{})}
	}},
	{"compact-delete-printed", func(t Target) Script {
		return Script{DeleteSelected(t, Superseded(t, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 0, Why{}), Why{})}
	}},
	{"skip-group-rows", func(t Target) Script { return Script{SkipGroupRows(t, 2, 0, Why{}), SkipGroupRows(t, 2, 1, Why{})} }},
	{"skip-delete-printed", func(t Target) Script { return Script{DeleteSelected(t, SkipGroupRows(t, 2, 0, Why{}), Why{})} }},
	{"delete-archived", func(t Target) Script { return Script{DeleteArchivedIDs(t, []int64{1, 2, 9999}, Why{})} }},
	// Every mutation with its reason, the way the commands print and run it: the comment is
	// part of the statement, and a hostile reason cannot leave it.
	{"reschedule-reason", func(t Target) Script {
		return Script{Reschedule(t, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 0, RescheduleAllRows, hostileWhy("reschedule"))}
	}},
	{"reschedule-group-heads", func(t Target) Script {
		k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
		return Script{Reschedule(t, k, 0, RescheduleGroupHeads, Why{Command: "reschedule"}), SettleRescheduled(t, k, 0, RescheduleGroupHeads)}
	}},
	{"compact-reason", func(t Target) Script {
		why := hostileWhy("compact")
		k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
		return Script{Superseded(t, k, 0, why), DeleteSelected(t, Superseded(t, k, 0, Why{}), why)}
	}},
	{"skip-reason", func(t Target) Script {
		why := hostileWhy("skip")
		return Script{SkipGroupRows(t, 2, 0, why), DeleteSelected(t, SkipGroupRows(t, 2, 0, Why{}), why), DeleteArchivedIDs(t, []int64{1, 2}, why)}
	}},
	{"restore-existing-ids", func(t Target) Script { return Script{ExistingIDs(t.Schema, t.TableName(), []int64{1, 3, 9999})} }},
	{"restore-row", func(t Target) Script {
		cell, cellCol := (*string)(nil), ""
		if t.Control() {
			cell, cellCol = &t.Cell, DefaultCellColumn
		}
		payload := "{\"k\": \"it's\\n\\\\ */ --\"}"
		at := time.Date(2026, 11, 30, 10, 11, 12, 345678000, time.UTC)
		return Script{
			RestoreRow(t.Schema, t.TableName(), cellCol, "jsonb", 9999, 0, 1, 2, 1, cell, &payload, at, at.Add(time.Hour), at),
			RestoreRow(t.Schema, t.TableName(), cellCol, "text", 1, 0, 1, 2, 1, cell, nil, at, at, at),
		}
	}},
}

// hostileWhy is a --reason that tries to end its comment and run a statement of its own.
func hostileWhy(command string) Why {
	return Why{Command: command, Reason: "INC-9 */ DELETE FROM x; -- it's\n/* again"}
}

// TestGoldenRepairs pins the printed repair and restore statements like TestGolden (make
// golden rewrites them too).
func TestGoldenRepairs(t *testing.T) {
	t.Parallel()
	for tname, target := range targets("") {
		for _, c := range repairCases {
			t.Run(tname+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				got, err := c.script(target).Render()
				if err != nil {
					t.Fatal(err)
				}
				assertGolden(t, tname, c.name, got)
			})
		}
	}
}

// TestRepairStatementsPrintedAndBound runs every repair statement printed (simple protocol)
// and bound, each from the same savepoint, and requires the same rows back and the same
// table afterwards, in both silos and for both payload types.
func TestRepairStatementsPrintedAndBound(t *testing.T) {
	t.Parallel()
	for _, payload := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(payload), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{Payload: payload})
			seed(t, schema)
			ctx := context.Background()
			tx, err := testdb.Pool(t).Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // nothing here may stay
			changed := 0
			for tname, target := range targets(schema) {
				table := pgx.Identifier{schema, target.TableName()}.Sanitize()
				state := func() [][]any {
					return collect(ctx, t, tx, "SELECT id, payload::text, scheduled_from, scheduled_for, date_added FROM "+table+" ORDER BY id")
				}
				before := state()
				for _, c := range repairCases {
					for _, st := range c.script(target) {
						printed, err := st.Render()
						if err != nil {
							t.Fatal(err)
						}
						sql, args, err := st.Bind()
						if err != nil {
							t.Fatal(err)
						}
						run := func(sql string, args ...any) ([][]any, [][]any) {
							if _, err := tx.Exec(ctx, "SAVEPOINT s"); err != nil {
								t.Fatal(err)
							}
							got := collect(ctx, t, tx, sql, args...)
							after := state()
							if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT s"); err != nil {
								t.Fatal(err)
							}
							return got, after
						}
						pRows, pState := run(printed, pgx.QueryExecModeSimpleProtocol)
						bRows, bState := run(sql, args...)
						if !reflect.DeepEqual(pRows, bRows) || !reflect.DeepEqual(pState, bState) {
							t.Fatalf("%s/%s/%s: printed and bound forms differ\nprinted: %v %v\nbound:   %v %v\n%s", tname, c.name, st.Name, pRows, pState, bRows, bState, printed)
						}
						if !reflect.DeepEqual(pState, before) {
							changed++
						}
					}
				}
			}
			// The deletes and the new row's insert change the table in every target (the
			// control-cell target's hostile cell matches no seeded group for the deletes).
			if changed < 9 {
				t.Fatalf("only %d statements changed the table: the seed does not exercise them", changed)
			}
		})
	}
}
