package query

import (
	"fmt"
	"time"
)

// The statements of inspect category, in sql/category.sql.

// DistinctCap is how many rows of a category CategoryDepth counts distinct shards and
// objects over: a count over more rows would be a sort of all of them, which PostgreSQL
// cannot run in parallel (6× the guide's count on 2,000,000 rows).
const DistinctCap = 1000

// CategoryDepth answers "how many rows of this category are pending?", per scope: rows
// written under an older scope mapping (API_TOKEN_UPDATE was in USER_SCOPE until 2025) show
// as their own line instead of hiding. pending, next_attempt and oldest_message are one
// parallel pass, as the guide's count is, and a plain aggregate: it also keeps the lowest and
// highest scope, and only when they differ (rows of an older mapping) is the category read a
// second time, grouped by scope. Grouping every pass by scope cost 10–15% over the guide's
// count for the one line nearly every category has. shards and objects are counted over the
// first DistinctCap rows of the category, which the scan reaches early, so they are exact
// when distinct_exact (the scope has no more rows than that) and a lower bound otherwise.
func CategoryDepth(t Target, c Enum) Statement { return categoryDepth(t, c, DistinctCap) }

// CategoryDepthExact is CategoryDepth with exact distinct counts: two sorts of every row of
// the category, not parallel.
func CategoryDepthExact(t Target, c Enum) Statement { return categoryDepth(t, c, 0) }

// categoryDepth is CategoryDepth counting distinct values over at most limit rows (0: all).
func categoryDepth(t Target, c Enum, limit int) Statement {
	args := t.cellArgs()
	args["category"] = Arg{Value: c.Value, Note: c.Name}
	on := t.controlAndCell()
	if limit <= 0 {
		st := sqlStatement("category-depth-exact", categoryDoc(t, c), t.idents(), args, on...)
		// One question, two ways to count: the printed header and errors name the question.
		st.Name = "category-depth"
		return st
	}
	args["distinct_cap"] = Arg{Value: limit, Note: "count distinct shards and objects over at most this many rows"}
	doc := append(categoryDoc(t, c)[:2:2],
		fmt.Sprintf("shards and objects are counted over the first %d rows of the category (distinct_rows of", limit),
		"them in the scope): exact when distinct_exact, at least that many otherwise. pending and the",
		"ages read the whole table (no index leads with category), in parallel like a bare count(*);",
		"only a category with rows in more than one scope (an older mapping) is read twice.")
	return sqlStatement("category-depth", doc, t.idents(), args, on...)
}

func categoryDoc(t Target, c Enum) []string {
	return []string{
		fmt.Sprintf("Pending rows of category %s (%d) in %s, per scope.", c.Name, c.Value, t.Describe()),
		"shards = shards holding the category; objects = distinct objects (deliveries left, at most).",
		"No index leads with category: this reads the whole table (bounded by the statement timeout).",
	}
}

// CategoryDepthRow is a row of CategoryDepth and CategoryDepthExact (inspect category): one
// scope's pending rows of the category; distinct_exact says distinct_rows counted every row
// (the capped form stops at its cap).
type CategoryDepthRow struct {
	ShardScope    int64      `db:"shard_scope" json:"shard_scope"`
	Pending       int64      `db:"pending" json:"pending"`
	Shards        int64      `db:"shards" json:"shards"`
	Objects       int64      `db:"objects" json:"objects"`
	NextAttempt   *time.Time `db:"next_attempt" json:"next_attempt"`
	OldestMessage *time.Time `db:"oldest_message" json:"oldest_message"`
	DistinctRows  int64      `db:"distinct_rows" json:"distinct_rows"`
	DistinctExact bool       `db:"distinct_exact" json:"distinct_exact"`
}

// CategoryEstimateRow is CategoryEstimate's row: the pending rows estimated from the
// planner's statistics (null when the category is too rare to be among the most common
// values), the rest unknown (null), and when the statistics were taken.
type CategoryEstimateRow struct {
	ShardScope    *int64     `db:"shard_scope" json:"shard_scope"`
	Pending       *int64     `db:"pending" json:"pending"`
	Shards        *int64     `db:"shards" json:"shards"`
	Objects       *int64     `db:"objects" json:"objects"`
	NextAttempt   *time.Time `db:"next_attempt" json:"next_attempt"`
	OldestMessage *time.Time `db:"oldest_message" json:"oldest_message"`
	Estimated     bool       `db:"estimated" json:"estimated"`
	AnalyzedAt    *time.Time `db:"statistics_analyzed_at" json:"statistics_analyzed_at"`
}

// CategoryEstimate is the category's pending rows from the planner's statistics (its
// frequency among pg_stats' most common categories times total, the table's estimated rows),
// without reading the table: what inspect category answers when its pass would exceed the
// budget. The whole table's, whatever --cell says.
func CategoryEstimate(t Target, c Enum, total int64, analyzedAt *time.Time) Statement {
	var at any
	if analyzedAt != nil {
		at = *analyzedAt
	}
	return sqlStatement("category-estimate", []string{
		fmt.Sprintf("Estimated pending rows of category %s (%d) in %s from the planner's statistics", c.Name, c.Value, t.Describe()),
		"(no table read): NULL when the category is too rare to be among pg_stats' most common values.",
	}, nil, Args{
		"table":       {Value: t.From()},
		"category":    {Value: c.Value, Note: c.Name},
		"total":       {Value: total, Note: "the planner's estimate of the table's rows"},
		"analyzed_at": {Value: at, Note: "when the statistics were taken"},
	})
}
