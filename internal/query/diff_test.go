package query

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The index-aligned statements (shard-state, shard-categories, depth, depth-estimate and the
// --shard object lookup) are proven equal to a model: Go computations over every row of the
// table, read with a plain SELECT. The shapes are larger than any cap or page: a shard of 3,000
// rows in 7 categories and ~250 coalesce groups (more than GroupCap), in both silos.

// modelRow is one outbox row as the model sees it.
type modelRow struct {
	id                     int64
	cell                   string
	scope                  int32
	shard                  int64
	category               int32
	object                 int64
	from, scheduled, added time.Time
}

// seedDifferential fills both tables of schema with the random but repeatable shapes.
func seedDifferential(t *testing.T, schema string) {
	t.Helper()
	s := Ident(schema)
	steps := []string{
		"SELECT setseed(0.42)",
		fmt.Sprintf(`INSERT INTO %[1]s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT sh.scope, sh.id, (ARRAY[2, 3, 8, 11, 12, 26, 45])[1 + floor(random() * 7)::int], floor(random() * 36)::bigint,
       NULL, now() - interval '1 hour',
       CASE WHEN random() < 0.3 THEN now() + interval '1 day' ELSE now() - interval '1 day' END,
       timestamptz '2026-01-01' + i * interval '1 millisecond'
  FROM (VALUES (0, 1, 3000), (0, 2, 50), (1, 1, 20)) AS sh(scope, id, n)
 CROSS JOIN LATERAL generate_series(1, sh.n) AS i`, s),
		fmt.Sprintf(`INSERT INTO %[1]s.sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, region_name, date_added)
SELECT sh.scope, sh.id, (ARRAY[0, 27, 43])[1 + floor(random() * 3)::int], floor(random() * 300)::bigint,
       NULL, now() - interval '1 hour',
       CASE WHEN random() < 0.5 THEN now() + interval '1 day' ELSE now() - interval '1 day' END,
       sh.cell, timestamptz '2026-01-01' + i * interval '1 millisecond'
  FROM (VALUES ('us', 0, 1, 1500), ('eu', 0, 1, 700), ('eu', 1, 1, 30)) AS sh(cell, scope, id, n)
 CROSS JOIN LATERAL generate_series(1, sh.n) AS i`, s),
		fmt.Sprintf("ANALYZE %[1]s.sentry_regionoutbox; ANALYZE %[1]s.sentry_controloutbox", s),
	}
	for _, q := range steps {
		if _, err := testdb.Pool(t).Exec(context.Background(), q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

// allRows reads every row of the target's table (the model's only input).
func allRows(t *testing.T, tgt Target) []modelRow {
	t.Helper()
	cell := "''::text"
	if tgt.Control() {
		cell = "region_name::text"
	}
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(
		"SELECT id, %s, shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added FROM %s", cell, tgt.From()))
	if err != nil {
		t.Fatal(err)
	}
	var out []modelRow
	for rows.Next() {
		var r modelRow
		if err := rows.Scan(&r.id, &r.cell, &r.scope, &r.shard, &r.category, &r.object, &r.from, &r.scheduled, &r.added); err != nil {
			t.Fatal(err)
		}
		if tgt.Cell == "" || r.cell == tgt.Cell {
			out = append(out, r)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func runBound(t *testing.T, st Statement) [][]any {
	t.Helper()
	ctx := context.Background()
	tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	sql, args, err := st.Bind()
	if err != nil {
		t.Fatal(err)
	}
	return collect(ctx, t, tx, sql, args...)
}

// withCell prefixes a model row with its cell in the control silo, as the statements do.
func withCell(tgt Target, cell string, vals ...any) []any {
	if tgt.Control() {
		return append([]any{cell}, vals...)
	}
	return vals
}

// modelShardState is shard-state computed from every row: per cell, the depth, the earliest
// scheduled_for and the lowest-id row.
func modelShardState(tgt Target, rows []modelRow, k ShardKey) [][]any {
	var out [][]any
	seen := map[string]int{}
	for _, r := range rows { // in id order: the first row of a cell is its head
		if int(r.scope) != k.Scope.Value || r.shard != k.ID {
			continue
		}
		i, ok := seen[r.cell]
		if !ok {
			seen[r.cell] = len(out)
			out = append(out, withCell(tgt, r.cell, int32(k.Scope.Value), k.ID, int64(0), r.scheduled.UTC(),
				r.id, r.category, r.object, r.from.UTC(), lastDelay(r.from, r.scheduled)))
			i = len(out) - 1
		}
		row := out[i]
		off := len(row) - 9
		row[off+2] = row[off+2].(int64) + 1
		if r.scheduled.UTC().Before(row[off+3].(time.Time)) {
			row[off+3] = r.scheduled.UTC()
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i][0]) < fmt.Sprint(out[j][0]) })
	return out
}

// modelShardCategories is shard-categories computed from every row.
func modelShardCategories(tgt Target, rows []modelRow, k ShardKey) [][]any {
	type key struct {
		cell     string
		category int32
	}
	type agg struct {
		depth         int64
		objects       map[int64]bool
		oldest, newst time.Time
	}
	aggs := map[key]*agg{}
	for _, r := range rows {
		if int(r.scope) != k.Scope.Value || r.shard != k.ID {
			continue
		}
		kk := key{r.cell, r.category}
		a := aggs[kk]
		if a == nil {
			a = &agg{objects: map[int64]bool{}, oldest: r.added.UTC()}
			aggs[kk] = a
		}
		a.depth++
		a.objects[r.object] = true
		a.newst = r.added.UTC() // rows come in id order
	}
	keys := make([]key, 0, len(aggs))
	for kk := range aggs {
		keys = append(keys, kk)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := aggs[keys[i]], aggs[keys[j]]
		if a.depth != b.depth {
			return a.depth > b.depth
		}
		if keys[i].cell != keys[j].cell {
			return keys[i].cell < keys[j].cell
		}
		return keys[i].category < keys[j].category
	})
	var out [][]any
	for _, kk := range keys {
		a := aggs[kk]
		out = append(out, withCell(tgt, kk.cell, kk.category, a.depth, int64(len(a.objects)), a.oldest, a.newst))
	}
	return out
}

// modelDepth is depth computed from every row: the total, then each category.
func modelDepth(rows []modelRow) [][]any {
	per := map[int32]int64{}
	for _, r := range rows {
		per[r.category]++
	}
	cats := make([]int32, 0, len(per))
	for c := range per {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i] < cats[j] })
	out := [][]any{{nil, int64(len(rows))}}
	for _, c := range cats {
		out = append(out, []any{c, per[c]})
	}
	return out
}

func TestIndexAlignedStatementsMatchModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedDifferential(t, schema)
	targets := targetsWithCell(schema, "eu")
	keys := []ShardKey{{Scope: orgScope, ID: 1}, {Scope: orgScope, ID: 2}, {Scope: Enum{1, "USER_SCOPE"}, ID: 1}, {Scope: orgScope, ID: 999}}
	for name, tgt := range targets {
		rows := allRows(t, tgt)
		for _, k := range keys {
			t.Run(fmt.Sprintf("%s/%d-%d", name, k.Scope.Value, k.ID), func(t *testing.T) {
				// due is checked against the clock, observed_at dropped; the rest must be equal.
				state := func(st Statement) [][]any {
					got := runBound(t, st)
					for i, r := range got {
						n := len(r)
						if due := r[n-7].(bool); due != !r[n-8].(time.Time).After(time.Now()) {
							t.Fatalf("due = %v for next attempt %v", due, r[n-8])
						}
						got[i] = append(append([]any{}, r[:n-7]...), r[n-6:n-1]...)
					}
					return got
				}
				want := modelShardState(tgt, rows, k)
				if got := state(ShardState(tgt, k)); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Fatalf("shard-state\n got %v\nwant %v", got, want)
				}
				cats := runBound(t, ShardCategories(tgt, k))
				if want := modelShardCategories(tgt, rows, k); !reflect.DeepEqual(cats, want) && (len(cats) > 0 || len(want) > 0) {
					t.Fatalf("shard-categories\n got %v\nwant %v", cats, want)
				}
				// inspect shard's order: the categories first, their depths summed per cell
				// into the state, which then counts nothing.
				depths := map[string]int64{}
				for _, r := range cats {
					if tgt.Control() {
						depths[r[0].(string)] += r[2].(int64)
					} else {
						depths[""] += r[1].(int64)
					}
				}
				if got := state(ShardStateGivenDepth(tgt, k, depths)); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Fatalf("shard-state given depth %v\n got %v\nwant %v", depths, got, want)
				}
			})
		}
		if got, want := runBound(t, Depth(tgt)), modelDepth(rows); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s depth\n got %v\nwant %v", name, got, want)
		}
	}
	// ANALYZE read every row of these small tables, so the estimate is exact here.
	cell := targets["cell"]
	var want [][]any
	for _, r := range modelDepth(allRows(t, cell)) {
		want = append(want, append(r, true))
	}
	if got := runBound(t, DepthEstimate(cell)); !reflect.DeepEqual(got, want) {
		t.Fatalf("depth-estimate\n got %v\nwant %v", got, want)
	}
}

// TestObjectGivenShardMatchesScan: the --shard lookup returns the scope scan's rows, page by
// page, for objects of several sizes (a page of 5 is smaller than most).
func TestObjectGivenShardMatchesScan(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedDifferential(t, schema)
	tgt := Target{Silo: SiloCell, Schema: schema}
	matched := 0
	for object := int64(0); object < 36; object++ {
		l := ObjectLookup{Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Scope: &orgScope, ObjectID: object, Limit: 1000}
		var inShard [][]any
		for _, r := range runBound(t, ObjectOutboxes(tgt, l)) {
			if r[2] == int64(1) {
				inShard = append(inShard, r)
			}
		}
		l.Shard = i64(1)
		if got := runBound(t, ObjectOutboxes(tgt, l)); !reflect.DeepEqual(got, inShard) {
			t.Fatalf("object %d: --shard lookup\n got %v\nwant %v", object, got, inShard)
		}
		l.Limit = 5
		if got := runBound(t, ObjectOutboxes(tgt, l)); !reflect.DeepEqual(got, inShard[:min(5, len(inShard))]) {
			t.Fatalf("object %d: --shard lookup, first page\n got %v\nwant %v", object, got, inShard[:min(5, len(inShard))])
		}
		matched += len(inShard)
	}
	if matched < 100 {
		t.Fatalf("only %d rows compared: the shape is too small to prove anything", matched)
	}
}
