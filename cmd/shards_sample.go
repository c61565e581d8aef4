package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// shards --limit under a low --statement-timeout (cmd/pass.go): the deepest shards group the
// whole table, so over the budget they come from a bounded sample of its pages instead.

// session runs fn in the read snapshot shards lists in: under --pass-timeout with a
// progress line for --full-pass, the command's own otherwise (line nil).
func (o shardsOptions) session(ctx context.Context, d factory, fn func(*session, *passLine) error) error {
	if o.FullPass {
		return o.Pass.fullPass(ctx, d, "shards", "shards", "grouping", fn)
	}
	return d.readSession(ctx, "shards", func(s *session) error { return fn(s, nil) })
}

// listing runs build's listing, or, when it is the whole-table pass (not --stuck, not one
// --shard) and the planner's estimate exceeds the budget, the sample's; --stuck's, when its
// pass runs out of --statement-timeout, the sample's too (stuckListing); note labels a
// sample's answer. With --full-pass (line) the pass runs under its line, whatever it is.
func (o shardsOptions) listing(ctx context.Context, s *session, d factory, f query.ShardFilter, line *passLine, build func(query.Target) query.Statement) (*query.Result, string, error) {
	if o.Stuck && line == nil && f.Shard == nil && f.Selected == nil {
		return o.stuckListing(s, d, f, build)
	}
	if (o.Stuck && line == nil) || f.Shard != nil {
		res, err := s.run(build(s.target))
		return res, "", err
	}
	stats, err := catalogStats(s, d)
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
	why, sampled := budget.Exceeds(rows), budget.Rows()
	if budget.Allows(rows) || f.Selected != nil {
		// The estimate is rough and the server may be slower than the budget assumes: a pass
		// that runs out of --statement-timeout falls back to the sample too. Selector flags
		// the sample cannot honour (--at-cap, --head-category, --added-*, --shards-from) get
		// the exact pass whatever the estimate, or an error saying so: never a sample
		// without them.
		res, timedOut, err := topPass(s, f, stats.Pages, query.FloorSeed, build)
		if timedOut && f.Selected != nil {
			return nil, "", failuref("shards: the listing of the shards selected by %s did not finish within --statement-timeout %s, and a sample of the table cannot apply those selector flags: --full-pass lists from every row (under --pass-timeout)",
				f.Selected.Describe(), d.statementTimeout)
		}
		if !timedOut {
			return res, "", err
		}
		why = fmt.Sprintf("the pass over ~%d rows did not finish within --statement-timeout %s", rows, d.statementTimeout)
		// This server reads fewer than rows rows in the timeout: half of them is the budget.
		sampled = min(sampled, rows/2)
	}
	// A tenth of the budget's rows: the sample's grouping runs in one process (a sample scan
	// is never parallel), where the budget's rate is a parallel count's.
	pct := query.SamplePercent(sampled/sampleShare, rows)
	// A new sample each run (a seed from the clock): a shard one sample misses, the next
	// may find.
	var res *query.Result
	err = s.withBudget(sampleTimeout, d.statementTimeout, func() (err error) {
		res, err = s.run(query.TopShardsSample(s.target, f, pct, d.now().UnixNano()%1_000_000))
		return err
	})
	return res, fmt.Sprintf("estimated from a sample of %s%% of the table's pages: %s; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row (under --pass-timeout)",
		formatPercent(pct), why), err
}

// topPass is tryPass of the deepest shards: in TopShards' kept form when the floor's
// statement finds a floor worth it (query.PlanFloor, Accept) and the kept rows prove to be
// the listing (query.TopShardsComplete), in build's plain form otherwise. Both forms list
// the same rows and the same exact total_shards; the floor decides only whether the
// statement buffers every shard to count them (#27: a fifth of the listing at 2M rows).
// The floor is an optimisation only: any failure of its statement (a timeout, a table
// TABLESAMPLE cannot read) leaves the plain form to answer. In the session's one snapshot
// the kept are always enough; the check is for a snapshot that is not one (READ COMMITTED:
// a shard drained between the two statements). pages is the table's size (the floor's
// bound on its rows); seed picks the floor's sample.
func topPass(s *session, f query.ShardFilter, pages, seed int64, build func(query.Target) query.Statement) (*query.Result, bool, error) {
	if plan, ok := query.PlanFloor(f, pages); ok {
		if floor, ok := findFloor(s, f, plan, seed); ok {
			f.Floor = floor
			res, timedOut, err := tryPass(s, query.TopShards(s.target, f))
			if err != nil || timedOut {
				// A timeout falls back to the sample as the plain form's would: the kept form
				// reads what the plain form reads and buffers less.
				return res, timedOut, err
			}
			top, err := query.Rows[query.TopShardsRow](res)
			if err != nil {
				return nil, false, err
			}
			if len(top) > 0 && query.TopShardsComplete(len(top), top[0].TotalShards, f.Limit) {
				return res, false, nil
			}
		}
	}
	return tryPass(s, build(s.target))
}

// findFloor runs the floor's statement in a savepoint and says the floor when plan accepts
// it; a failure of the statement is no floor.
func findFloor(s *session, f query.ShardFilter, plan query.FloorPlan, seed int64) (int64, bool) {
	res, timedOut, err := tryPass(s, query.TopShardsFloor(s.target, f, plan, seed))
	if err != nil || timedOut {
		return 0, false
	}
	floors, err := query.Rows[query.TopShardsFloorRow](res)
	if err != nil || len(floors) != 1 || !plan.Accept(floors[0].Floor) {
		return 0, false
	}
	return *floors[0].Floor, true
}

// sampleTimeout is the least statement timeout a sample (bounded by the budget, not by the
// table) runs under: a stalled instant of a loaded server must not undo the fallback.
const sampleTimeout = 250 * time.Millisecond

// sampleShare is how much smaller than the budget's rows the sample is.
const sampleShare = 10

// formatPercent prints a sample's percentage (two decimals at most) as the data does.
func formatPercent(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// stuckListing is shards --stuck: its index pass over the rows in backoff (exact) in a
// savepoint, and, when that pass did not finish within --statement-timeout, the shards in
// backoff from a bounded sample of the table's pages instead (each confirmed in backoff by
// one probe, its depth estimated), labelled so, naming --full-pass. The rows in backoff are
// what the pass reads, and no statistic says how many there are (a 2M-row shard at the cap
// among 20M rows): it is tried, not estimated.
func (o shardsOptions) stuckListing(s *session, d factory, f query.ShardFilter, build func(query.Target) query.Statement) (*query.Result, string, error) {
	res, timedOut, err := tryPass(s, build(s.target))
	if !timedOut {
		return res, "", err
	}
	stats, err := catalogStats(s, d)
	if err != nil {
		return nil, "", err
	}
	budget := o.Pass.budget(d)
	pct := query.SamplePercent(budget.Rows()/sampleShare, stats.Rows())
	// The sample's size is the budget's, not the table's (sampleTimeout).
	err = s.withBudget(sampleTimeout, d.statementTimeout, func() (err error) {
		res, err = s.run(query.StuckShardsSample(s.target, f, pct, d.now().UnixNano()%1_000_000))
		return err
	})
	return res, fmt.Sprintf("estimated from a sample of %s%% of the table's pages: the index pass over the rows in backoff did not finish within --statement-timeout %s; each shard listed is in backoff (probed), its depth estimated; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row in backoff (under --pass-timeout)",
		formatPercent(pct), d.statementTimeout), err
}

// catalogStats is tableStats (the catalog and the statistics functions, never the table)
// under the catalog read's budget.
func catalogStats(s *session, d factory) (stats query.TableStats, err error) {
	err = s.withBudget(query.IntrospectTimeout, d.statementTimeout, func() error {
		stats, err = tableStats(s)
		return err
	})
	return stats, err
}

// tryPass runs st in a savepoint; timedOut says it ran out of --statement-timeout (the
// snapshot is usable again: rolled back to the savepoint).
func tryPass(s *session, st query.Statement) (res *query.Result, timedOut bool, err error) {
	sp, err := s.tx.Begin(s.ctx)
	if err != nil {
		return nil, false, db.Classify(err, st.Name)
	}
	if res, err = query.Run(s.ctx, sp, st); err == nil {
		return res, false, db.Classify(sp.Commit(s.ctx), st.Name)
	}
	_ = sp.Rollback(context.WithoutCancel(s.ctx))
	err = db.Classify(err, st.Name)
	return nil, statementTimedOut(err), err
}

// statementTimedOut says err is the server's statement timeout (SQLSTATE 57014).
func statementTimedOut(err error) bool {
	var e *db.Error
	return errors.As(err, &e) && e.SQLState == "57014"
}
