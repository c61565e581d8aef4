package exporter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// UnclaimedSample is how many of the oldest rows the cheap tier's scheduler-liveness read
// looks at (as doctor's check does): their shards are the ones schedule_batch hands out
// first on every run, so a due one left unclaimed for minutes means no drain is running.
const UnclaimedSample = 1000

// Tier names a collection tier; it is the tier label's value.
type Tier string

// The two tiers.
const (
	Cheap     Tier = "cheap"
	Expensive Tier = "expensive"
)

// Source is one context: where it reads (its replica-dsn when it has one: the command
// decides), the outbox table, and how names are spelled.
type Source struct {
	Name       string
	Config     db.Config
	Target     query.Target
	Deployment query.Deployment
	Registry   *enums.Registry
}

// snapshot is what one read of a tier sees: the source and its read snapshot (the target
// adapted to the catalog).
type snapshot struct {
	*outbox.Snapshot
	src *Source
}

// rowsOf runs st and reads its rows by name into T.
func rowsOf[T any](s *snapshot, st query.Statement) ([]T, error) {
	return outbox.RowsOf[T](s.Snapshot, st)
}

// inSnapshot opens a read-only snapshot on conn (outbox.On), checks that the target is an
// outbox table (adapting to its cell column) and calls fn.
func (src *Source) inSnapshot(ctx context.Context, conn *db.Conn, fn func(*snapshot) error) error {
	o := outbox.Options{Deployment: src.Deployment, Check: outbox.CheckOutbox}
	return outbox.On(ctx, conn, src.Target, o, func(s *outbox.Snapshot) error { return fn(&snapshot{Snapshot: s, src: src}) })
}

func (s *snapshot) tableLabels() []string {
	return []string{s.src.Name, s.Target.TableName(), string(s.Target.Silo)}
}

// cellLabels is the cell label of a whole-table value: the context's --cell ("" for all).
func (s *snapshot) cellLabels() []string { return append(s.tableLabels(), s.Target.Cell) }

func (s *snapshot) scopeName(v int64) string { return s.src.Registry.ScopeName(int(v)) }

// collectCheap is the cheap tier: estimates and index-aligned statements only (the
// planner's row estimate, the lowest id, the heads of the oldest rows' shards).
func collectCheap(s *snapshot) ([]sample, error) {
	var out []sample
	est, err := rowsOf[query.DepthRow](s, query.DepthEstimate(s.Target))
	if err != nil {
		return nil, err
	}
	for _, r := range est {
		if r.Category == nil && r.Depth != nil {
			out = append(out, sample{descRowsEstimate, float64(*r.Depth), s.tableLabels()})
		}
	}
	oldest, err := rowsOf[query.OldestRowRow](s, query.OldestRow(s.Target))
	if err != nil {
		return nil, err
	}
	age := 0.0
	if len(oldest) == 1 {
		age = max(oldest[0].AgeSeconds, 0)
	}
	out = append(out, sample{descOldest, age, s.cellLabels()})
	unclaimed, err := rowsOf[query.DoctorUnclaimedRow](s, query.DoctorUnclaimed(s.Target, UnclaimedSample, 1))
	if err != nil {
		return nil, err
	}
	wait := 0.0
	if len(unclaimed) > 0 {
		wait = max(unclaimed[0].UnclaimedSeconds, 0)
	}
	return append(out, sample{descUnclaimed, wait, s.cellLabels()}), nil
}

// collectExpensive is the expensive tier: the exact depth per cell, scope and category,
// the shards in backoff and at the cap, the top shards, the kill-switched shards.
func collectExpensive(s *snapshot) ([]sample, error) {
	var out []sample
	depth, err := rowsOf[query.ExactDepthRow](s, query.ExactDepth(s.Target))
	if err != nil {
		return nil, err
	}
	for _, r := range depth {
		labels := append(s.tableLabels(), r.Cell, s.scopeName(r.Scope), s.src.Registry.CategoryName(int(r.Category)))
		out = append(out, sample{descRows, float64(r.Depth), labels})
	}
	states, err := rowsOf[query.ShardStatesRow](s, query.ShardStates(s.Target))
	if err != nil {
		return nil, err
	}
	for _, r := range states {
		labels := append(s.tableLabels(), r.Cell, s.scopeName(r.Scope))
		out = append(out, sample{descStuck, float64(r.Stuck), labels}, sample{descAtCap, float64(r.AtCap), labels})
	}
	top, err := rowsOf[query.TopShardRow](s, query.TopShards(s.Target, query.ShardFilter{Limit: TopShards}))
	if err != nil {
		return nil, err
	}
	for i, r := range top {
		labels := append(s.tableLabels(), strconv.Itoa(i+1))
		delay := 0.0 // a shard never attempted has no backoff yet
		if r.LastDelaySeconds != nil {
			delay = max(*r.LastDelaySeconds, 0)
		}
		out = append(out, sample{descTopRows, float64(r.Depth), labels}, sample{descTopDelay, delay, labels})
	}
	killed, err := s.killswitched()
	if err != nil {
		return nil, err
	}
	return foldLabels(append(out, killed...), s.tableLabels()), nil
}

// killswitched reads the kill-switch lists Sentry reads here and what waits behind them in
// the target table, summed per cell and scope.
func (s *snapshot) killswitched() ([]sample, error) {
	lists, err := killswitch.ReadLists(s.Context(), s.Tx(), s.Target.Schema, s.Schema)
	if err != nil {
		return nil, err
	}
	var read []killswitch.List
	for _, l := range lists {
		if l.Err == nil && len(l.IDs) > 0 && l.Table == options.OptionTableFor(s.Target.Silo, s.Schema) {
			read = append(read, l)
		}
	}
	if len(read) == 0 {
		return nil, nil
	}
	rows, err := killswitch.Waiting(s.Context(), s.Tx(), s.Target.Schema, s.Schema, read)
	if err != nil {
		return nil, err
	}
	type key struct {
		cell  string
		scope int64
	}
	shards, depth := map[key]float64{}, map[key]float64{}
	var order []key
	for _, r := range rows {
		if r.Silo == nil || *r.Silo != string(s.Target.Silo) || r.Depth == 0 {
			continue
		}
		k := key{scope: r.ShardScope}
		if r.RegionName != nil {
			k.cell = *r.RegionName
		}
		if s.Target.Cell != "" && k.cell != s.Target.Cell {
			continue
		}
		if _, seen := shards[k]; !seen {
			order = append(order, k)
		}
		shards[k]++
		depth[k] += float64(r.Depth)
	}
	var out []sample
	for _, k := range order {
		labels := append(s.tableLabels(), k.cell, s.scopeName(k.scope))
		out = append(out, sample{descKilled, shards[k], labels}, sample{descKilledRows, depth[k], labels})
	}
	return out, nil
}

// collectBackfill reads every registered replicated table's backfill (the cursors in the
// watermark table) on conn, outside the tier's snapshot: the backfill status service opens
// its own. A table absent from this database is left out.
func (src *Source) collectBackfill(ctx context.Context, conn *db.Conn) ([]sample, error) {
	s := status.Source{Conn: conn, Schema: src.Target.Schema, Deployment: src.Deployment, Store: status.StoreAuto}
	rep, err := s.Status(ctx, status.Request{Tables: backfill.Registered(nil)})
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	var out []sample
	for _, r := range rep.Rows {
		if r.Estimate == nil || r.Cursor == nil {
			continue
		}
		labels := []string{src.Name, r.Table.Name}
		left := 0.0
		if r.RowsDone != nil && !r.Status.Complete {
			left = max(float64(*r.Estimate-*r.RowsDone), 0)
		}
		out = append(out,
			sample{descBackfillCursor, float64(r.Cursor.Low), labels},
			sample{descBackfillLeft, left, labels},
			sample{descBackfillComplete, boolValue(r.Status.Complete), labels},
			sample{descBackfillGated, boolValue(r.Gate.Held), labels})
	}
	return out, nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
