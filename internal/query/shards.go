package query

import (
	"strconv"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// The statements of outboxctl shards and shards --stuck, in sql/shards.sql.

// ShardFilter narrows shard listings.
type ShardFilter struct {
	Scope    *Enum
	Category *Enum
	Shard    *int64
	Limit    int
	MinDepth int
	// Exact counts every coalesce group instead of stopping at GroupCap.
	Exact bool
	// Selected, when not nil, keeps only the shards it selects (the selector criteria the
	// listing's own filters do not say: --at-cap, --head-category, --added-*, --shards-from).
	Selected *ShardSelector
	// Floor, when above 0, is TopShards' kept form: only shards of at least Floor rows are
	// kept for the top (TopShardsFloor's answer; see TopShardsComplete). Not with Shard or
	// Selected, which the plain form takes.
	Floor int64
}

// OnePassRows is the depth up to which TopShards and StuckShards read a shard's coalesce
// groups and categories in one pass over its (…, category, object_identifier) index entries,
// in order, instead of one index probe per group or category. A probe (a descent of the
// 117 MB index of the bench data) costs about as much as reading 100 entries in order, so a
// shard of a few hundred rows in 100 groups is read in a tenth of the time by a pass; past
// this depth the probes are cheaper whatever the shard holds (the hot shard: 200,000 rows,
// 100 probes).
const OnePassRows = 2000

// shardListArgs binds what TopShards and StuckShards share and returns the fragments it
// turns on. Exact, coalesce_groups counts the distinct (category, object_identifier) of the
// shard; otherwise it stops at GroupCap: a shard of at most OnePassRows rows is read in one
// pass, a deeper one is walked on the (…, category, object_identifier) index, one probe per
// group, so the hot shard's few groups come out exact in a few probes, and a shard of many
// distinct objects says "at least GroupCap" without reading all of its rows.
func shardListArgs(t Target, f ShardFilter, args Args) ([]string, map[string]sqltemplate.Part) {
	var on []string
	regions := map[string]sqltemplate.Part{}
	if f.Selected != nil {
		sel := SelectedShards(t, *f.Selected, nil)
		regions["selected"], _ = sel.region() // on an error the region stays empty: Fill says so
		for k, v := range sel.Args {
			args[k] = v
		}
		on = append(on, "selected")
	}
	for name, e := range map[string]*Enum{"scope": f.Scope, "category": f.Category} {
		if e != nil {
			args[name] = Arg{Value: e.Value, Note: e.note()}
			on = append(on, name)
		}
	}
	if f.Shard != nil {
		args["shard"] = Arg{Value: *f.Shard}
		on = append(on, "shard")
	}
	if f.MinDepth > 0 {
		args["min_depth"] = Arg{Value: f.MinDepth}
		on = append(on, "min_depth")
	}
	args["limit"] = Arg{Value: limitOrDefault(f.Limit)}
	args["one_pass_rows"] = Arg{Value: OnePassRows, Note: "a shard of at most this many rows is read in one pass, a deeper one probed"}
	if !f.Exact {
		args["group_cap"] = Arg{Value: GroupCap, Note: "count at most this many groups"}
		on = append(on, "capped")
	}
	return on, regions
}

// EstimatedTotal reports whether TopShards' total_shards is the planner's estimate (not
// --exact, and none of --shard, --min-depth or a selector, whose listings count what they
// select): counting every shard costs the listing what the ten rows it prints do not need.
func (f ShardFilter) EstimatedTotal() bool {
	return !f.Exact && f.Shard == nil && f.Selected == nil && f.MinDepth == 0
}

// openKeyColumns are the shard key's columns f leaves open: the planner's estimate of the
// shards is the product of their distinct values.
func (t Target) openKeyColumns(f ShardFilter) []string {
	var cols []string
	if t.Control() && t.Cell == "" {
		cols = append(cols, t.CellColumnName())
	}
	if f.Scope == nil {
		cols = append(cols, "shard_scope")
	}
	return append(cols, "shard_identifier")
}

// Kept reports whether TopShards takes the kept form (f.Floor), which it does only without
// Shard and Selected.
func (f ShardFilter) Kept() bool {
	return f.Floor > 0 && f.Shard == nil && f.Selected == nil && !f.EstimatedTotal()
}

// TopShards answers "which shards are deepest?" (Sentry's get_shard_depths_descending) and
// adds, for the few shards it returns, the real work left (coalesce groups), the categories
// present, the next attempt and the oldest message. The count is one index-only pass, like the
// guide's template; the extra columns are read only for the top rows.
//
// total_shards is exact in both of its forms. The plain one counts every shard with a window
// over all of them (it buffers every shard: a fifth of the statement on a table of 150,000
// shards); the kept form (f.Kept) counts them in an aggregate beside the shards of at least
// f.Floor rows, and the top comes from those.
func TopShards(t Target, f ShardFilter) Statement {
	args := t.cellArgs()
	on, regions := shardListArgs(t, f, args)
	switch {
	case f.EstimatedTotal():
		on = append(on, "window", "estimated")
		args["table"] = Arg{Value: t.From()}
		args["key_columns"] = Arg{Value: t.openKeyColumns(f), Note: "the shard key's columns no filter fixes"}
		if f.Floor > 0 {
			args["min_depth"] = Arg{Value: f.Floor, Note: "at least --limit shards are this deep (top-shards-floor)"}
			on = append(on, "min_depth")
		}
	case f.Kept():
		args["floor"] = Arg{Value: f.Floor}
		on = append(on, "exact_total")
	default:
		on = append(on, "window", "exact_total")
	}
	depthOf := "rows"
	if f.Category != nil {
		depthOf = "rows of " + f.Category.Name
	}
	return siloStatement("top-shards", t, []string{
		"Deepest shards of " + t.Describe() + ", " + depthOf + " per shard.",
		"depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries",
		"actually left (Sentry delivers only the newest row of each group); next_attempt = earliest",
		"scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come",
		"from the lowest-id row, which Sentry locks and derives the next backoff step from; its",
		"date_added is the shard's oldest message. Only the top rows pay for these columns;",
		"coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).",
		totalDoc(f),
	}, regions, args, on...)
}

// totalDoc says how TopShards of f counts total_shards.
func totalDoc(f ShardFilter) string {
	if f.EstimatedTotal() {
		return "total_shards is the planner's estimate (total_exact false) unless fewer than the limit matched; --exact counts them."
	}
	return "total_shards = the shards matched, counted."
}

// StuckShards answers "which shards are in backoff?": shards whose every row is scheduled in
// the future, so Sentry's scheduler (scheduled_for <= now) does not pick them. Rows in the
// future exist only in shards Sentry has claimed (new rows are scheduled in 2016), so the
// candidates come from one index-only pass over the narrow (…, scheduled_for) index with
// scheduled_for > now(), and each candidate is confirmed by one probe for its earliest
// scheduled_for: a shard that also holds a fresh row is due, not stuck (the guide's template
// counts it as stuck). In a confirmed shard every row is in the future, so the candidate
// pass's count is already its depth.
func StuckShards(t Target, f ShardFilter) Statement {
	args := t.cellArgs()
	on, regions := shardListArgs(t, f, args)
	return siloStatement("stuck-shards", t, []string{
		"Shards of " + t.Describe() + " in backoff: every row is scheduled in the future, so",
		"Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.",
		"last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles",
		"it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).",
		"last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be",
		"draining right now: Sentry pushes the schedule forward before it processes.",
		"oldest_message = date_added of the lowest-id row (ids and date_added both grow with time).",
		"coalesce_groups is counted up to 100 (100 means at least; --exact counts all).",
	}, regions, args, on...)
}

// The kept form's floor (sql/shards.sql, top-shards-floor): a few shards of a small sample,
// each counted on the index up to a cap, say how deep the deepest shards are at least; the
// kept form then keeps only shards that deep for its top instead of buffering every shard.

// KeptShardsMax bounds what the kept form keeps: its floor is at least half of the cap,
// maxRows / KeptShardsMax, and no more than rows / floor shards can hold floor rows each.
const KeptShardsMax = 50_000

// maxRowsPerPage is more rows than a page of Sentry's outbox can hold: its smallest row
// (NULL payload, the control table's cell name aside) is a 32-byte header and 64 bytes of
// columns plus a 4-byte line pointer, 81 to an 8 kB page. The table's pages times this is a
// bound on its rows that no stale statistic can undercut (a table vacuumed while empty and
// then filled says 0 rows until it is analyzed again), so the kept form's bound holds.
const maxRowsPerPage = 100

// FloorSampleRows is about how many rows the floor's sample reads (~40 pages of Sentry's
// outbox): enough to see the deepest shards of a table whose depth is skewed, which is when
// the kept form gains; a flat table's floor comes out low and the plain form runs.
const FloorSampleRows = 2000

// FloorMaxLimit is the largest --limit the kept form serves: the floor counts 2 × limit
// shards of the sample.
const FloorMaxLimit = 50

// FloorSeed picks the floor's sample pages: the same pages every run, so the listing's form
// and timing repeat on an unchanged table.
const FloorSeed = 1

// FloorPlan is how TopShardsFloor looks for a floor.
type FloorPlan struct {
	Percent    float64 // of the table's pages sampled
	Candidates int     // the shards most seen in the sample, counted
	Cap        int64   // each counted up to this many rows
}

// PlanFloor is the floor's plan for a listing of f on a table of the given pages (its
// current size, TableStats.Pages); false when the listing takes the plain form: one shard,
// a selector, a limit above FloorMaxLimit, or --min-depth (the floor does not know it: a
// min_depth above every shard would keep nothing and the plain form would run after all).
func PlanFloor(f ShardFilter, pages int64) (FloorPlan, bool) {
	limit := limitOrDefault(f.Limit)
	if f.Shard != nil || f.Selected != nil || f.MinDepth > 0 || limit > FloorMaxLimit {
		return FloorPlan{}, false
	}
	rows := max(pages, 0) * maxRowsPerPage
	return FloorPlan{
		Percent:    SamplePercent(FloorSampleRows, rows),
		Candidates: 2 * limit,
		Cap:        max(2, (rows+KeptShardsMax-1)/KeptShardsMax),
	}, true
}

// Accept says whether floor (TopShardsFloor's; nil: the sample saw too few shards) is worth
// the kept form: 1 would keep every shard, and a floor below half the cap could keep more
// than 2 × KeptShardsMax (the arrays the kept form builds cannot spill to disk as the plain
// form's window can).
func (p FloorPlan) Accept(floor *int64) bool {
	return floor != nil && *floor >= 2 && *floor*2 >= p.Cap
}

// TopShardsFloor is the kept form's floor for f under plan p: the f.Limit-th largest row
// count among p.Candidates shards most seen in a sample of p.Percent of the table's pages,
// each counted up to p.Cap rows. At least f.Limit shards hold that many rows. seed picks the
// sample's pages.
func TopShardsFloor(t Target, f ShardFilter, p FloorPlan, seed int64) Statement {
	args, on := sampleArgs(t, ShardFilter{Scope: f.Scope, Category: f.Category, Limit: f.Limit}, p.Percent, seed)
	args["candidates"] = Arg{Value: p.Candidates, Note: "the shards most seen in the sample"}
	args["cap"] = Arg{Value: p.Cap, Note: "each counted up to this many rows"}
	return siloStatement("top-shards-floor", t, []string{
		"How deep the deepest shards of " + t.Describe() + " are at least: the shards most seen in a",
		"sample of " + strconv.FormatFloat(p.Percent, 'g', 4, 64) + "% of the table's pages, each counted on the index up to the cap.",
	}, nil, args, on...)
}

// TopShardsFloorRow is TopShardsFloor's row.
type TopShardsFloorRow struct {
	Floor *int64 `db:"floor" json:"floor"`
}

// TopShardsComplete says whether the kept form's n rows, of limit asked and total shards,
// are the listing: the kept were at least limit, or every shard. Otherwise (the table
// changed between the floor's count and the listing's, in another snapshot) the plain form
// answers; with no row at all the total is not known, and the plain form answers too.
func TopShardsComplete(n int, total int64, limit int) bool {
	return n == limitOrDefault(limit) || (n > 0 && int64(n) == total)
}
