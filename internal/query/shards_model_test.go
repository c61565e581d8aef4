package query

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TopShards and StuckShards are proven equal to a model: Go computations over every row of
// the table. The shapes straddle both of their limits: shards deeper and shallower than
// OnePassRows (2,000 and 2,001 rows among them, the edge), with more and fewer coalesce
// groups than GroupCap, all in backoff, all due and mixed, and 120 small shards, so that
// total_shards and the LIMIT are exercised; in both silos, the control one per cell and with
// --cell.

// seedShards fills both tables of schema with the shapes above (repeatable: setseed).
func seedShards(t *testing.T, schema string) {
	t.Helper()
	s := Ident(schema)
	// sh: the cell (control only), scope, id, rows, categories and objects to draw from, and
	// the share of rows scheduled in the future (1: the shard is backing off).
	const shards = `(VALUES ('us', 0, 1, 2600, 7, 36, 1.0), ('us', 0, 2, 2300, 2, 20, 1.0), ('us', 0, 3, 1900, 7, 36, 1.0),
	        ('us', 0, 4, 400, 3, 10, 1.0), ('us', 0, 5, 2100, 7, 36, 0.5), ('eu', 0, 6, 800, 7, 36, 0.0),
	        ('eu', 0, 7, 2000, 7, 36, 1.0), ('eu', 0, 8, 2001, 7, 36, 1.0), ('eu', 0, 1, 300, 2, 5, 1.0))`
	steps := []string{
		"SELECT setseed(0.17)",
		fmt.Sprintf(`INSERT INTO %[1]s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT sh.scope, sh.id + CASE WHEN sh.cell = 'eu' AND sh.id = 1 THEN 100 ELSE 0 END,
       (ARRAY[2, 3, 8, 11, 12, 26, 45])[1 + floor(random() * sh.cats)::int], floor(random() * sh.objects)::bigint,
       NULL, now() - interval '1 hour' - i * interval '1 second',
       CASE WHEN random() < sh.future THEN now() + interval '1 day' + i * interval '1 second' ELSE now() - interval '1 day' + i * interval '1 second' END,
       timestamptz '2026-01-01' + random() * interval '1 day'
  FROM %[2]s AS sh(cell, scope, id, n, cats, objects, future)
 CROSS JOIN LATERAL generate_series(1, sh.n) AS i`, s, shards),
		fmt.Sprintf(`INSERT INTO %[1]s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 1, sh, 5, floor(random() * 3)::bigint, NULL, now() - interval '1 hour',
       CASE WHEN sh %% 2 = 0 THEN now() + interval '2 days' ELSE now() - interval '2 days' END,
       timestamptz '2026-02-01' + random() * interval '1 day'
  FROM generate_series(1, 120) AS sh
 CROSS JOIN LATERAL generate_series(1, 1 + sh %% 3) AS i`, s),
		fmt.Sprintf(`INSERT INTO %[1]s.sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, region_name, date_added)
SELECT sh.scope, sh.id, (ARRAY[0, 27, 43, 1, 2, 3, 4])[1 + floor(random() * sh.cats)::int], floor(random() * sh.objects)::bigint,
       NULL, now() - interval '1 hour' - i * interval '1 second',
       CASE WHEN random() < sh.future THEN now() + interval '1 day' + i * interval '1 second' ELSE now() - interval '1 day' + i * interval '1 second' END,
       sh.cell, timestamptz '2026-01-01' + random() * interval '1 day'
  FROM %[2]s AS sh(cell, scope, id, n, cats, objects, future)
 CROSS JOIN LATERAL generate_series(1, sh.n) AS i`, s, shards),
		fmt.Sprintf("ANALYZE %[1]s.sentry_regionoutbox; ANALYZE %[1]s.sentry_controloutbox", s),
	}
	for _, q := range steps {
		if _, err := testdb.Pool(t).Exec(context.Background(), q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

// shardModel is one shard as the model sees it.
type shardModel struct {
	cell         string
	scope        int32
	id           int64
	rows         []modelRow // in id order
	matching     int64      // rows of the filter's category (all rows without one)
	groups       map[[2]int64]bool
	categories   map[int32]bool
	nextAttempt  time.Time
	allScheduled bool // every row scheduled in the future
}

// modelShards groups rows per shard; category, when set, is the filter's category.
func modelShards(rows []modelRow, category *int32, now time.Time) []*shardModel {
	byKey := map[string]*shardModel{}
	var out []*shardModel
	for _, r := range rows {
		key := fmt.Sprintf("%s/%d/%d", r.cell, r.scope, r.shard)
		m := byKey[key]
		if m == nil {
			m = &shardModel{cell: r.cell, scope: r.scope, id: r.shard, groups: map[[2]int64]bool{}, categories: map[int32]bool{},
				nextAttempt: r.scheduled, allScheduled: true}
			byKey[key] = m
			out = append(out, m)
		}
		m.rows = append(m.rows, r)
		if r.scheduled.Before(m.nextAttempt) {
			m.nextAttempt = r.scheduled
		}
		if !r.scheduled.After(now) {
			m.allScheduled = false
		}
		if category == nil || r.category == *category {
			m.matching++
			m.groups[[2]int64{int64(r.category), r.object}] = true
			m.categories[r.category] = true
		}
	}
	return out
}

// modelRowOf is a shard's output row, as the named columns' text.
func modelRowOf(tgt Target, m *shardModel, depth int64, exact bool, due bool, total int) map[string]string {
	groups := int64(len(m.groups))
	if !exact {
		groups = min(groups, GroupCap)
	}
	var cats []int
	for c := range m.categories {
		cats = append(cats, int(c))
	}
	sort.Ints(cats)
	head := m.rows[0]
	row := map[string]string{
		"shard_scope": fmt.Sprint(m.scope), "shard_identifier": fmt.Sprint(m.id), "depth": fmt.Sprint(depth),
		"coalesce_groups": fmt.Sprint(groups), "categories": fmt.Sprint(cats),
		"next_attempt": text(m.nextAttempt), "last_delay_seconds": text(lastDelay(head.from, head.scheduled)),
		"last_attempt": text(head.from), "oldest_message": text(head.added), "total_shards": fmt.Sprint(total),
	}
	if due {
		row["due"] = fmt.Sprint(!m.nextAttempt.After(time.Now()))
	}
	if tgt.Control() {
		row[tgt.CellColumnName()] = m.cell
	}
	return row
}

// text renders a value the same way for the model and the database.
func text(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		return fmt.Sprintf("%.6f", math.Round(x*1e6)/1e6)
	case []any:
		ints := make([]int, 0, len(x))
		for _, e := range x {
			ints = append(ints, mustInt(fmt.Sprint(e)))
		}
		return fmt.Sprint(ints)
	default:
		return fmt.Sprint(v)
	}
}

func mustInt(s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		panic(s)
	}
	return n
}

// order sorts the model's shards as the statements do: depth descending, then the key.
func order(ms []*shardModel, depth func(*shardModel) int64) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if depth(a) != depth(b) {
			return depth(a) > depth(b)
		}
		if a.cell != b.cell {
			return a.cell < b.cell
		}
		if a.scope != b.scope {
			return a.scope < b.scope
		}
		return a.id < b.id
	})
}

func modelTopShards(tgt Target, rows []modelRow, f ShardFilter) []map[string]string {
	var cat *int32
	if f.Category != nil {
		c := int32(f.Category.Value)
		cat = &c
	}
	var ms []*shardModel
	for _, m := range modelShards(rows, cat, time.Now()) {
		if m.matching > 0 && m.matching >= int64(f.MinDepth) {
			ms = append(ms, m)
		}
	}
	order(ms, func(m *shardModel) int64 { return m.matching })
	var out []map[string]string
	for _, m := range ms[:min(len(ms), limitOrDefault(f.Limit))] {
		row := modelRowOf(tgt, m, m.matching, f.Exact, true, len(ms))
		row["total_exact"] = "true"
		if f.EstimatedTotal() && len(ms) >= limitOrDefault(f.Limit) {
			// The planner's estimate: TestTopShardsEstimatedTotalMatchesModel checks it.
			delete(row, "total_shards")
			row["total_exact"] = "false"
		}
		out = append(out, row)
	}
	return out
}

func modelStuckShards(tgt Target, rows []modelRow, f ShardFilter, now time.Time) []map[string]string {
	var ms []*shardModel
	for _, m := range modelShards(rows, nil, now) {
		hasCategory := f.Category == nil
		for _, r := range m.rows {
			hasCategory = hasCategory || int(r.category) == f.Category.Value
		}
		if m.allScheduled && hasCategory && len(m.rows) >= f.MinDepth {
			ms = append(ms, m)
		}
	}
	depth := func(m *shardModel) int64 { return int64(len(m.rows)) }
	order(ms, depth)
	var out []map[string]string
	for _, m := range ms[:min(len(ms), limitOrDefault(f.Limit))] {
		out = append(out, modelRowOf(tgt, m, depth(m), f.Exact, false, len(ms)))
	}
	return out
}

// gotRows runs st and keeps the columns the model computes, as text.
func gotRows(t *testing.T, st Statement, want []map[string]string) []map[string]string {
	t.Helper()
	res, err := Run(context.Background(), testdb.Pool(t), st)
	if err != nil {
		t.Fatalf("%s: %v", st.Name, err)
	}
	var out []map[string]string
	for _, r := range res.Rows {
		row := map[string]string{}
		for i, c := range res.Columns {
			if len(want) == 0 || want[0][c] != "" {
				row[c] = text(r[i])
			}
		}
		out = append(out, row)
	}
	return out
}

func TestShardListingsMatchModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedShards(t, schema)
	targets := targetsWithCell(schema, "eu")
	filters := map[string]ShardFilter{
		"default":           {},
		"limit 3":           {Limit: 3},
		"limit 500":         {Limit: 500},
		"exact":             {Exact: true, Limit: 50},
		"category":          {Category: &Enum{3, "C3"}, Limit: 50},
		"category, exact":   {Category: &Enum{3, "C3"}, Exact: true, Limit: 50},
		"category, absent":  {Category: &Enum{99, "C99"}},
		"category, limit 1": {Category: &Enum{2, "C2"}, Limit: 1},
		// --min-depth N keeps a shard of exactly N rows: eu's shard 7 holds 2,000, in backoff;
		// the small shards of scope 1 hold 1 to 3.
		"min depth 2000": {MinDepth: 2000, Limit: 50},
		"min depth 3":    {MinDepth: 3, Limit: 500},
	}
	onePass, probed := 0, 0
	for tname, tgt := range targets {
		rows := allRows(t, tgt)
		for fname, f := range filters {
			now := time.Now()
			want := modelTopShards(tgt, rows, f)
			if got := gotRows(t, TopShards(tgt, f), want); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %s: top-shards\n got %v\nwant %v", tname, fname, got, want)
			}
			for _, w := range want {
				if d := mustInt(w["depth"]); d <= OnePassRows {
					onePass++
				} else {
					probed++
				}
			}
			if f.Category != nil && f.Category.Value == 2 {
				continue // stuck-shards' category filter is an EXISTS: covered by "category"
			}
			want = modelStuckShards(tgt, rows, f, now)
			got := gotRows(t, StuckShards(tgt, f), want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %s: stuck-shards\n got %v\nwant %v", tname, fname, got, want)
			}
			if f.Category == nil || f.Category.Value != 99 {
				if len(want) == 0 {
					t.Fatalf("%s, %s: no shard backing off: the shape proves nothing", tname, fname)
				}
			}
		}
	}
	if onePass < 20 || probed < 20 {
		t.Fatalf("rows read in one pass %d, probed %d: the shape must exercise both", onePass, probed)
	}
}

// lastDelay is the reference's backoff step of a head row: scheduled_for - scheduled_from
// in seconds, or NULL for a row never attempted (written with scheduled_for, THE_PAST,
// before scheduled_from: no step at all).
func lastDelay(from, scheduled time.Time) any {
	if scheduled.Before(from) {
		return nil
	}
	return scheduled.Sub(from).Seconds()
}
