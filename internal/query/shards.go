package query

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
func shardListArgs(t Target, f ShardFilter, args Args) ([]string, map[string]string) {
	on, idents := t.controlAndCell(), t.idents()
	if f.Selected != nil {
		sel := SelectedShards(t, *f.Selected, nil)
		idents["selected"] = sel.Text
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
	return on, idents
}

// TopShards answers "which shards are deepest?" (Sentry's get_shard_depths_descending) and
// adds, for the few shards it returns, the real work left (coalesce groups), the categories
// present, the next attempt and the oldest message. The count is one index-only pass, like the
// guide's template; the extra columns are read only for the top rows.
func TopShards(t Target, f ShardFilter) Statement {
	args := t.cellArgs()
	on, idents := shardListArgs(t, f, args)
	depthOf := "rows"
	if f.Category != nil {
		depthOf = "rows of " + f.Category.Name
	}
	return sqlStatement("top-shards", []string{
		"Deepest shards of " + t.Describe() + ", " + depthOf + " per shard.",
		"depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries",
		"actually left (Sentry delivers only the newest row of each group); next_attempt = earliest",
		"scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come",
		"from the lowest-id row, which Sentry locks and derives the next backoff step from; its",
		"date_added is the shard's oldest message. Only the top rows pay for these columns;",
		"coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).",
	}, idents, args, on...)
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
	on, idents := shardListArgs(t, f, args)
	return sqlStatement("stuck-shards", []string{
		"Shards of " + t.Describe() + " in backoff: every row is scheduled in the future, so",
		"Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.",
		"last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles",
		"it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).",
		"last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be",
		"draining right now: Sentry pushes the schedule forward before it processes.",
		"oldest_message = date_added of the lowest-id row (ids and date_added both grow with time).",
		"coalesce_groups is counted up to 100 (100 means at least; --exact counts all).",
	}, idents, args, on...)
}
