package drain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Job is one shard of a parallel drain.
type Job struct {
	Shard query.ShardKey
	// Skip, when set, is why the shard is not drained (it is kill-switched): it is reported
	// with that status and never claimed.
	Skip Status
	// Watermark is the shard's highest id when the drain was planned: its groups with a row
	// at or below it are drained, as drain SCOPE ID's plan bounds them. 0: read when its
	// turn comes. Ignored with Follow.
	Watermark int64
}

// Status is how one shard of a parallel drain ended.
type Status string

// The statuses of a shard. Only StatusFailed is a failure of the run: a shard another
// drainer holds is skipped, as Sentry's own workers skip it, and a kill-switched one is left
// to its switch.
const (
	StatusDone         Status = "done"          // drained to its watermark (or --max-messages)
	StatusEmpty        Status = "empty"         // nothing to drain when its turn came
	StatusBeingDrained Status = "being drained" // another drainer holds its head: skipped (or stopped)
	StatusFailed       Status = "failed"        // a delivery, the database or the handler failed
	StatusKillswitched Status = "kill-switched" // disabled by its kill switch: not drained
	StatusInterrupted  Status = "interrupted"   // Ctrl-C or SIGTERM stopped it mid-drain
	StatusStopped      Status = "stopped"       // --fail-fast: another shard failed
	StatusNotStarted   Status = "not started"   // its turn never came (interrupted, --fail-fast)
)

// ParallelOptions configure a drain of many shards, Workers at once, each with Run's exact
// per-shard semantics on its worker's own connection.
type ParallelOptions struct {
	// Base is what every shard is drained with (Target, Mode, MaxMessages, Rate,
	// HandlerTimeout, BatchSize, names, Abandon, OnWaiting, Command, Reason, Discard).
	// Shard, Handler, Watermark, Claimed, Reconnect, Archive and OnDelivered are set per
	// shard. Killswitched (a trim) is refused: a kill-switched shard is skipped.
	Base Options
	// OpenArchive, with Base.Discard, opens the archive operation of shard k once it is
	// claimed: each shard's discarded rows are one operation (restore puts back each, or
	// --all), synced before each DELETE as drain SCOPE ID --handler discard syncs them.
	OpenArchive func(k query.ShardKey) (*Operation, error)
	Jobs        []Job
	// Workers is how many shards are drained at once (at least 1).
	Workers int
	// FailFast stops the other workers after a shard failed: each finishes the delivery in
	// flight and commits, as on Ctrl-C; shards not started are reported "not started".
	FailFast bool
	// Follow drains each shard to empty (no watermark), as drain --follow.
	Follow bool
	// Connect opens a worker's connection (and a fresh one after a connection failed).
	Connect func(ctx context.Context) (*db.Conn, error)
	// NewHandler makes each worker's handler: a stream handler is one co-process per
	// worker. A handler that is an io.Closer is closed when its worker ends.
	NewHandler func() (Handler, error)
	// OnDelivered is called once per delivered message after its deletion committed, from
	// the worker's goroutine.
	OnDelivered func(query.ShardKey, Message)
	// OnShard is called as each shard ends (serialised: one call at a time), before its
	// Left is read (once every shard ended, in one statement).
	OnShard func(ShardResult)
}

// ShardResult is one shard of a parallel drain.
type ShardResult struct {
	Shard  query.ShardKey
	Status Status
	// Result is Run's account of the shard (zero when it was not drained).
	Result Result
	// Left is the shard's depth once every shard's turn ended (nil: not read, or could not be).
	Left *int64
	// Restored: its first delivery found the handler unavailable (or, discarding, its
	// archive could not be opened) and its schedule was put back as it was before the claim.
	Restored bool
	// Operation is the archive operation of its discarded rows ("" when none was opened).
	Operation string
	// Err is why it failed (StatusFailed), or why its state after could not be read.
	Err error
}

// ParallelResult is a parallel drain's account: one row per job, in the jobs' order.
type ParallelResult struct {
	Shards []ShardResult
}

// Count is how many shards ended with status s.
func (r ParallelResult) Count(s Status) int {
	n := 0
	for _, sh := range r.Shards {
		if sh.Status == s {
			n++
		}
	}
	return n
}

// Totals adds up the shards' deliveries, deletions and rows left (left is nil when some
// shard's depth is unknown).
func (r ParallelResult) Totals() (delivered int, deleted int64, left *int64) {
	var l int64
	known := true
	for _, sh := range r.Shards {
		delivered += sh.Result.Delivered
		deleted += sh.Result.Deleted
		if sh.Left == nil {
			known = false
		} else {
			l += *sh.Left
		}
	}
	if known {
		left = &l
	}
	return delivered, deleted, left
}

// ErrParallelDiscard: a parallel drain delivers through its workers' own handlers
// (NewHandler), or discards with an archive operation per shard (Base.Discard and
// OpenArchive); it never trims a kill-switched shard (it skips it).
var ErrParallelDiscard = errors.New("a parallel drain delivers through each worker's handler, or discards with an archive operation per shard (--handler discard); a kill-switched shard is skipped, never trimmed")

// RunParallel drains o.Jobs, o.Workers at a time. Every worker makes its handler and
// takes shards in the jobs' order; for each it reads the watermark, claims the shard
// (another drainer's lock is "being drained", never waited on), runs Run, puts the
// schedule back when the handler was unavailable at the first delivery. Once every shard
// ended, one statement reads the depth each was left with. A failing shard does not stop the others unless FailFast; a worker that cannot
// connect takes no more shards (when none can, the rest are "not started"). Cancelling ctx (Ctrl-C)
// lets every worker finish the delivery in flight and commit; the shards not reached are
// "not started". The error is only for what stopped the run before any shard was claimed
// (a handler that could not be made); per-shard failures are in the result.
func RunParallel(ctx context.Context, o ParallelOptions) (ParallelResult, error) {
	res := ParallelResult{Shards: make([]ShardResult, len(o.Jobs))}
	for i, j := range o.Jobs {
		res.Shards[i] = ShardResult{Shard: j.Shard, Status: StatusNotStarted}
	}
	if o.Base.Killswitched || o.Base.Handler != nil || o.Base.Discard && o.OpenArchive == nil {
		return res, ErrParallelDiscard
	}
	workers := min(max(o.Workers, 1), max(len(o.Jobs), 1))
	handlers := make([]Handler, workers)
	defer closeHandlers(handlers)
	for i := range handlers {
		if o.Base.Discard {
			break // nothing delivers
		}
		h, err := o.NewHandler()
		if err != nil {
			return res, err
		}
		if h == nil {
			return res, ErrParallelDiscard
		}
		handlers[i] = h
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := &worker{o: o, handler: handlers[w]}
			defer wk.close(ctx)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(o.Jobs) {
					return
				}
				if stop.Err() != nil {
					continue // not started
				}
				r := wk.shard(ctx, stop, o.Jobs[i])
				if r.Status == StatusFailed && o.FailFast {
					cancel()
				}
				mu.Lock()
				res.Shards[i] = r
				if o.OnShard != nil {
					o.OnShard(r)
				}
				mu.Unlock()
				if wk.unreachable {
					return // the server is gone for this worker: the others, or a run again, take the rest
				}
			}
		}()
	}
	wg.Wait()
	readLeft(ctx, o, &res)
	return res, nil
}

func closeHandlers(hs []Handler) {
	for _, h := range hs {
		if c, ok := h.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// worker is one of a parallel drain's workers: its handler and its connection.
type worker struct {
	o       ParallelOptions
	handler Handler
	conn    *db.Conn
	// idle is conn's idle_in_transaction_session_timeout, read once per connection.
	idle *int64
	// guarded: Guard passed on conn (checked once per connection: a session on a primary
	// never turns into a replica's, and a worker's connection is never in a transaction).
	guarded bool
	// op is the archive operation of the shard in progress ("": none).
	op string
	// unreachable: a connection could not be opened; the worker takes no more shards
	// (each would wait its --connect-timeout for the same answer).
	unreachable bool
}

func (w *worker) close(ctx context.Context) {
	if w.conn != nil {
		_ = w.conn.Close(context.WithoutCancel(ctx))
		w.conn, w.idle, w.guarded = nil, nil, false
	}
}

// connect is the worker's connection, opened when it has none.
func (w *worker) connect(ctx context.Context) (*db.Conn, error) {
	if w.conn == nil {
		c, err := w.o.Connect(ctx)
		if err != nil {
			return nil, err
		}
		w.conn = c
	}
	return w.conn, nil
}

// shard drains one job. ctx is the run's (cancelled by Ctrl-C), stop is ctx or --fail-fast.
func (w *worker) shard(ctx, stop context.Context, j Job) ShardResult {
	r := ShardResult{Shard: j.Shard}
	if j.Skip != "" {
		r.Status = j.Skip
		return r
	}
	r.Status, r.Result, r.Restored, r.Operation, r.Err = w.drain(ctx, stop, j.Shard, j.Watermark)
	return r
}

// drain claims and drains shard k on the worker's connection.
func (w *worker) drain(ctx, stop context.Context, k query.ShardKey, watermark int64) (Status, Result, bool, string, error) {
	st, res, restored, err := w.drainOne(ctx, stop, k, watermark)
	return st, res, restored, w.op, err
}

// drainOne is drain; w.op is the archive operation it opened.
func (w *worker) drainOne(ctx, stop context.Context, k query.ShardKey, watermark int64) (Status, Result, bool, error) {
	w.op = ""
	t := w.o.Base.Target
	conn, err := w.connect(stop)
	if err != nil {
		w.unreachable = stop.Err() == nil
		return w.stopped(ctx, stop, StatusFailed), Result{}, false, err
	}
	if !w.guarded { // once per connection, before any claim
		if err := Guard(stop, conn); err != nil {
			w.close(ctx)
			return w.stopped(ctx, stop, StatusFailed), Result{}, false, err
		}
		w.guarded = true
	}
	if w.o.Base.HandlerTimeout > 0 && w.idle == nil { // read once per connection, before any claim
		ms, err := IdleTimeout(stop, conn, nil)
		if err != nil {
			w.close(ctx)
			return w.stopped(ctx, stop, StatusFailed), Result{}, false, err
		}
		w.idle = &ms
	}
	if w.o.Follow {
		watermark = 0
	} else if watermark == 0 {
		err := db.ReadTx(stop, conn, func(tx db.Tx) error {
			var err error
			watermark, err = MaxID(stop, tx, t, k)
			return err
		})
		if err != nil {
			w.close(ctx)
			return w.stopped(ctx, stop, StatusFailed), Result{}, false, db.Classify(err, "shard-max-id")
		}
		if watermark == 0 {
			return StatusEmpty, Result{}, false, nil
		}
	}
	claimed, err := claim(stop, conn, t, k)
	switch {
	case errors.Is(err, ErrShardLocked):
		return StatusBeingDrained, Result{}, false, nil
	case errors.Is(err, ErrEmpty):
		return StatusEmpty, Result{}, false, nil
	case err != nil:
		w.close(ctx)
		return w.stopped(ctx, stop, StatusFailed), Result{}, false, db.Classify(err, "drain-claim")
	}
	o := w.o.Base
	if o.Discard {
		op, err := w.o.OpenArchive(k)
		if err != nil { // nothing was deleted: the shard's schedule goes back as it was
			_, uerr := Unclaim(context.WithoutCancel(ctx), conn, t, k, claimed)
			return StatusFailed, Result{}, uerr == nil, fmt.Errorf("opening the archive: %w", err)
		}
		defer op.Close()
		o.Archive, w.op = op, op.Meta.ID
	}
	o.Shard, o.Handler, o.Watermark, o.Claimed = k, w.handler, watermark, claimed
	o.IdleTimeoutMS, o.guarded = w.idle, true
	o.Reconnect = w.o.Connect
	if on := w.o.OnDelivered; on != nil {
		o.OnDelivered = func(m Message) { on(k, m) }
	}
	res, runErr := Run(stop, conn, o)
	restored := false
	if res.Failed != nil && res.Delivered == 0 && errors.Is(res.FailedErr, ErrHandlerUnavailable) {
		_, uerr := Unclaim(context.WithoutCancel(ctx), conn, t, k, claimed)
		restored = uerr == nil
	}
	switch {
	case errors.Is(runErr, context.Canceled):
		return w.stopped(ctx, stop, StatusInterrupted), res, restored, nil
	case res.InDoubt != nil:
		w.close(ctx)
		return StatusFailed, res, restored, fmt.Errorf("%w (COMMIT in doubt: %s)", runErr, res.InDoubt.Outcome)
	case runErr != nil:
		w.close(ctx)
		if res.Uncommitted > 0 {
			runErr = fmt.Errorf("%w; %d delivered message(s) were not committed and will be delivered again", runErr, res.Uncommitted)
		}
		return StatusFailed, res, restored, db.Classify(runErr, "drain")
	case res.Contended:
		return StatusBeingDrained, res, restored, nil
	case res.Failed != nil:
		return StatusFailed, res, restored, fmt.Errorf("delivery of message %d (%s, object %d) failed: %w",
			res.Failed.ID, res.Failed.CategoryName, res.Failed.Object, res.FailedErr)
	}
	return StatusDone, res, restored, nil
}

// stopped is s, or the status of a shard cut short: interrupted on Ctrl-C, stopped by
// --fail-fast.
func (w *worker) stopped(ctx, stop context.Context, s Status) Status {
	switch {
	case ctx.Err() != nil:
		return StatusInterrupted
	case stop.Err() != nil:
		return StatusStopped
	}
	return s
}

// readLeft reads the depth every shard whose turn came was left with, in one statement on a
// connection of its own, even after Ctrl-C (a row must say what is left): a shard whose
// COMMIT is in doubt is left unread (its row says so), a shard never started keeps its
// plan's depth (the caller's).
func readLeft(ctx context.Context, o ParallelOptions, res *ParallelResult) {
	ctx = context.WithoutCancel(ctx)
	var scopes []int
	var ids []int64
	var read []int
	for i, r := range res.Shards {
		if r.Status == StatusNotStarted || r.Status == StatusFailed && r.Result.InDoubt != nil {
			continue
		}
		scopes, ids, read = append(scopes, r.Shard.Scope.Value), append(ids, r.Shard.ID), append(read, i)
	}
	if len(read) == 0 {
		return
	}
	depths, err := listedDepths(ctx, o, scopes, ids)
	for _, i := range read {
		r := &res.Shards[i]
		d, ok := depths[query.ShardRef{Scope: r.Shard.Scope.Value, ID: r.Shard.ID}]
		switch {
		case ok:
			r.Left = &d
		case r.Err == nil:
			if err == nil {
				err = errors.New("no depth was read")
			}
			r.Err = fmt.Errorf("the shard's state after the drain could not be read: %w", err)
		}
	}
}

// listedDepths counts the rows of the shards scopes[i]/ids[i] on a fresh connection.
func listedDepths(ctx context.Context, o ParallelOptions, scopes []int, ids []int64) (map[query.ShardRef]int64, error) {
	conn, err := o.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	st := query.ShardDepthsListed(o.Base.Target, scopes, ids)
	var rows []query.ListedDepthRow
	err = db.ReadTx(ctx, conn, func(tx db.Tx) error {
		var err error
		rows, err = query.Picked[query.ListedDepthRow](ctx, tx, st)
		return err
	})
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	out := make(map[query.ShardRef]int64, len(rows))
	for _, r := range rows {
		out[query.ShardRef{Scope: r.Scope, ID: r.ID}] = r.Depth
	}
	return out, nil
}

// ParallelCard is the summary card of drain SELECTORS: its json tags are the JSON keys.
type ParallelCard struct {
	Selected     int   `json:"selected"`
	Done         int   `json:"done"`
	Empty        int   `json:"empty"`
	Failed       int   `json:"failed"`
	BeingDrained int   `json:"being_drained"`
	KillSwitched int   `json:"kill_switched"`
	Interrupted  int   `json:"interrupted"`
	NotStarted   int   `json:"not_started"`
	Delivered    int   `json:"delivered"`
	Discarded    int   `json:"discarded"`
	Deleted      int64 `json:"deleted"`
	Left         int64 `json:"left"`
	// Archive is the file of a discard's operations (one per shard drained), Operations how
	// many it wrote, Restore the command that puts every one back.
	Archive    string `json:"archive,omitempty"`
	Operations int    `json:"operations,omitempty"`
	Restore    string `json:"restore,omitempty" render:"human"`
}

// ParallelShardRow is one shard's row of drain SELECTORS: left is null when unknown (the
// drain of the shard failed before it could count), error null when none; discarded counts
// the coalesce groups --handler discard archived and deleted (delivered is then 0).
type ParallelShardRow struct {
	Scope     int     `json:"shard_scope" render:"machine"`
	ScopeName string  `json:"scope"`
	ID        int64   `json:"shard_identifier"`
	Outcome   string  `json:"outcome"`
	Delivered int     `json:"delivered"`
	Discarded int     `json:"discarded"`
	Deleted   int64   `json:"deleted"`
	Left      *int64  `json:"left"`
	Error     *string `json:"error"`
	// Operation is the archive operation of the shard's discarded rows (null: none).
	Operation *string `json:"operation" render:"machine"`
}
