package query

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// modelDrainPlan is drain-plan-categories computed from every row of shard k (the rows of the
// target's cell): per category its rows and distinct objects, each counted up to PlanCap with
// a flag when there are more; deepest first, then by category.
func modelDrainPlan(rows []modelRow, k ShardKey) [][]any {
	depth, objects := map[int32]int64{}, map[int32]map[int64]bool{}
	for _, r := range rows {
		if int(r.scope) != k.Scope.Value || r.shard != k.ID {
			continue
		}
		if objects[r.category] == nil {
			objects[r.category] = map[int64]bool{}
		}
		depth[r.category]++
		objects[r.category][r.object] = true
	}
	var out [][]any
	for c, n := range depth {
		g := int64(len(objects[c]))
		out = append(out, []any{c, min(n, PlanCap), n > PlanCap, min(g, PlanCap), g > PlanCap})
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i][1].(int64), out[j][1].(int64); a != b {
			return a > b
		}
		return out[i][0].(int32) < out[j][0].(int32)
	})
	return out
}

// TestDrainPlanCategoriesMatchesModel: the drain plan's bounded counts equal a model over every
// row (a plain SELECT), on categories below, at and past PlanCap in rows and in groups, beside
// another shard and, in the control silo, another cell's rows of the same shard.
func TestDrainPlanCategoriesMatchesModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	s := Ident(schema)
	// Shard 1's categories: 2 past the cap in rows and groups (a group a row), 3 exactly at
	// the cap in both, 8 past it in rows only (40 groups), 11 a few rows; shard 2 a category of
	// its own; the control table's cell "us" adds rows to shard 1 that cell "eu" must not count.
	shape := fmt.Sprintf(`SELECT 0, sh, cat, obj, now(), timestamptz '2016-08-01', now() CELL
  FROM (VALUES (1, 2, %[1]d, 0), (1, 3, %[2]d, 0), (1, 8, %[3]d, 40), (1, 11, 25, 3), (2, 12, 30, 2)) AS v(sh, cat, n, objs)
 CROSS JOIN LATERAL generate_series(1, v.n) AS i
 CROSS JOIN LATERAL (SELECT CASE WHEN v.objs = 0 THEN i ELSE i %% v.objs END AS obj) o`, PlanCap+37, PlanCap, PlanCap+2_000)
	for _, q := range []string{
		"INSERT INTO " + s + ".sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added) " + strings.Replace(shape, "CELL", "", 1),
		"INSERT INTO " + s + ".sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added, region_name) " + strings.Replace(shape, "CELL", ", 'eu'", 1),
		fmt.Sprintf("INSERT INTO %s.sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added, region_name) "+
			"SELECT 0, 1, 2 + i %% 3, i, now(), now(), now(), 'us' FROM generate_series(1, 500) i", s),
		fmt.Sprintf("ANALYZE %[1]s.sentry_regionoutbox; ANALYZE %[1]s.sentry_controloutbox", s),
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	for name, tgt := range map[string]Target{"cell": {Silo: SiloCell, Schema: schema}, "control-cell": {Silo: SiloControl, Schema: schema, Cell: "eu"}} {
		rows := allRows(t, tgt)
		for _, k := range []ShardKey{{Scope: orgScope, ID: 1}, {Scope: orgScope, ID: 2}, {Scope: orgScope, ID: 999}} {
			got, want := runBound(t, DrainPlanCategories(tgt, k)), modelDrainPlan(rows, k)
			if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				t.Fatalf("%s shard %d: drain-plan-categories\n got %v\nwant %v", name, k.ID, got, want)
			}
		}
	}
}
