package query

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// categoryModel is an independent count of one category's rows per scope.
type categoryModel struct {
	pending             int64
	shards              map[string]bool // cell/shard id: a control shard is keyed by cell too
	objects             map[int64]bool
	nextAttempt, oldest time.Time
}

// TestCategoryDepthAgainstModel checks inspect category's statement against counts made in Go
// over random rows: pending and the ages always equal the model's; the distinct counts equal
// it exactly when distinct_exact, and are otherwise a lower bound taken over the capped rows;
// with a cap above the category's size, and in the exact variant, every count is exact. It
// covers a category spread over three scopes (the grouped second pass), one whose rows are
// all in one scope, not its registered one (the single pass), and one with no rows, with
// more rows than DistinctCap, in the cell silo and in the control silo with and without
// --cell (where the same shard id in two cells is two shards).
func TestCategoryDepthAgainstModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seedNow := time.Now().UTC().Truncate(time.Millisecond)
	var rows []testdb.Row
	for i := range 2600 {
		r := testdb.Row{Cell: []string{"us", "eu", "de"}[rng.Intn(3)], Scope: rng.Intn(3), Shard: int64(rng.Intn(8)),
			Category: []int{3, 3, 3, 2, 5}[rng.Intn(5)], Object: int64(rng.Intn(1500)),
			ScheduledFrom: seedNow, ScheduledFor: seedNow.Add(time.Duration(rng.Intn(1000)) * time.Second),
			DateAdded: seedNow.Add(-time.Duration(i) * time.Second)}
		if r.Category == 5 { // USER_UPDATE rows, all under one scope
			r.Scope = 0
		}
		rows = append(rows, r)
	}
	testdb.Insert(t, schema, CellTable, rows...)
	testdb.Insert(t, schema, ControlTable, rows...)
	for _, target := range targetsWithCell(schema, "eu") {
		model := categoryModels(target, rows)
		if len(model[3]) != 3 || len(model[5]) != 1 || model[5][0] == nil || model[7] != nil {
			t.Fatalf("seed: category 3 in %d scopes, 5 in %d: want 3 and 1 (scope 0), and no category 7", len(model[3]), len(model[5]))
		}
		for _, cat := range []Enum{{3, "ORGANIZATION_MEMBER_UPDATE"}, {5, "USER_UPDATE"}, {7, "PROJECT_UPDATE"}} {
			checkCategoryDepth(t, target, cat, model[int(cat.Value)])
		}
	}
}

// categoryModels counts rows per category and scope as target sees them.
func categoryModels(target Target, rows []testdb.Row) map[int]map[int64]*categoryModel {
	model := map[int]map[int64]*categoryModel{} // category → scope → counts
	for _, r := range rows {
		if target.Cell != "" && r.Cell != target.Cell {
			continue
		}
		if model[r.Category] == nil {
			model[r.Category] = map[int64]*categoryModel{}
		}
		m := model[r.Category][int64(r.Scope)]
		if m == nil {
			m = &categoryModel{shards: map[string]bool{}, objects: map[int64]bool{}, nextAttempt: r.ScheduledFor, oldest: r.DateAdded}
			model[r.Category][int64(r.Scope)] = m
		}
		m.pending++
		shard := fmt.Sprint(r.Shard)
		if target.Control() {
			shard = r.Cell + "/" + shard
		}
		m.shards[shard], m.objects[r.Object] = true, true
		if r.ScheduledFor.Before(m.nextAttempt) {
			m.nextAttempt = r.ScheduledFor
		}
		if r.DateAdded.Before(m.oldest) {
			m.oldest = r.DateAdded
		}
	}
	return model
}

// checkCategoryDepth runs the statement's variants for category cat against model.
func checkCategoryDepth(t *testing.T, target Target, cat Enum, model map[int64]*categoryModel) {
	t.Helper()
	var total int64
	for _, m := range model {
		total += m.pending
	}
	for _, tc := range []struct {
		name   string
		st     Statement
		capped int64 // rows the distinct counts may stop at; 0: exact
	}{
		{"capped at 10", categoryDepth(target, cat, 10), 10},
		{"capped at DistinctCap", CategoryDepth(target, cat), DistinctCap},
		{"capped above the category", categoryDepth(target, cat, 5000), 0},
		{"exact", CategoryDepthExact(target, cat), 0},
	} {
		name := target.Describe() + ", " + cat.Name + ", " + tc.name
		res, err := Run(context.Background(), testdb.Pool(t), tc.st)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.Rows) != len(model) {
			t.Fatalf("%s: %d scopes, model has %d", name, len(res.Rows), len(model))
		}
		var counted int64
		for i, r := range res.Rows {
			get := func(col string) any { return r[res.Col(col)] }
			m := model[get("shard_scope").(int64)]
			if m == nil {
				t.Fatalf("%s: row for scope %v, which the model does not have", name, get("shard_scope"))
			}
			if i > 0 && res.Rows[i-1][res.Col("pending")].(int64) < m.pending {
				t.Fatalf("%s: rows not ordered by pending, descending: %v", name, res.Rows)
			}
			shards, objects, of := get("shards").(int64), get("objects").(int64), get("distinct_rows").(int64)
			exact := get("distinct_exact").(bool)
			counted += of
			if get("pending").(int64) != m.pending || !get("next_attempt").(time.Time).Equal(m.nextAttempt) || !get("oldest_message").(time.Time).Equal(m.oldest) {
				t.Fatalf("%s: scope row %v, model pending %d next %v oldest %v", name, r, m.pending, m.nextAttempt, m.oldest)
			}
			if exact != (of == m.pending) {
				t.Fatalf("%s: distinct_exact=%v with distinct_rows %d of %d pending", name, exact, of, m.pending)
			}
			wantExact := tc.capped == 0
			if wantExact && (!exact || shards != int64(len(m.shards)) || objects != int64(len(m.objects))) {
				t.Fatalf("%s: shards %d objects %d exact %v, model %d and %d", name, shards, objects, exact, len(m.shards), len(m.objects))
			}
			if exact && (shards != int64(len(m.shards)) || objects != int64(len(m.objects))) {
				t.Fatalf("%s: distinct_exact but shards %d objects %d, model %d and %d", name, shards, objects, len(m.shards), len(m.objects))
			}
			if shards > int64(len(m.shards)) || objects > int64(len(m.objects)) || (of > 0) != (shards > 0) || objects > of {
				t.Fatalf("%s: shards %d objects %d over %d rows is no lower bound of %d and %d", name, shards, objects, of, len(m.shards), len(m.objects))
			}
		}
		if want := min(total, map[bool]int64{true: tc.capped, false: total}[tc.capped > 0]); counted != want {
			t.Fatalf("%s: distinct counts over %d rows in all, want %d", name, counted, want)
		}
	}
}
