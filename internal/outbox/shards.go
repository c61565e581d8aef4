package outbox

import (
	"fmt"
	"strconv"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The shards listing under a low --statement-timeout: the deepest shards group the whole
// table, so over the budget they come from a bounded sample of its pages instead, and
// --stuck's index pass that runs out of the timeout falls back to a sample too.

// ShardsRequest is one shards listing.
type ShardsRequest struct {
	Filter query.ShardFilter
	// Stuck lists the shards in backoff (query.StuckShards), not the deepest.
	Stuck bool
	// FullPass, when not nil, runs the whole pass to the end (--full-pass: the snapshot is
	// under --pass-timeout) given the planner's estimate of its rows; nil: the budget
	// decides.
	FullPass func(rows int64, pass func() error) error
	// Budget is the pass budget under --statement-timeout.
	Budget query.Budget
	// Seed picks the sample's pages (the clock: a shard one sample misses, the next may
	// find).
	Seed int64
}

// ShardsListing is the listing's rows (query.TopShardsRow, query.StuckShardsRow, or a
// sample's query.TopShardsSampleRow when Note is not empty), the note that labels a
// sample's answer, and the kill switches Sentry reads (Switches; SwitchesErr: a value that
// failed to decode, the rest read).
type ShardsListing struct {
	Rows        *query.Result
	Note        string
	Switches    *options.Killswitches
	SwitchesErr error
}

// Shards reads r's listing (shardRows) and the kill switches Sentry reads for the target.
// With --not-killswitched the caller has filled r.Filter.Selected.Excluded in the snapshot
// (killswitch.Excluded).
func (s *Snapshot) Shards(r ShardsRequest) (ShardsListing, error) {
	l, err := s.shardRows(r)
	if err != nil {
		return l, err
	}
	l.Switches, l.SwitchesErr, err = s.Killswitches(r.Budget.StatementTimeout)
	return l, err
}

// Killswitches reads the kill switches Sentry reads for the target: the options table, not
// the outbox, so under the catalog read's budget (#27) when timeout (--statement-timeout)
// is lower. listErr is a value that failed to decode, the rest read; err a read that failed.
func (s *Snapshot) Killswitches(timeout time.Duration) (ks *options.Killswitches, listErr, err error) {
	err = s.WithBudget(query.IntrospectTimeout, timeout, func() error {
		ks, listErr = options.ReadKillswitches(s.ctx, s.tx, s.Target.Schema, s.Schema, s.Target.Silo)
		return nil
	})
	if err == nil && listErr != nil && ks == nil {
		err = db.Classify(listErr, "killswitch-options")
	}
	return ks, listErr, err
}

// Statement is the request's exact listing.
func (r ShardsRequest) Statement(t query.Target) query.Statement {
	if r.Stuck {
		return query.StuckShards(t, r.Filter)
	}
	return query.TopShards(t, r.Filter)
}

// sampleTimeout is the least statement timeout a sample (bounded by the budget, not by the
// table) runs under: a stalled instant of a loaded server must not undo the fallback.
const sampleTimeout = 250 * time.Millisecond

// sampleShare is how much smaller than the budget's rows the sample is.
const sampleShare = 10

// shardRows runs r's listing, or, when it is the whole-table pass (not --stuck, not one
// --shard) and the planner's estimate exceeds the budget, the sample's; --stuck's, when its
// pass runs out of --statement-timeout, the sample's too (stuckShards). With FullPass the
// pass runs under it, whatever it is.
func (s *Snapshot) shardRows(r ShardsRequest) (ShardsListing, error) {
	f := r.Filter
	if r.Stuck && r.FullPass == nil && f.Shard == nil && f.Selected == nil {
		return s.stuckShards(r)
	}
	if (r.Stuck && r.FullPass == nil) || f.Shard != nil {
		res, err := s.Run(r.Statement(s.Target))
		return ShardsListing{Rows: res}, err
	}
	stats, err := s.CatalogStats(r.Budget.StatementTimeout)
	if err != nil {
		return ShardsListing{}, err
	}
	rows := stats.Rows()
	if r.FullPass != nil {
		var res *query.Result
		err := r.FullPass(rows, func() error {
			res, err = s.Run(r.Statement(s.Target))
			return err
		})
		return ShardsListing{Rows: res}, err
	}
	why, sampled := r.Budget.Exceeds(rows), r.Budget.Rows()
	if r.Budget.Allows(rows) || f.Selected != nil {
		// The estimate is rough and the server may be slower than the budget assumes: a pass
		// that runs out of --statement-timeout falls back to the sample too. Selector flags
		// the sample cannot honour (--at-cap, --head-category, --added-*, --shards-from) get
		// the exact pass whatever the estimate, or an error saying so: never a sample
		// without them.
		res, timedOut, err := s.topPass(f, stats.Pages, query.FloorSeed, r.Statement)
		if timedOut && f.Selected != nil {
			return ShardsListing{}, fmt.Errorf("shards: the listing of the shards selected by %s did not finish within --statement-timeout %s, and a sample of the table cannot apply those selector flags: --full-pass lists from every row (under --pass-timeout)",
				f.Selected.Describe(), r.Budget.StatementTimeout)
		}
		if !timedOut {
			return ShardsListing{Rows: res}, err
		}
		why = fmt.Sprintf("the pass over ~%d rows did not finish within --statement-timeout %s", rows, r.Budget.StatementTimeout)
		// This server reads fewer than rows rows in the timeout: half of them is the budget.
		sampled = min(sampled, rows/2)
	}
	// A tenth of the budget's rows: the sample's grouping runs in one process (a sample scan
	// is never parallel), where the budget's rate is a parallel count's.
	pct := query.SamplePercent(sampled/sampleShare, rows)
	var res *query.Result
	err = s.WithBudget(sampleTimeout, r.Budget.StatementTimeout, func() (err error) {
		res, err = s.Run(query.TopShardsSample(s.Target, f, pct, r.Seed))
		return err
	})
	return ShardsListing{Rows: res, Note: fmt.Sprintf("estimated from a sample of %s%% of the table's pages: %s; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row (under --pass-timeout)",
		formatPercent(pct), why)}, err
}

// topPass is Try of the deepest shards: in TopShards' kept form when the floor's statement
// finds a floor worth it (query.PlanFloor, Accept) and the kept rows prove to be the
// listing (query.TopShardsComplete), in build's plain form otherwise. Both forms list the
// same rows and the same exact total_shards; the floor decides only whether the statement
// buffers every shard to count them (#27: a fifth of the listing at 2M rows). The floor is
// an optimisation only: any failure of its statement (a timeout, a table TABLESAMPLE cannot
// read) leaves the plain form to answer. In the snapshot the kept are always enough; the
// check is for a snapshot that is not one (READ COMMITTED: a shard drained between the two
// statements). pages is the table's size (the floor's bound on its rows); seed picks the
// floor's sample.
func (s *Snapshot) topPass(f query.ShardFilter, pages, seed int64, build func(query.Target) query.Statement) (*query.Result, bool, error) {
	if plan, ok := query.PlanFloor(f, pages); ok {
		if floor, ok := s.findFloor(f, plan, seed); ok {
			f.Floor = floor
			res, timedOut, err := s.Try(query.TopShards(s.Target, f))
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
	return s.Try(build(s.Target))
}

// findFloor runs the floor's statement in a savepoint and says the floor when plan accepts
// it; a failure of the statement is no floor.
func (s *Snapshot) findFloor(f query.ShardFilter, plan query.FloorPlan, seed int64) (int64, bool) {
	res, timedOut, err := s.Try(query.TopShardsFloor(s.Target, f, plan, seed))
	if err != nil || timedOut {
		return 0, false
	}
	floors, err := query.Rows[query.TopShardsFloorRow](res)
	if err != nil || len(floors) != 1 || !plan.Accept(floors[0].Floor) {
		return 0, false
	}
	return *floors[0].Floor, true
}

// formatPercent prints a sample's percentage (two decimals at most) as the data does.
func formatPercent(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// stuckShards is shards --stuck: its index pass over the rows in backoff (exact) in a
// savepoint, and, when that pass did not finish within --statement-timeout, the shards in
// backoff from a bounded sample of the table's pages instead (each confirmed in backoff by
// one probe, its depth estimated), labelled so, naming --full-pass. The rows in backoff are
// what the pass reads, and no statistic says how many there are (a 2M-row shard at the cap
// among 20M rows): it is tried, not estimated.
func (s *Snapshot) stuckShards(r ShardsRequest) (ShardsListing, error) {
	res, timedOut, err := s.Try(r.Statement(s.Target))
	if !timedOut {
		return ShardsListing{Rows: res}, err
	}
	stats, err := s.CatalogStats(r.Budget.StatementTimeout)
	if err != nil {
		return ShardsListing{}, err
	}
	pct := query.SamplePercent(r.Budget.Rows()/sampleShare, stats.Rows())
	// The sample's size is the budget's, not the table's (sampleTimeout).
	err = s.WithBudget(sampleTimeout, r.Budget.StatementTimeout, func() (err error) {
		res, err = s.Run(query.StuckShardsSample(s.Target, r.Filter, pct, r.Seed))
		return err
	})
	return ShardsListing{Rows: res, Note: fmt.Sprintf("estimated from a sample of %s%% of the table's pages: the index pass over the rows in backoff did not finish within --statement-timeout %s; each shard listed is in backoff (probed), its depth estimated; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row in backoff (under --pass-timeout)",
		formatPercent(pct), r.Budget.StatementTimeout)}, err
}

// ShardDepth is a listed shard's key and depth.
type ShardDepth struct {
	Scope int64 `db:"shard_scope"`
	ID    int64 `db:"shard_identifier"`
	Depth int64 `db:"depth"`
}

// Over is the first shard of the listing that holds more rows than limit (nil: none), as
// --fail-if-depth names it.
func (l ShardsListing) Over(limit int64) (*ShardDepth, error) {
	rows, err := query.Rows[ShardDepth](l.Rows)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Depth > limit {
			return &r, nil
		}
	}
	return nil, nil
}
