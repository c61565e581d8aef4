package query

import "time"

// The statements of outboxctl depth, in sql/depth.sql.

// DepthRow is a row of Depth and DepthEstimate: category NULL is the whole table's row. An
// estimate's depth is NULL when the table was never analyzed.
type DepthRow struct {
	Category *int64 `db:"category" json:"category"`
	Depth    *int64 `db:"depth" json:"depth"`
	// Estimated is DepthEstimate's marker column (always true there; absent from Depth).
	Estimated *bool `db:"estimated,optional" json:"estimated,omitempty"`
	// StatisticsAnalyzedAt is DepthSplit's: when the statistics an estimated row comes from
	// were taken (null for a counted row; absent from Depth).
	StatisticsAnalyzedAt *time.Time `db:"statistics_analyzed_at,optional" json:"statistics_analyzed_at,omitempty"`
}

// Depth answers "how many rows wait in total, and of which categories?" (Sentry's
// get_category_depths and get_total_outbox_count in one pass): the row with a NULL category
// is the total.
func Depth(t Target) Statement {
	args := t.cellArgs()
	return sqlStatement("depth", []string{
		"Total depth of " + t.Describe() + " and depth per category.",
		"The first row (category NULL) is the total.",
	}, t.idents(), args, t.cellFragment()...)
}

// DepthEstimate answers the depth question from the planner's statistics alone, without
// reading the table: the total is pg_class.reltuples scaled to the table's current size (as
// the planner does), each category's depth is its frequency in pg_stats' most common values
// times that total. It is as fresh as the last ANALYZE (autovacuum's or a manual one), lists
// only categories common enough to be in the statistics, and ignores --cell. The names are
// looked up first (InitPlans), so pg_stats is read by index however many tables the
// database has.
func DepthEstimate(t Target) Statement {
	return sqlStatement("depth-estimate", []string{
		"Estimated depth of " + t.Describe() + " from the planner's statistics (no table read):",
		"as fresh as the last ANALYZE; only categories common enough to be in pg_stats are listed;",
		"the whole table, whatever --cell says. depth is NULL when the table was never analyzed.",
	}, nil, Args{"table": {Value: t.From()}})
}

// SmallTableRows is the size under which depth always counts every category exactly: the
// grouped pass over it costs a few milliseconds, less than planning the statistics' view.
const SmallTableRows = 100_000

// DepthTotal counts the total alone: Sentry's get_total_outbox_count.
func DepthTotal(t Target) Statement {
	return sqlStatement("depth-total", []string{
		"Total depth of " + t.Describe() + ", counted (Sentry's get_total_outbox_count).",
	}, t.idents(), t.cellArgs(), t.cellFragment()...)
}

// DepthSplit is the depth per category from the planner's statistics (pg_stats' most common
// categories) times total: the first row is the total, estimated when totalEstimated (else
// counted); every category's row is an estimate, with when the statistics were taken.
func DepthSplit(t Target, total int64, totalEstimated bool, analyzedAt *time.Time) Statement {
	var at any
	if analyzedAt != nil {
		at = *analyzedAt
	}
	how := "counted"
	if totalEstimated {
		how = "the planner's estimate"
	}
	return sqlStatement("depth-split", []string{
		"Depth per category of " + t.Describe() + " from the planner's statistics (pg_stats' most",
		"common categories) times the total (" + how + "): every category's row is an estimate.",
	}, nil, Args{
		"table":           {Value: t.From()},
		"total":           {Value: total, Note: "the total, " + how},
		"total_estimated": {Value: totalEstimated},
		"analyzed_at":     {Value: at, Note: "when the statistics were taken"},
	})
}
