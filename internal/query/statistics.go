package query

import (
	"fmt"
	"time"
)

// The planner's statistics of an outbox table (sql/statistics.sql), and the budget a
// whole-table pass is held to under a low --statement-timeout.

// TableStats is a row of TableStatistics.
type TableStats struct {
	// EstimatedRows is the planner's estimate of the table's rows; nil when the table was
	// never analyzed.
	EstimatedRows *int64 `db:"estimated_rows"`
	Pages         int64  `db:"pages"`
	// ModifiedSinceAnalyze is pg_stat_user_tables.n_mod_since_analyze.
	ModifiedSinceAnalyze int64 `db:"modified_since_analyze"`
	// AnalyzedAt is the last ANALYZE, manual or autovacuum's; nil when never.
	AnalyzedAt *time.Time `db:"analyzed_at"`
}

// TableStatistics reads what the planner knows of the target's table without reading it.
func TableStatistics(t Target) Statement {
	return sqlStatement("table-statistics", []string{
		"What the planner knows of " + t.Describe() + " without reading it: its estimated rows,",
		"the rows modified since the last ANALYZE, and when that was.",
	}, nil, Args{"table": {Value: t.From()}})
}

// rowsPerPageGuess is how many rows a page of a never-analyzed outbox table is taken to
// hold (a row of Sentry's outbox with a small payload is ~150 bytes).
const rowsPerPageGuess = 50

// Rows is the table's rows as the planner would estimate them: from the statistics, or from
// its size when it was never analyzed.
func (s TableStats) Rows() int64 {
	if s.EstimatedRows != nil {
		return max(*s.EstimatedRows, 0)
	}
	return s.Pages * rowsPerPageGuess
}

// Fresh says the statistics describe the table as it is: analyzed, and fewer rows modified
// since than a tenth of the table (autovacuum's own default analyze threshold is a tenth).
func (s TableStats) Fresh() bool {
	return s.AnalyzedAt != nil && s.EstimatedRows != nil && s.ModifiedSinceAnalyze*10 < max(*s.EstimatedRows, 1)
}

// Describe says how old and how fresh the statistics are, for a label: "analyzed 3m0s ago,
// 1.2% of rows modified since".
func (s TableStats) Describe(now time.Time) string {
	if s.AnalyzedAt == nil {
		return "the table was never analyzed"
	}
	age := now.Sub(*s.AnalyzedAt).Round(time.Second)
	if age < 0 {
		age = 0
	}
	return fmt.Sprintf("statistics of an ANALYZE %s ago, %s of the rows modified since", age, modifiedShare(s))
}

func modifiedShare(s TableStats) string {
	rows := s.Rows()
	if rows <= 0 {
		return fmt.Sprintf("%d", s.ModifiedSinceAnalyze)
	}
	return fmt.Sprintf("%.1f%%", 100*float64(s.ModifiedSinceAnalyze)/float64(rows))
}

// Budget is what a whole-table pass may cost before a command answers from the statistics
// or a bounded sample instead: Share of the statement timeout, at RowsPerSecond rows read a
// second (a conservative figure for a parallel count on a busy server: this machine counts
// 20,000,000 rows in 0.96 s warm, ~20M rows/s).
type Budget struct {
	StatementTimeout time.Duration
	RowsPerSecond    float64
}

// DefaultPassRowsPerSecond is the rate Budget assumes unless told otherwise (hidden
// --pass-rows-per-second, for tests and for a server known to be slower or faster).
const DefaultPassRowsPerSecond = 4_000_000

// budgetShare is the part of the statement timeout a pass may be expected to take: the
// estimate is rough, and an answer that times out is none at all.
const budgetShare = 0.5

// Seconds is how long a pass over rows rows is expected to take.
func (b Budget) Seconds(rows int64) float64 {
	rate := b.RowsPerSecond
	if rate <= 0 {
		rate = DefaultPassRowsPerSecond
	}
	return float64(rows) / rate
}

// Allows says a pass over rows rows fits the budget.
func (b Budget) Allows(rows int64) bool {
	return b.StatementTimeout <= 0 || b.Seconds(rows) <= budgetShare*b.StatementTimeout.Seconds()
}

// Rows is the most rows a pass within the budget reads (for a bounded sample).
func (b Budget) Rows() int64 {
	rate := b.RowsPerSecond
	if rate <= 0 {
		rate = DefaultPassRowsPerSecond
	}
	return int64(rate * budgetShare * b.StatementTimeout.Seconds())
}

// Exceeds says why a pass over rows rows does not fit, for the label of a bounded answer.
func (b Budget) Exceeds(rows int64) string {
	return fmt.Sprintf("a pass over ~%d rows would take ~%s, over half of --statement-timeout %s",
		rows, time.Duration(b.Seconds(rows)*float64(time.Second)).Round(10*time.Millisecond), b.StatementTimeout)
}
