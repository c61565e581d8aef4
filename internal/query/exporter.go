package query

import "time"

// The statements of outboxctl exporter and outboxctl metrics that no read command has, in
// sql/exporter.sql. The tiers also run DepthEstimate, DoctorUnclaimed and TopShards.

// OldestRowRow is the row of OldestRow (none when the table is empty).
type OldestRowRow struct {
	ID         int64     `db:"id"`
	DateAdded  time.Time `db:"date_added"`
	AgeSeconds float64   `db:"age_seconds"`
}

// OldestRow reads the oldest row of t in primary-key order: it stops at the first live
// entry of the index (its cost tracks the dead entries vacuum has not removed at the head,
// not the backlog), the cheap tier's age signal, as Sentry's own backlog metrics read it.
func OldestRow(t Target) Statement {
	return sqlStatement("exporter-oldest-row", []string{
		"The oldest row of " + t.Describe() + " (lowest id) and its age in seconds.",
	}, t.idents(), t.cellArgs(), t.cellFragment()...)
}

// ExactDepthRow is one row of ExactDepth: cell is "" in the cell silo.
type ExactDepthRow struct {
	Cell     string `db:"cell"`
	Scope    int64  `db:"shard_scope"`
	Category int64  `db:"category"`
	Depth    int64  `db:"depth"`
}

// ExactDepth counts the rows of t per cell, scope and category (the expensive tier): one
// plain GROUP BY, a parallel scan like depth's; the rows sum to count(*).
func ExactDepth(t Target) Statement {
	return sqlStatement("exporter-depth", []string{
		"Rows of " + t.Describe() + " per cell, scope and category.",
	}, t.idents(), t.cellArgs(), t.controlAndCell()...)
}

// ShardStatesRow is one row of ShardStates: the shards in backoff of one cell and scope,
// and how many of them are at the backoff cap.
type ShardStatesRow struct {
	Cell  string `db:"cell"`
	Scope int64  `db:"shard_scope"`
	Stuck int64  `db:"stuck"`
	AtCap int64  `db:"at_cap"`
}

// ShardStates counts the shards of t in backoff (every row scheduled in the future, as
// StuckShards) and those whose head row's delay reached the cap (as DoctorCappedShards),
// per cell and scope: the candidates are one index-only pass over the (…, scheduled_for)
// index, each confirmed by two probes.
func ShardStates(t Target) Statement {
	args := t.cellArgs()
	args["cap"] = Arg{Value: BackoffCapSeconds, Note: "seconds: Sentry's backoff cap"}
	return sqlStatement("exporter-shard-states", []string{
		"Shards of " + t.Describe() + " in backoff, and at Sentry's 1 h backoff cap, per cell and scope.",
	}, t.idents(), args, t.controlAndCell()...)
}

// TopShardRow is what the exporter reads of a row of TopShards.
type TopShardRow struct {
	Depth            int64    `db:"depth"`
	CoalesceGroups   int64    `db:"coalesce_groups"`
	LastDelaySeconds *float64 `db:"last_delay_seconds"` // null: never attempted
	Due              bool     `db:"due"`
}
