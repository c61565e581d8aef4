package cmd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/outboxctl/outboxctl/internal/query"
)

// shards --limit under a low --statement-timeout (cmd/pass.go): the deepest shards group the
// whole table, so over the budget they come from a bounded sample of its pages instead.

// session runs fn in the read snapshot shards lists in: under --pass-timeout with a
// progress line for --full-pass, the command's own otherwise (line nil).
func (o shardsOptions) session(ctx context.Context, d factory, fn func(*session, *passLine) error) error {
	if o.FullPass && !o.Stuck {
		return o.Pass.fullPass(ctx, d, "shards", "shards", "grouping", fn)
	}
	return d.readSession(ctx, "shards", func(s *session) error { return fn(s, nil) })
}

// listing runs build's listing, or, when it is the whole-table pass (not --stuck, not one
// --shard) and the planner's estimate exceeds the budget, the sample's; note labels a
// sample's answer.
func (o shardsOptions) listing(ctx context.Context, s *session, d factory, f query.ShardFilter, line *passLine, build func(query.Target) query.Statement) (*query.Result, string, error) {
	if o.Stuck || f.Shard != nil {
		res, err := s.run(build(s.target))
		return res, "", err
	}
	stats, err := tableStats(s)
	if err != nil {
		return nil, "", err
	}
	rows := stats.Rows()
	if line != nil {
		var res *query.Result
		err := line.run(ctx, rows, func() error {
			res, err = s.run(build(s.target))
			return err
		})
		return res, "", err
	}
	budget := o.Pass.budget(d)
	if budget.Allows(rows) {
		res, err := s.run(build(s.target))
		return res, "", err
	}
	// A tenth of the budget's rows: the sample's grouping runs in one process (a sample scan
	// is never parallel), where the budget's rate is a parallel count's.
	pct := query.SamplePercent(budget.Rows()/sampleShare, rows)
	// A new sample each run (a seed from the clock): a shard one sample misses, the next
	// may find.
	res, err := s.run(query.TopShardsSample(s.target, f, pct, d.now().UnixNano()%1_000_000))
	return res, fmt.Sprintf("estimated from a sample of %s%% of the table's pages: %s; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row (under --pass-timeout)",
		formatPercent(pct), budget.Exceeds(rows)), err
}

// sampleShare is how much smaller than the budget's rows the sample is.
const sampleShare = 10

// formatPercent prints a sample's percentage (two decimals at most) as the data does.
func formatPercent(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
