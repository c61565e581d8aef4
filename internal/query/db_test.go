package query

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seed fills both outbox tables of schema with rows in every state the statements classify:
// ready shards, shards in backoff (one at the 1 h cap), coalesce groups, unknown enum values,
// NULL and non-ASCII payloads, three cells (one with a hostile name).
func seed(t *testing.T, schema string) {
	t.Helper()
	now := time.Now()
	past := now.Add(-10 * time.Minute)
	pl := testdb.Str
	for _, cell := range []string{"", "us", "eu", evilCell} {
		tbl := CellTable
		if cell != "" {
			tbl = ControlTable
		}
		{
			rows := []testdb.Row{
				// ORG 1: ready, a coalesce group of three and a second category.
				{Cell: cell, Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: pl(`{"v": 1}`)},
				{Cell: cell, Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: pl(`{"v": 2}`)},
				{Cell: cell, Scope: 0, Shard: 1, Category: 3, Object: 10, Payload: nil},
				{Cell: cell, Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: pl(`{"v": 3, "name": "Zoë ✓"}`)},
				// ORG 2: in backoff at the 1 h cap (poison suspect).
				{Cell: cell, Scope: 0, Shard: 2, Category: 3, Object: 20, ScheduledFrom: past, ScheduledFor: past.Add(time.Hour)},
				{Cell: cell, Scope: 0, Shard: 2, Category: 3, Object: 21, ScheduledFrom: past, ScheduledFor: past.Add(time.Hour)},
				// USER 5: just claimed, 4 s step.
				{Cell: cell, Scope: 1, Shard: 5, Category: 0, Object: 5, ScheduledFrom: now, ScheduledFor: now.Add(4 * time.Second)},
				// An older mapping: API_TOKEN_UPDATE in USER_SCOPE.
				{Cell: cell, Scope: 1, Shard: 6, Category: 32, Object: 77},
				{Cell: cell, Scope: 11, Shard: 77, Category: 32, Object: 77},
				// Values this registry does not know.
				{Cell: cell, Scope: 14, Shard: 9, Category: 49, Object: 9, Payload: pl(`"quoted ' string"`)},
				// AUDIT_LOG: many distinct objects.
				{Cell: cell, Scope: 3, Shard: 1, Category: 5, Object: 10001},
				{Cell: cell, Scope: 3, Shard: 1, Category: 5, Object: 10002},
			}
			testdb.Insert(t, schema, tbl, rows...)
		}
	}
}

// TestPrintedAndBoundGiveSameRows runs every statement twice in one snapshot: as printed
// (literals, simple protocol, exactly what a DBA pastes) and as executed (bind parameters),
// and requires identical rows. It covers both silos and both payload column types.
func TestPrintedAndBoundGiveSameRows(t *testing.T) {
	t.Parallel()
	for _, payload := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(payload), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{Payload: payload})
			seed(t, schema)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
			nonEmpty := 0
			for tname, target := range targets(schema) {
				for _, c := range cases {
					for _, st := range c.script(target) {
						printed, err := st.Render()
						if err != nil {
							t.Fatal(err)
						}
						sql, args, err := st.Bind()
						if err != nil {
							t.Fatal(err)
						}
						a := collect(ctx, t, tx, printed, pgx.QueryExecModeSimpleProtocol)
						b := collect(ctx, t, tx, sql, args...)
						if !reflect.DeepEqual(a, b) {
							t.Fatalf("%s/%s/%s: printed and bound forms differ\nprinted: %v\nbound:   %v\n%s", tname, c.name, st.Name, a, b, printed)
						}
						if len(a) > 0 {
							nonEmpty++
						}
					}
				}
			}
			// Guard against a vacuous pass: nearly every statement must return rows here.
			if nonEmpty < 3*len(cases) {
				t.Fatalf("only %d statements returned rows; the seed does not exercise them", nonEmpty)
			}
		})
	}
}

func collect(ctx context.Context, t *testing.T, tx pgx.Tx, sql string, args ...any) [][]any {
	t.Helper()
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if tm, ok := v.(time.Time); ok {
				vals[i] = tm.UTC()
			}
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	return out
}

// TestExpectedRows pins what the statements find in the seed, so the equivalence test above
// cannot pass on two equally wrong answers.
func TestExpectedRows(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx := context.Background()
	cell := Target{Silo: SiloCell, Schema: schema}
	run := func(st Statement) [][]any { return runBound(t, st) }

	stuck := run(StuckShards(cell, ShardFilter{}))
	if len(stuck) != 2 || stuck[0][1] != int64(2) || stuck[0][2] != int64(2) || stuck[1][1] != int64(5) {
		t.Fatalf("stuck shards = %v, want ORG/2 (depth 2) then USER/5", stuck)
	}
	if delay := stuck[0][6].(float64); delay != 3600 {
		t.Fatalf("ORG/2 last delay = %v, want 3600", delay)
	}
	if got := run(StuckShards(cell, ShardFilter{Category: enum(0, "USER_UPDATE")})); len(got) != 1 || got[0][1] != int64(5) {
		t.Fatalf("stuck with USER_UPDATE = %v", got)
	}

	top := run(TopShards(cell, ShardFilter{Limit: 1}))
	if len(top) != 1 || top[0][1] != int64(1) || top[0][2] != int64(4) || top[0][3] != int64(2) {
		t.Fatalf("top shard = %v, want ORG/1 with depth 4 and 2 coalesce groups", top)
	}

	msgs := run(ShardMessages(cell, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 50, false))
	var delivers []bool
	for _, m := range msgs {
		delivers = append(delivers, m[4].(bool))
	}
	// The head (lowest row, superseded) first, then the rest newest first.
	if !reflect.DeepEqual(delivers, []bool{false, true, true, false}) || msgs[0][len(msgs[0])-1] != true || msgs[1][len(msgs[1])-1] != false {
		t.Fatalf("delivers flags (head, then newest first) = %v, heads %v %v; want [false true true false]", delivers, msgs[0][len(msgs[0])-1], msgs[1][len(msgs[1])-1])
	}
	if !strings.Contains(msgs[1][5].(string), "Zoë") {
		t.Fatalf("newest payload = %v", msgs[1][5])
	}
	oldest := run(ShardMessagesOrdered(cell, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}, 2, false, true))
	if len(oldest) != 2 || oldest[0][0].(int64) >= oldest[1][0].(int64) || oldest[0][len(oldest[0])-1] != true {
		t.Fatalf("oldest first, limit 2 = %v: want the head, then the next row up", oldest)
	}

	cat := run(CategoryDepth(cell, Enum{32, "API_TOKEN_UPDATE"}))
	if len(cat) != 2 {
		t.Fatalf("API_TOKEN_UPDATE by scope = %v, want a row for USER_SCOPE and one for API_TOKEN_SCOPE", cat)
	}
	obj := run(ObjectOutboxes(cell, ObjectLookup{Category: Enum{2, "ORGANIZATION_UPDATE"}, Scope: enum(0, "ORGANIZATION_SCOPE"), ObjectID: 1, ShardFromObject: true}))
	if len(obj) != 3 {
		t.Fatalf("ORGANIZATION_UPDATE object 1 = %d rows, want 3", len(obj))
	}
	depth := run(Depth(cell))
	if depth[0][0] != nil || depth[0][1] != int64(12) {
		t.Fatalf("total depth row = %v, want [nil 12]", depth[0])
	}
	ctl := run(Depth(Target{Silo: SiloControl, Schema: schema, Cell: evilCell}))
	if ctl[0][1] != int64(12) {
		t.Fatalf("control depth for the hostile cell = %v, want 12", ctl[0])
	}
	var n int64
	if err := testdb.Pool(t).QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.sentry_controloutbox", Ident(schema))).Scan(&n); err != nil || n != 36 {
		t.Fatalf("control rows = %d, %v (the hostile cell name must not have changed anything)", n, err)
	}
}

// TestPrintedSQLParses hands every printed statement to PostgreSQL's own parser and planner
// (EXPLAIN), in both silos.
func TestPrintedSQLParses(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ctx := context.Background()
	for tname, target := range targets(schema) {
		for _, c := range cases {
			for _, st := range c.script(target) {
				printed, err := st.Render()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := testdb.Pool(t).Exec(ctx, "EXPLAIN "+strings.TrimSuffix(strings.TrimSpace(printed), ";"), pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Errorf("%s/%s/%s does not parse: %v", tname, c.name, st.Name, err)
				}
			}
		}
	}
}

// TestPrintedSQLRunsInPsql pipes every printed script into psql unchanged, as a DBA would.
func TestPrintedSQLRunsInPsql(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText})
	seed(t, schema)
	var script strings.Builder
	for _, target := range targets(schema) {
		for _, c := range cases {
			out, err := c.script(target).Render()
			if err != nil {
				t.Fatal(err)
			}
			script.WriteString(out)
			script.WriteString("\n")
		}
	}
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN())
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}

// TestDrainStatementsParse EXPLAINs every drain statement, printed, in both silos (EXPLAIN
// of a DELETE or an UPDATE plans it without running it).
func TestDrainStatementsParse(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ctx := context.Background()
	now := time.Now()
	for tname, target := range targets(schema) {
		k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
		for _, st := range []Statement{
			DrainHead(target, k, 0, 0), DrainHead(target, k, 99, 5), DrainClaim(target, k, now, now),
			DrainUnclaim(target, k, []int64{1, 2}, []int64{now.UnixMicro(), 0}, []int64{now.UnixMicro(), 0}, now, now),
			DrainNewest(target, k, 2, 1), DrainDuplicateSlice(target, k, 2, 1), DrainDeleteIDs(target, []int64{1, 2}),
			DrainNext(target, k, 99, nil), DrainNext(target, k, 0, &GroupUpTo{Category: 2, Object: 1, UpTo: 5}), DrainDeleteGroupChunk(target, k, 2, 1, 5),
		} {
			printed, err := st.Render()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := testdb.Pool(t).Exec(ctx, "EXPLAIN "+strings.TrimSuffix(strings.TrimSpace(printed), ";"), pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Errorf("%s/%s does not parse: %v\n%s", tname, st.Name, err, printed)
			}
		}
	}
}
