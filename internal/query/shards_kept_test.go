package query

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TopShards' kept form and its floor (TopShardsFloor) against a model of the reference's
// get_shard_depths_descending: every shard's depth counted in Go from every row. The shape is
// seedShards': nine shards of 300 to 2,600 rows and 120 of 1 to 3 rows (40 of each, so the
// 20th deepest ties with 30 others), more shards than any floor's candidates, in both silos.

// keyDepth is a shard of the model: its key and its depth under a filter.
type keyDepth struct {
	cell  string
	scope int32
	id    int64
	depth int64
}

// modelDepths is every shard's depth under f's scope, category and min_depth, deepest first,
// then by key, as the listing orders them.
func modelDepths(rows []modelRow, f ShardFilter) []keyDepth {
	byKey := map[keyDepth]int64{}
	for _, r := range rows {
		if (f.Scope != nil && int(r.scope) != f.Scope.Value) || (f.Category != nil && int(r.category) != f.Category.Value) {
			continue
		}
		byKey[keyDepth{cell: r.cell, scope: r.scope, id: r.shard}]++
	}
	var out []keyDepth
	for k, n := range byKey {
		if n >= int64(f.MinDepth) {
			k.depth = n
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.depth != b.depth {
			return a.depth > b.depth
		}
		if a.cell != b.cell {
			return a.cell < b.cell
		}
		if a.scope != b.scope {
			return a.scope < b.scope
		}
		return a.id < b.id
	})
	return out
}

// keptRows runs st (a TopShards) and returns its shards as the model writes them, and the
// total_shards of its first row (-1 without rows).
func keptRows(t *testing.T, tgt Target, st Statement) ([]keyDepth, int64) {
	t.Helper()
	res, err := Run(context.Background(), testdb.Pool(t), st)
	if err != nil {
		t.Fatalf("%s: %v", st.Name, err)
	}
	rows, err := Rows[TopShardsRow](res)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(-1)
	var out []keyDepth
	for _, r := range rows {
		k := keyDepth{scope: int32(r.ShardScope), id: r.ShardIdentifier, depth: r.Depth}
		if tgt.Control() {
			k.cell = *r.RegionName
		}
		out = append(out, k)
		total = r.TotalShards
	}
	return out, total
}

func TestTopShardsKeptFormMatchesModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedShards(t, schema)
	filters := map[string]ShardFilter{
		"default":              {},
		"limit 1":              {Limit: 1},
		"limit 3":              {Limit: 3},
		"limit 9":              {Limit: 9},
		"limit 50":             {Limit: 50},
		"scope":                {Scope: &Enum{1, "S1"}, Limit: 5},
		"category":             {Category: &Enum{3, "C3"}, Limit: 5},
		"min_depth":            {MinDepth: 3, Limit: 40},
		"scope, min_depth":     {Scope: &Enum{0, "S0"}, MinDepth: 500, Limit: 10},
		"category, absent":     {Category: &Enum{99, "C99"}},
		"min_depth, above all": {MinDepth: 5000},
	}
	complete, incomplete := 0, 0
	for tname, tgt := range targetsWithCell(schema, "eu") {
		rows := allRows(t, tgt)
		for fname, f := range filters {
			all := modelDepths(rows, f)
			limit := limitOrDefault(f.Limit)
			want := all[:min(limit, len(all))]
			nth := int64(0) // the limit-th depth: every floor up to it keeps the top
			if len(all) >= limit {
				nth = all[limit-1].depth
			}
			// Every floor, from keeping all to keeping none, says complete exactly when the kept
			// were enough, and then lists the model's top and total.
			for _, floor := range []int64{1, 2, 3, 4, max(nth, 1), nth + 1, 2001, 1_000_000_000} {
				g := f
				g.Floor, g.Exact = floor, true // --exact: the kept form counts every shard
				got, total := keptRows(t, tgt, TopShards(tgt, g))
				kept := 0
				for _, s := range all {
					if s.depth >= floor {
						kept++
					}
				}
				wantComplete := kept >= limit || (kept > 0 && kept == len(all))
				if ok := TopShardsComplete(len(got), total, f.Limit); ok != wantComplete {
					t.Fatalf("%s, %s, floor %d: complete %v with %d rows of %d, want %v (%d kept of %d)", tname, fname, floor, ok, len(got), total, wantComplete, kept, len(all))
				}
				if !wantComplete {
					incomplete++
					continue
				}
				complete++
				if !reflect.DeepEqual(got, want) || total != int64(len(all)) {
					t.Fatalf("%s, %s, floor %d: kept form\n got %v (of %d)\nwant %v (of %d)", tname, fname, floor, got, total, want, len(all))
				}
				if floor <= nth && len(got) != limit {
					t.Fatalf("%s, %s, floor %d at most the %d-th depth %d: %d rows", tname, fname, floor, limit, nth, len(got))
				}
			}
			// The floor itself: a count, never above the limit-th depth (min_depth aside: the floor
			// does not take it, and the kept form needs no floor past it). Sampling every page, it
			// is exactly the limit-th depth capped.
			unfiltered := f
			unfiltered.MinDepth = 0
			nth = 0
			if all := modelDepths(rows, unfiltered); len(all) >= limit {
				nth = all[limit-1].depth
			}
			if _, ok := PlanFloor(f, int64(len(rows))/50); ok != (f.MinDepth == 0) {
				t.Fatalf("%s, %s: floor planned %v", tname, fname, ok)
			}
			for _, p := range []FloorPlan{
				{Percent: 100, Candidates: 2 * limit, Cap: 1_000_000},
				{Percent: 100, Candidates: 2 * limit, Cap: 3},
				{Percent: 12.5, Candidates: 2 * limit, Cap: 500},
				{Percent: 1, Candidates: limit, Cap: 2},
			} {
				for seed := int64(1); seed <= 3; seed++ {
					floor := runFloor(t, tgt, f, p, seed)
					if floor != nil && *floor > nth {
						t.Fatalf("%s, %s, %+v seed %d: floor %d above the %d-th depth %d", tname, fname, p, seed, *floor, limit, nth)
					}
					if p.Percent == 100 {
						if w := min(nth, p.Cap); (w == 0) != (floor == nil) || (floor != nil && *floor != w) {
							t.Fatalf("%s, %s, %+v: floor %v, want %d (0: none)", tname, fname, p, floor, w)
						}
					}
				}
			}
		}
	}
	if complete < 60 || incomplete < 30 {
		t.Fatalf("complete %d, incomplete %d: the floors must exercise both", complete, incomplete)
	}
}

// runFloor runs TopShardsFloor and returns its floor.
func runFloor(t *testing.T, tgt Target, f ShardFilter, p FloorPlan, seed int64) *int64 {
	t.Helper()
	res, err := Run(context.Background(), testdb.Pool(t), TopShardsFloor(tgt, f, p, seed))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Rows[TopShardsFloorRow](res)
	if err != nil || len(rows) != 1 {
		t.Fatalf("floor: %d rows, %v", len(rows), err)
	}
	return rows[0].Floor
}

// TestPlanFloor: the floor's plan and what it accepts, at the sizes the bench and an
// incident see.
func TestPlanFloor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		f     ShardFilter
		pages int64
		want  FloorPlan
		ok    bool
	}{
		// The bench's 2M set: 34,483 pages, so at most 3,448,300 rows.
		{ShardFilter{}, 34_483, FloorPlan{Percent: 0.05, Candidates: 2 * DefaultLimit, Cap: 69}, true},
		{ShardFilter{Limit: 10}, 344_830, FloorPlan{Percent: 0.01, Candidates: 20, Cap: 690}, true},
		{ShardFilter{Limit: 50}, 10, FloorPlan{Percent: 100, Candidates: 100, Cap: 2}, true},
		{ShardFilter{Limit: 10}, 0, FloorPlan{Percent: 100, Candidates: 20, Cap: 2}, true},
		{ShardFilter{Limit: 51}, 34_483, FloorPlan{}, false},
		{ShardFilter{Shard: i64(1)}, 34_483, FloorPlan{}, false},
		{ShardFilter{MinDepth: 2}, 34_483, FloorPlan{}, false},
		{ShardFilter{Selected: &ShardSelector{AtCap: true}}, 34_483, FloorPlan{}, false},
	} {
		got, ok := PlanFloor(tt.f, tt.pages)
		if got != tt.want || ok != tt.ok {
			t.Errorf("PlanFloor(%+v, %d) = %+v, %v, want %+v, %v", tt.f, tt.pages, got, ok, tt.want, tt.ok)
		}
	}
	p := FloorPlan{Cap: 40}
	for floor, want := range map[int64]bool{1: false, 2: false, 19: false, 20: true, 40: true} {
		if got := p.Accept(&floor); got != want {
			t.Errorf("Accept(%d) with cap 40 = %v, want %v", floor, got, want)
		}
	}
	if (FloorPlan{Cap: 2}).Accept(nil) || !(FloorPlan{Cap: 2}).Accept(i64(2)) {
		t.Error("Accept: nil accepted, or 2 refused with cap 2")
	}
	if fmt.Sprint(TopShardsComplete(0, 0, 10), TopShardsComplete(3, 3, 10), TopShardsComplete(3, 4, 10), TopShardsComplete(10, 99, 10)) != "false true false true" {
		t.Error("TopShardsComplete")
	}
}

// TestTopShardsEstimatedTotalMatchesModel: without --exact the listing is the model's top at
// every floor up to the limit-th depth (the floor is its HAVING), its total_shards the
// planner's estimate (total_exact false, never below the rows listed) when the limit was
// reached, and the count of the rows listed (total_exact true) when fewer matched.
func TestTopShardsEstimatedTotalMatchesModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedShards(t, schema)
	if _, err := testdb.Pool(t).Exec(context.Background(), "ANALYZE "+Ident(schema)+".sentry_regionoutbox, "+Ident(schema)+".sentry_controloutbox"); err != nil {
		t.Fatal(err)
	}
	filters := map[string]ShardFilter{
		"default": {}, "limit 1": {Limit: 1}, "limit 9": {Limit: 9}, "limit 50": {Limit: 50},
		"scope": {Scope: &Enum{1, "S1"}, Limit: 5}, "category": {Category: &Enum{3, "C3"}, Limit: 5},
		"category, absent": {Category: &Enum{99, "C99"}}, "limit 1000": {Limit: 1000},
	}
	for tname, tgt := range targetsWithCell(schema, "eu") {
		rows := allRows(t, tgt)
		for fname, f := range filters {
			all := modelDepths(rows, f)
			limit := limitOrDefault(f.Limit)
			want := all[:min(limit, len(all))]
			nth := int64(0)
			if len(all) >= limit {
				nth = all[limit-1].depth
			}
			for _, floor := range []int64{0, 1, max(nth, 1)} {
				g := f
				g.Floor = floor
				if !g.EstimatedTotal() || g.Kept() {
					t.Fatalf("%s: not the estimated form", fname)
				}
				res, err := Run(context.Background(), testdb.Pool(t), TopShards(tgt, g))
				if err != nil {
					t.Fatal(err)
				}
				typed, err := Rows[TopShardsRow](res)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := keptRows(t, tgt, TopShards(tgt, g))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %s, floor %d: estimated form\n got %v\nwant %v", tname, fname, floor, got, want)
				}
				for _, r := range typed {
					exact := len(typed) < limit
					if r.TotalExact != exact || (exact && r.TotalShards != int64(len(typed))) || r.TotalShards < int64(len(typed)) {
						t.Fatalf("%s, %s, floor %d: total_shards %d (exact %v) with %d rows of limit %d", tname, fname, floor, r.TotalShards, r.TotalExact, len(typed), limit)
					}
				}
			}
		}
	}
}
