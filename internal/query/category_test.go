package query

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// categoryModel is an independent count of one category's rows per scope.
type categoryModel struct {
	pending             int64
	shards, objects     map[int64]bool
	nextAttempt, oldest time.Time
}

// TestCategoryDepthAgainstModel checks inspect category's statement against counts made in Go
// over random rows: pending and the ages always equal the model's; the distinct counts equal
// it exactly when distinct_exact, and are otherwise a lower bound taken over the capped rows;
// with a cap above the category's size, and in the exact variant, every count is exact.
func TestCategoryDepthAgainstModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seedNow := time.Now().UTC().Truncate(time.Millisecond)
	var rows []testdb.Row
	model := map[int64]*categoryModel{}
	for i := range 120 {
		r := testdb.Row{Scope: rng.Intn(3), Shard: int64(rng.Intn(8)), Category: []int{3, 3, 3, 2}[rng.Intn(4)], Object: int64(rng.Intn(15)),
			ScheduledFrom: seedNow, ScheduledFor: seedNow.Add(time.Duration(rng.Intn(1000)) * time.Second),
			DateAdded: seedNow.Add(-time.Duration(i) * time.Second)}
		rows = append(rows, r)
		if r.Category != 3 {
			continue
		}
		m := model[int64(r.Scope)]
		if m == nil {
			m = &categoryModel{shards: map[int64]bool{}, objects: map[int64]bool{}, nextAttempt: r.ScheduledFor, oldest: r.DateAdded}
			model[int64(r.Scope)] = m
		}
		m.pending++
		m.shards[r.Shard], m.objects[r.Object] = true, true
		if r.ScheduledFor.Before(m.nextAttempt) {
			m.nextAttempt = r.ScheduledFor
		}
		if r.DateAdded.Before(m.oldest) {
			m.oldest = r.DateAdded
		}
	}
	testdb.Insert(t, schema, CellTable, rows...)
	target := Target{Silo: SiloCell, Schema: schema}
	cat := Enum{3, "ORGANIZATION_MEMBER_UPDATE"}
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
		{"capped above the category", categoryDepth(target, cat, 1000), 0},
		{"exact", CategoryDepthExact(target, cat), 0},
	} {
		res, err := Run(context.Background(), testdb.Pool(t), tc.st)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(res.Rows) != len(model) {
			t.Fatalf("%s: %d scopes, model has %d", tc.name, len(res.Rows), len(model))
		}
		var counted int64
		for _, r := range res.Rows {
			get := func(col string) any { return r[res.Col(col)] }
			m := model[get("shard_scope").(int64)]
			shards, objects, of := get("shards").(int64), get("objects").(int64), get("distinct_rows").(int64)
			exact := get("distinct_exact").(bool)
			counted += of
			if get("pending").(int64) != m.pending || !get("next_attempt").(time.Time).Equal(m.nextAttempt) || !get("oldest_message").(time.Time).Equal(m.oldest) {
				t.Fatalf("%s: scope row %v, model pending %d next %v oldest %v", tc.name, r, m.pending, m.nextAttempt, m.oldest)
			}
			if exact != (of == m.pending) {
				t.Fatalf("%s: distinct_exact=%v with distinct_rows %d of %d pending", tc.name, exact, of, m.pending)
			}
			wantExact := tc.capped == 0
			if wantExact && (!exact || shards != int64(len(m.shards)) || objects != int64(len(m.objects))) {
				t.Fatalf("%s: shards %d objects %d exact %v, model %d and %d", tc.name, shards, objects, exact, len(m.shards), len(m.objects))
			}
			if exact && (shards != int64(len(m.shards)) || objects != int64(len(m.objects))) {
				t.Fatalf("%s: distinct_exact but shards %d objects %d, model %d and %d", tc.name, shards, objects, len(m.shards), len(m.objects))
			}
			if shards > int64(len(m.shards)) || objects > int64(len(m.objects)) || (of > 0) != (shards > 0) || objects > of {
				t.Fatalf("%s: shards %d objects %d over %d rows is no lower bound of %d and %d", tc.name, shards, objects, of, len(m.shards), len(m.objects))
			}
		}
		if want := min(total, map[bool]int64{true: tc.capped, false: total}[tc.capped > 0]); counted != want {
			t.Fatalf("%s: distinct counts over %d rows in all, want %d", tc.name, counted, want)
		}
	}
}
