package status

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Request is what to report on.
type Request struct {
	Tables     []backfill.Table
	SelfHosted bool
	// Exact counts the rows below each cursor (an index scan) instead of estimating.
	Exact bool
	// Sample, when positive, reads the cursors again after Wait(ctx, Sample) returns, for
	// the rate and ETA.
	Sample time.Duration
	Wait   func(ctx context.Context, d time.Duration) error
}

// Row is one table's backfill status.
type Row struct {
	Table  backfill.Table
	Option *int64
	Status backfill.Status
	// Gate is the table's gate (backfill.GateOf), the same answer killswitch list and the
	// doctor give.
	Gate        backfill.Gate
	Store       string
	Cursor      *backfill.Cursor
	State       string
	Note        string
	Unreachable bool
	MaxID       *int64
	Progress    *float64
	// Estimate is the planner's row count (nil when the table is not here).
	Estimate *int64
	RowsDone *int64
	Rate     *float64
	ETA      *float64
	// OptionIn is the options table Sentry reads the gate from ("" for none).
	OptionIn string
	// Cells is, for a backfill limited to target cells, its state in each cell known
	// ("de: not attempted; us: complete"); "" when it is not limited.
	Cells string
}

// Report is the status of every selected table.
type Report struct {
	Snapshot
	Rows    []Row
	Sampled bool
	// Failed counts the cursor failures (unreadable, malformed, no id column);
	// Incomplete the tables not complete.
	Failed, Incomplete int
}

// Status reads the snapshot and the cursors (twice when sampling) and evaluates each table.
func (s Source) Status(ctx context.Context, req Request) (Report, error) {
	snap, err := s.LoadSnapshot(ctx, req.Tables)
	if err != nil {
		return Report{}, err
	}
	cursors := s.OpenCursors(ctx, snap.Schema)
	defer cursors.Close()
	first, err := cursors.Read(ctx, req.Tables)
	if err != nil {
		return Report{}, err
	}
	var second map[string]CursorRead
	if req.Sample > 0 {
		if err := req.Wait(ctx, req.Sample); err != nil {
			return Report{}, err
		}
		if second, err = cursors.Read(ctx, req.Tables); err != nil {
			return Report{}, err
		}
	}
	rep := Report{Snapshot: snap, Sampled: second != nil}
	for _, tb := range req.Tables {
		row, failures := snap.Evaluate(tb, first[tb.Name], second[tb.Name], second != nil, req.SelfHosted)
		if req.Exact && row.Cursor != nil && snap.Schema.Table(tb.Name).Present {
			n, err := s.CountBelow(ctx, tb.Name, row.Cursor.Low)
			if err != nil {
				return Report{}, err
			}
			row.RowsDone = &n
		}
		rep.Failed += failures
		if !row.Status.Complete {
			rep.Incomplete++
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// Evaluate classifies one table from its first cursor read (and second, when sampled),
// returning its row and how many failures it counts.
func (snap Snapshot) Evaluate(tb backfill.Table, first, second CursorRead, sampled, selfHosted bool) (Row, int) {
	failures := 0
	opt := snap.Options[tb.Name]
	in := backfill.Input{Table: tb, Option: opt.Value, SelfHosted: selfHosted, Cursor: first.Cursor,
		OptionUpdated: opt.Updated, CursorUpdated: first.Updated}
	unreachable := first.Unreachable()
	if first.Err != nil && !unreachable {
		in.CursorErr = first.Err
		failures++ // a malformed cursor is an error of its row, like an unreadable one
	}
	if sampled && in.CursorErr == nil && !unreachable && second.Err != nil && !second.Unreachable() {
		// A cursor rewritten malformed between the two reads is malformed now: counting only
		// the first read would leave it with no rate and no word.
		in.CursorErr = fmt.Errorf("on the second read: %w", second.Err)
		failures++
	}
	if ti := snap.Schema.Table(tb.Name); ti.Present && !ti.HasID {
		in.CursorErr = fmt.Errorf("table %s has no id column: not a replicated model's table (a stray cursor?)", tb.Name)
		failures++
	}
	b := snap.Bounds[tb.Name]
	in.MaxID = b.Max
	st := backfill.Classify(in)
	row := Row{Table: tb, Option: opt.Value, Status: st, Gate: backfill.GateOf(in), Store: first.Store, Cursor: first.Cursor,
		State: string(st.State), Note: st.Note, Unreachable: unreachable, MaxID: b.Max,
		OptionIn: options.OptionTableFor(query.Silo(tb.Silo), snap.Schema)}
	if unreachable {
		row.State, row.Note = string(backfill.StateUnknown), first.Err.Error()
		failures++
	}
	row.Progress = Progress(first.Cursor, b, st)
	if snap.Schema.Table(tb.Name).Present {
		row.Estimate = &b.Estimate
	}
	if sampled {
		row.Rate, row.ETA = Rate(first, second, b.Max)
	}
	row.Note = unregisteredNote(tb, row.Note)
	if opt.TargetCells != nil {
		var left []string
		row.Cells, left = perCell(row.State, opt.TargetCells, snap.Cells)
		if len(left) > 0 {
			row.Note = joinNote(row.Note, fmt.Sprintf("%s limits it to %s: not attempted for %s",
				backfill.TargetCellsKey(tb.Name), strings.Join(opt.TargetCells, ", "), strings.Join(left, ", ")))
		}
	}
	return row, failures
}

// perCell is a target-cells backfill's state in each cell (the targets and the cells known,
// sorted): state in a target, "not attempted" in any other (Sentry writes the control
// outbox rows of the walk only for the targets); left are those others.
func perCell(state string, targets, known []string) (cells string, left []string) {
	all := append(slices.Clone(targets), known...)
	slices.Sort(all)
	all = slices.Compact(all)
	parts := make([]string, 0, len(all))
	for _, c := range all {
		if slices.Contains(targets, c) {
			parts = append(parts, c+": "+state)
			continue
		}
		parts = append(parts, c+": not attempted")
		left = append(left, c)
	}
	if len(all) == 0 {
		return "no cell (target_cells is empty): not attempted", nil
	}
	return strings.Join(parts, "; "), left
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func unregisteredNote(tb backfill.Table, note string) string {
	switch {
	case !tb.Unregistered:
		return note
	case note == "":
		return "not a registered table: coded version assumed 1 (Sentry's default); --coded " + tb.Name + "=N to set it"
	}
	return note + "; not a registered table: coded version assumed 1"
}

// Progress is the share of the id span below the cursor of a walk in progress (1 once
// complete; nil when it cannot be told), truncated to 0.001.
func Progress(c *backfill.Cursor, b Bounds, st backfill.Status) *float64 {
	if st.Complete {
		one := 1.0
		return &one
	}
	if c == nil || b.Min == nil || b.Max == nil || *b.Max < *b.Min || st.State != backfill.StateInProgress {
		return nil
	}
	span := float64(*b.Max - *b.Min + 1)
	p := clamp01(float64(c.Low-*b.Min) / span)
	return &p
}

// Rate is the cursor's speed in ids per minute between two reads of the same version, and
// the seconds left to max(id) at that speed (nil when it cannot be told).
func Rate(first, second CursorRead, maxID *int64) (rate, eta *float64) {
	if second.Cursor == nil || first.Cursor == nil || second.Cursor.Version != first.Cursor.Version {
		return nil, nil
	}
	minutes := second.At.Sub(first.At).Minutes()
	if minutes <= 0 {
		return nil, nil
	}
	r := float64(second.Cursor.Low-first.Cursor.Low) / minutes
	rate = ptr(round1(r))
	if r > 0 && maxID != nil {
		eta = ptr(round1(float64(*maxID+1-second.Cursor.Low) / r * 60))
	}
	return rate, eta
}

func ptr(f float64) *float64 { return &f }

func clamp01(f float64) float64 { return max(0, min(1, float64(int(f*1000))/1000)) }

func round1(f float64) float64 { return float64(int(f*10)) / 10 }
