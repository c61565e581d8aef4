package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// A bulk repair (reschedule, skip --category, compact over a selector) works on its selected
// shards a batch at a time, each batch its own short write transaction: a batch holds the
// head-row locks of at most BatchShards shards (and the rows they hold) for as long as its
// statements take, never a drainer's for longer than --lock-timeout (SKIP LOCKED: a shard a
// drainer holds is reported being drained and left for the next run). A signal stops the run
// between batches: the batch in flight commits or rolls back whole, and the summary says what
// is done and what is left, so running the same command again continues.

// DefaultBatchShards bounds the shards of one batch, and DefaultBatchRows the rows they hold
// (the selection's depths): an UPDATE or DELETE of a row costs some 30-70 µs with Sentry's
// four indexes (measured in make bench, docs/performance.md), so 5,000 rows hold their locks
// for well under a second. A shard deeper than that is a batch of its own.
const (
	DefaultBatchShards = 100
	DefaultBatchRows   = 5000
)

// BulkOutcome is what became of one selected shard.
type BulkOutcome string

// The outcomes of a shard in a bulk repair.
const (
	BulkDone         BulkOutcome = "done"
	BulkBeingDrained BulkOutcome = "being drained"
	BulkEmpty        BulkOutcome = "empty"
	BulkFailed       BulkOutcome = "failed"
	BulkInDoubt      BulkOutcome = "in doubt"
)

// BulkShard is one shard's line of a bulk repair's result.
type BulkShard struct {
	Scope   int         `json:"shard_scope"`
	ID      int64       `json:"shard_identifier"`
	Outcome BulkOutcome `json:"outcome"`
	Rows    int64       `json:"rows"`
	Error   string      `json:"error,omitempty"`
}

// BulkSummary is a bulk repair's account: its JSON fields are the summary document's.
type BulkSummary struct {
	BulkCounts
	// Settled is what the settle of a batch whose COMMIT got no answer found, on a fresh
	// connection ("" when every COMMIT was answered): committed (its shards are done),
	// not committed (failed, unchanged), in doubt (its shards in doubt). The run stops there.
	Settled Settlement `json:"commit_settled,omitempty"`
	// Mode is a reschedule's (all-rows, or group-heads), "" for skip and compact.
	Mode string `json:"mode,omitempty"`
	// settleErr is why the settle could not tell (Settled Unsettled).
	settleErr error
	// markerErr is the batch whose transaction committed and whose archive markers could not
	// be written (Unmarked counts its shards).
	markerErr *UnmarkedError
	// Shards has a line per shard the run reached (done, being drained, empty, failed, in doubt).
	Shards []BulkShard `json:"shards"`
}

// Partial reports whether some shards failed or are in doubt.
func (s BulkSummary) Partial() bool { return s.Failed > 0 || s.InDoubt > 0 }

// Failures are the shards that failed or are in doubt.
func (s BulkSummary) Failures() []BulkShard {
	var out []BulkShard
	for _, sh := range s.Shards {
		if sh.Outcome == BulkFailed || sh.Outcome == BulkInDoubt {
			out = append(out, sh)
		}
	}
	return out
}

// BatchFunc does a bulk repair's work on one batch of shards inside tx and says what became
// of each (query.BulkShardRow: empty, being drained, rows changed).
type BatchFunc func(ctx context.Context, tx db.Tx, refs []query.ShardRef) ([]query.BulkShardRow, error)

// Bulk runs a bulk repair over Shards.
type Bulk struct {
	Shards []query.ShardRef
	// Depths, when set, are the shards' rows (parallel to Shards): a batch holds at most
	// BatchRows of them, however few shards that is.
	Depths      []int64
	BatchShards int
	BatchRows   int64
	// After, when set, runs after each batch's transaction ended (err: how), before the next:
	// skip and compact write their archive markers there. It returns err, or its own failure.
	After func(err error, committing bool) error
	// Progress, when set, hears the shards done so far after each batch.
	Progress func(shards int, rows int64)
	// MaxFailedBatches stops the run after this many batches failed in a row (default 3): a
	// server that went away fails every batch after it.
	MaxFailedBatches int
	// Settle, when set, settles the COMMIT of a batch that got no answer (db.InDoubtError) on
	// a fresh connection, as the single-shard repairs do: refs and rows are the batch's shards
	// and what its statements said of them before the COMMIT.
	Settle func(ctx context.Context, refs []query.ShardRef, rows []query.BulkShardRow) (Settlement, error)
	// OnBatch, when set, hears each batch's shard lines once it ended (the run's journal).
	OnBatch func(lines []BulkShard)
}

// Run works through the shards, a batch per write transaction on conn. It stops between
// batches when ctx is cancelled (Interrupted, Left), after a COMMIT in doubt (its shards
// in doubt: the summary says so, never done or not done), or after MaxFailedBatches failures
// in a row. The error is the last batch failure's, nil when none failed.
func (b *Bulk) Run(ctx context.Context, conn *db.Conn, batch BatchFunc) (BulkSummary, error) {
	size := b.BatchShards
	if size <= 0 {
		size = DefaultBatchShards
	}
	maxFailed := b.MaxFailedBatches
	if maxFailed <= 0 {
		maxFailed = 3
	}
	sum := BulkSummary{BulkCounts: BulkCounts{Selected: len(b.Shards)}}
	// The replica check once for the run, not once a batch (db.WriteTx's): a round trip and
	// a transaction of its own per batch, as the drain does.
	if len(b.Shards) > 0 {
		if err := db.CheckPrimary(ctx, conn, "change anything"); err != nil {
			return sum, err
		}
	}
	var lastErr error
	failedInARow := 0
	work := context.WithoutCancel(ctx) // a batch in flight is never cut by the signal
	for start, end := 0, 0; start < len(b.Shards); start = end {
		if ctx.Err() != nil {
			sum.Interrupted = true
			sum.Left = len(b.Shards) - start
			break
		}
		end = b.batchEnd(start, size)
		refs := b.Shards[start:end]
		rows, err := b.runBatch(work, conn, refs, batch)
		sum.Batches++
		lines := len(sum.Shards)
		var stop error
		var unmarked *UnmarkedError
		switch {
		case err == nil:
			failedInARow = 0
			sum.add(refs, rows)
		case errors.As(err, &unmarked):
			// The batch committed; only its archive's markers failed (a full disk): its shards
			// are done, and the run stops (the next batch's rows could not be staged either).
			sum.add(refs, rows)
			sum.Unmarked += len(refs)
			sum.markerErr = unmarked
			stop = err
		case db.IsInDoubt(err):
			sum.settle(work, b.Settle, refs, rows, err)
			stop = err
		default:
			lastErr = err
			sum.mark(refs, BulkFailed, err)
			if failedInARow++; failedInARow >= maxFailed {
				stop = fmt.Errorf("%w (%d batches failed in a row: stopped)", err, failedInARow)
			}
		}
		if b.OnBatch != nil {
			b.OnBatch(sum.Shards[lines:])
		}
		if b.Progress != nil {
			b.Progress(start+len(refs), sum.Rows)
		}
		if stop != nil {
			sum.Left = len(b.Shards) - start - len(refs)
			return sum.sorted(), stop
		}
	}
	return sum.sorted(), lastErr
}

// batchEnd is where the batch starting at start ends: at most size shards, and at most
// BatchRows rows of them (always at least one shard).
func (b *Bulk) batchEnd(start, size int) int {
	end := min(start+size, len(b.Shards))
	if len(b.Depths) != len(b.Shards) {
		return end
	}
	limit := b.BatchRows
	if limit <= 0 {
		limit = DefaultBatchRows
	}
	var rows int64
	for i := start; i < end; i++ {
		if rows += b.Depths[i]; rows > limit && i > start {
			return i
		}
	}
	return end
}

// runBatch is one batch's write transaction and its After.
func (b *Bulk) runBatch(ctx context.Context, conn *db.Conn, refs []query.ShardRef, batch BatchFunc) ([]query.BulkShardRow, error) {
	var rows []query.BulkShardRow
	committing := false
	err := db.RunWriteTx(ctx, conn, nil, func(tx db.Tx) error {
		var err error
		rows, err = batch(ctx, tx, refs)
		committing = err == nil
		return err
	})
	if b.After != nil {
		err = b.After(err, committing)
	}
	return rows, err
}

// add counts a committed batch's shards.
func (s *BulkSummary) add(refs []query.ShardRef, rows []query.BulkShardRow) {
	seen := make(map[query.ShardRef]query.BulkShardRow, len(rows))
	for _, r := range rows {
		seen[query.ShardRef{Scope: r.Scope, ID: r.ID}] = r
	}
	for _, ref := range refs {
		r, ok := seen[ref]
		line := BulkShard{Scope: ref.Scope, ID: ref.ID, Rows: r.Rows}
		switch {
		case !ok || r.Empty:
			line.Outcome = BulkEmpty
			s.Empty++
		case r.BeingDrained:
			line.Outcome = BulkBeingDrained
			s.BeingDrained++
		default:
			line.Outcome = BulkDone
			s.Done++
			s.Rows += r.Rows
		}
		s.Shards = append(s.Shards, line)
	}
}

// settle settles a batch whose COMMIT got no answer (doubt) with fn and counts its shards by
// what it found: done when it committed, failed when it did not, in doubt when it could not
// tell (no fn: in doubt).
func (s *BulkSummary) settle(ctx context.Context, fn func(context.Context, []query.ShardRef, []query.BulkShardRow) (Settlement, error), refs []query.ShardRef, rows []query.BulkShardRow, doubt error) {
	s.Settled = Unsettled
	if fn != nil {
		s.Settled, s.settleErr = fn(ctx, refs, rows)
	}
	switch s.Settled {
	case Committed:
		s.add(refs, rows)
	case NotCommitted:
		s.mark(refs, BulkFailed, errNotCommitted)
	default:
		s.mark(refs, BulkInDoubt, doubt)
	}
}

// MarkerError is the committed batch whose archive markers could not be written (nil: none).
func (s BulkSummary) MarkerError() *UnmarkedError { return s.markerErr }

// SettleError is why the settle of a COMMIT in doubt could not tell (nil when it could, or
// when there was none).
func (s BulkSummary) SettleError() error { return s.settleErr }

// mark gives every shard of a batch that did not commit the outcome o.
func (s *BulkSummary) mark(refs []query.ShardRef, o BulkOutcome, err error) {
	for _, ref := range refs {
		s.Shards = append(s.Shards, BulkShard{Scope: ref.Scope, ID: ref.ID, Outcome: o, Error: err.Error()})
		if o == BulkInDoubt {
			s.InDoubt++
		} else {
			s.Failed++
		}
	}
}

func (s BulkSummary) sorted() BulkSummary {
	sort.SliceStable(s.Shards, func(i, j int) bool {
		a, b := s.Shards[i], s.Shards[j]
		return a.Scope < b.Scope || a.Scope == b.Scope && a.ID < b.ID
	})
	return s
}

// BulkArchive archives and deletes the rows of a bulk skip or compact: one archive operation
// per shard (restore checks every row against its operation's shard), all in one file, so
// `outboxctl restore FILE --all` puts the whole run back and `--operation` one shard.
type BulkArchive struct {
	Path string
	// ID is the bulk operation's id: each shard's operation is ID.N (N from 1, in the order
	// the run reached them), so a run's operations share a prefix and never collide (random
	// suffixes of 1,000 operations started in one second did, one run in thirty).
	ID     string
	Target query.Target
	Why    query.Why
	// Meta is the operation of a shard (its ID is filled here).
	Meta  func(query.ShardRef) OperationMeta
	Warnf func(format string, args ...any)
	// Prior is the number of operations the run wrote before (a resumed run numbers on).
	Prior int
	// Resumed says the run is a resume: a batch killed before its journal line staged
	// operations Prior does not count, so the first open numbers on from the highest ID.N
	// the archive holds (restore refuses two operations of one id with other fields).
	Resumed bool
	// KeepBackoff leaves a shard whose head row was deleted in its backoff (--keep-backoff);
	// else it is made due now. MadeDue counts the shards made due, pendingDue those of the
	// batch in flight.
	KeepBackoff         bool
	MadeDue, pendingDue int
	// Operations are the operation ids written, in order.
	Operations []string
	pending    []*ArchivedDelete
	// doubt are the operations of the batch whose COMMIT got no answer, until Settle, and
	// doubtDue the shards it made due.
	doubt    []*ArchivedDelete
	doubtDue int
	// file is the archive, opened at the first shard with rows: one file, one fsync a batch.
	file *ArchiveHandle
}

// Close closes the archive file (every line a batch wrote was synced by its Finish).
func (ba *BulkArchive) Close() error {
	if ba.file == nil {
		return nil
	}
	return ba.file.Close()
}

// open starts the operation of shard k on the run's archive file.
func (ba *BulkArchive) open(k query.ShardRef) (*Operation, error) {
	if ba.file == nil {
		if ba.Resumed && ba.ID != "" {
			n, err := HighestOperation(ba.Path, ba.ID)
			if err != nil {
				return nil, err
			}
			ba.Prior = max(ba.Prior, n)
		}
		f, err := OpenArchiveHandle(ba.Path)
		if err != nil {
			return nil, err
		}
		ba.file = f
	}
	meta := ba.Meta(k)
	if ba.ID != "" {
		meta.ID = fmt.Sprintf("%s.%d", ba.ID, ba.Prior+len(ba.Operations)+1)
	}
	return ba.file.OpenOn(meta)
}

// HighestOperation is the highest N of the operations id.N in the archive at path (0: none,
// or no file). It reads only each line's kind and operation id, line by line as restore
// reads the file (eachArchiveLine: a last line cut short ends the read, a cut line a later
// run sealed is skipped); a malformed line is an error.
func HighestOperation(path, id string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the archive to number on: %w", err)
	}
	defer f.Close()
	highest, prefix := 0, id+"."
	_, _, err = eachArchiveLine(f, DefaultMaxArchiveLine, func(_ int, body []byte) error {
		var l struct {
			Kind string `json:"kind"`
			Op   string `json:"op"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return err
		}
		if rest, ok := strings.CutPrefix(l.Op, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > highest {
				highest = n
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading the archive %s to number on: line %w", path, err)
	}
	return highest, nil
}

// Batch is the BatchFunc of a bulk skip or compact: it locks the batch's head rows (SKIP
// LOCKED), reads the rows rowsOf lists in the shards it locked, and stages and deletes each
// shard's rows in that shard's operation. Finish (as the Bulk's After) marks them.
func (ba *BulkArchive) Batch(rowsOf func(shards query.Statement) query.Statement) BatchFunc {
	return func(ctx context.Context, tx db.Tx, refs []query.ShardRef) ([]query.BulkShardRow, error) {
		res, err := query.Run(ctx, tx, query.BulkLockHeads(ba.Target, query.ShardBatch(refs)))
		if err != nil {
			return nil, db.Classify(err, "bulk-lock-heads")
		}
		locks, err := query.Rows[query.BulkHeadRow](res)
		if err != nil {
			return nil, err
		}
		heads := make([]query.BulkShardRow, len(locks))
		var locked []query.ShardRef
		for i, h := range locks {
			if heads[i] = h.Shard(); !h.Empty && !h.BeingDrained {
				locked = append(locked, query.ShardRef{Scope: h.Scope, ID: h.ID})
			}
		}
		if len(locked) == 0 {
			return heads, nil
		}
		sel := rowsOf(query.ShardBatch(locked))
		rowsRes, err := query.Run(ctx, tx, sel)
		if err != nil {
			return nil, db.Classify(err, sel.Name)
		}
		rows, err := RowsFromResult(rowsRes, nil)
		if err != nil {
			return nil, err
		}
		deleted, err := ba.stageAndDelete(ctx, tx, rows)
		if err != nil {
			return nil, err
		}
		for i := range heads {
			heads[i].Rows = deleted[query.ShardRef{Scope: heads[i].Scope, ID: heads[i].ID}]
		}
		return heads, ba.headsRemoved(ctx, tx, locks, rows, deleted)
	}
}

// headsRemoved makes due now, in the batch's transaction, every shard whose head row the
// batch deleted (its backoff was earned by that row), as skip MESSAGE_ID and compact SCOPE ID
// do, unless KeepBackoff: query.BulkMakeDue, which skips a shard whose new head a drainer
// holds (it is being worked on) and leaves the rows that are due with THE_PAST already. The head row cannot have gone otherwise: the batch holds its
// lock. MadeDue counts them once the batch commits.
func (ba *BulkArchive) headsRemoved(ctx context.Context, tx db.Tx, locks []query.BulkHeadRow, rows []Row, deleted map[query.ShardRef]int64) error {
	if ba.KeepBackoff {
		return nil
	}
	staged := make(map[int64]bool, len(rows))
	for _, r := range rows {
		staged[r.ID] = true
	}
	var gone []query.ShardRef
	for _, h := range locks {
		ref := query.ShardRef{Scope: h.Scope, ID: h.ID}
		if h.HeadID != nil && staged[*h.HeadID] && deleted[ref] > 0 {
			gone = append(gone, ref)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	st := query.BulkMakeDue(ba.Target, query.ShardBatch(gone), ba.Why)
	res, err := query.Run(ctx, tx, st)
	if err != nil {
		return db.Classify(err, st.Name)
	}
	due, err := query.Rows[query.BulkShardRow](res)
	for _, d := range due {
		if !d.Empty && !d.BeingDrained {
			ba.pendingDue++
		}
	}
	return err
}

// stageAndDelete groups rows by shard, stages each group in its shard's own operation (one
// file: synced once for the batch), then deletes every staged id, a chunk at a time; it
// returns the rows deleted per shard.
func (ba *BulkArchive) stageAndDelete(ctx context.Context, tx db.Tx, rows []Row) (map[query.ShardRef]int64, error) {
	byShard := map[query.ShardRef][]Row{}
	var order []query.ShardRef
	for _, r := range rows {
		k := query.ShardRef{Scope: r.ShardScope, ID: r.ShardID}
		if _, ok := byShard[k]; !ok {
			order = append(order, k)
		}
		byShard[k] = append(byShard[k], r)
	}
	dels := make([]*ArchivedDelete, 0, len(order))
	for _, k := range order {
		op, err := ba.open(k)
		if err != nil {
			return nil, err
		}
		del := &ArchivedDelete{Op: op, Target: ba.Target, Why: ba.Why, Warnf: ba.Warnf}
		ba.pending = append(ba.pending, del)
		ba.Operations = append(ba.Operations, op.Meta.ID)
		if err := del.Stage(byShard[k]); err != nil {
			return nil, err
		}
		dels = append(dels, del)
	}
	counts, err := DeleteStaged(ctx, tx, ba.Target, ba.Why, dels)
	if err != nil {
		return nil, err
	}
	out := make(map[query.ShardRef]int64, len(order))
	for i, k := range order {
		out[k] = counts[i]
	}
	return out, nil
}

// Finish writes the markers of the batch's operations given how its transaction ended, and
// closes them: the Bulk's After.
func (ba *BulkArchive) Finish(err error, committing bool) error {
	pending := ba.pending
	ba.pending = nil
	due := ba.pendingDue
	ba.pendingDue = 0
	switch {
	case err == nil:
		ba.MadeDue += due
	case db.IsInDoubt(err):
		ba.doubt, ba.doubtDue = pending, due // no marker until Settle finds out
	}
	out := err
	for _, del := range pending {
		if ferr := del.Finish(err, committing); ferr != nil && ferr != err { //nolint:errorlint // Finish returns err itself when it adds nothing
			out = ferr
		}
	}
	for _, del := range pending { // the markers, synced once (one file)
		if serr := del.Op.Sync(); serr != nil && out == nil {
			out = serr
		}
		_ = del.Op.Close()
	}
	if out != nil && err == nil { // committed: the run's markers are the file's, restore --all
		if ue := (*UnmarkedError)(nil); errors.As(out, &ue) {
			out = ue.Err
		}
		out = &UnmarkedError{Path: ba.Path, Err: out}
	}
	return out
}

// Settle settles, on conn (a fresh connection), the batch whose COMMIT got no answer: one
// read of whether its deleted ids are still in the table (the batch's transaction commits
// whole), then each of its operations marked from what it found (commit markers: restore
// puts the rows back; abort markers; none while in doubt), synced.
func (ba *BulkArchive) Settle(ctx context.Context, conn *db.Conn) (Settlement, error) {
	doubt := ba.doubt
	ba.doubt = nil
	var ids []int64
	for _, del := range doubt {
		ids = append(ids, del.doubtIDs()...)
	}
	s, err := SettleDeleted(ctx, conn, ba.Target, ids)
	if s == Committed {
		ba.MadeDue += ba.doubtDue
	}
	ba.doubtDue = 0
	for _, del := range doubt {
		if merr := del.settled(s); merr != nil && err == nil {
			err = merr
		}
	}
	if ba.file != nil {
		if serr := ba.file.Sync(); serr != nil && err == nil {
			err = serr
		}
	}
	return s, err
}

// SettleRescheduledBatch settles, on conn, a bulk reschedule batch whose COMMIT got no
// answer: rows are what its statement said of each shard; tells says which shards read
// differently once rescheduled: those with a row not at THE_PAST when selected (their next
// attempt, the earliest scheduled_for, was not THE_PAST), whichever the batch gives THE_PAST
// to every row. The transaction commits whole, so one such shard whose every row carries it
// means committed (a Sentry worker may have claimed another meanwhile, giving it a fresh
// backoff); none means not committed. In mode group-heads the rows read are each coalesce
// group's lowest, the only ones the batch rewrote (a shard not at THE_PAST when selected had
// none there). With no shard that can tell (every one was at THE_PAST
// already: only scheduled_from, which Sentry does not read then, would differ), it says so:
// Unsettled and ErrRescheduleUntellable, never a guess.
func SettleRescheduledBatch(ctx context.Context, conn *db.Conn, t query.Target, mode query.RescheduleMode, rows []query.BulkShardRow, tells func(query.ShardRef) bool) (Settlement, error) {
	asked := false
	for _, r := range rows {
		ref := query.ShardRef{Scope: r.Scope, ID: r.ID}
		if r.Rows == 0 || r.Empty || r.BeingDrained || !tells(ref) {
			continue
		}
		asked = true
		s, err := SettleRescheduled(ctx, conn, t, query.ShardKey{Scope: query.Enum{Value: r.Scope}, ID: r.ID}, 0, mode)
		if err != nil || s == Committed {
			return s, err
		}
	}
	if !asked {
		return Unsettled, ErrRescheduleUntellable
	}
	return NotCommitted, nil
}

// ErrRescheduleUntellable is a reschedule batch whose COMMIT got no answer and none of whose
// shards can tell: each was due at THE_PAST when selected.
var ErrRescheduleUntellable = errors.New("every shard of the batch was due at THE_PAST when selected, so its rows read the same whether it committed or not (Sentry reads them the same too)")

// RescheduleBatch is the BatchFunc of a bulk reschedule in mode: every shard of the batch
// whose head row it can lock due now with a fresh backoff, in one statement
// (query.BulkReschedule).
func RescheduleBatch(t query.Target, mode query.RescheduleMode, why query.Why) BatchFunc {
	return func(ctx context.Context, tx db.Tx, refs []query.ShardRef) ([]query.BulkShardRow, error) {
		st := query.BulkReschedule(t, query.ShardBatch(refs), mode, why)
		res, err := query.Run(ctx, tx, st)
		if err != nil {
			return nil, db.Classify(err, st.Name)
		}
		return query.Rows[query.BulkShardRow](res)
	}
}

// BulkCard is a bulk repair's summary card: its json tags are the summary's JSON keys (the
// archive fields only when the repair archived rows; restore is the undo, for a person).
type BulkCard struct {
	BulkCounts
	// Settled is what the settle of a COMMIT in doubt found (BulkSummary.Settled).
	Settled string `json:"commit_settled,omitempty"`
	// Mode is a reschedule's: all-rows, or group-heads (only each coalesce group's lowest row).
	Mode       string `json:"mode,omitempty"`
	Archive    string `json:"archive,omitempty"`
	Operation  string `json:"operation,omitempty"`
	Operations int    `json:"operations,omitempty"`
	// MadeDue counts the shards a skip or compact made due now, their head row removed.
	MadeDue int    `json:"made_due,omitempty"`
	Restore string `json:"restore,omitempty" render:"human"`
	// Retry is the command that retries exactly the shards the run left (being drained,
	// failed, in doubt, not reached): its --resume; "" when it left none. On a terminal only: a
	// script has the operation id.
	Retry string `json:"retry,omitempty" render:"human"`
	// Next is the command that checks the repair: doctor's stuck check, on the same target.
	Next render.Commands `json:"next"`
}

// Card is the summary's card of s.
func (s BulkSummary) Card() BulkCard {
	return BulkCard{BulkCounts: s.BulkCounts, Settled: string(s.Settled), Mode: s.Mode}
}

// BulkCounts are a bulk run's counts, in its summary and on its card (their JSON keys, in
// place: embedded).
type BulkCounts struct {
	Selected     int   `json:"selected"`
	Done         int   `json:"done"`
	BeingDrained int   `json:"being_drained"`
	Empty        int   `json:"empty"`
	Failed       int   `json:"failed"`
	InDoubt      int   `json:"in_doubt"`
	Left         int   `json:"left"`
	Rows         int64 `json:"rows_changed"`
	Batches      int   `json:"batches"`
	// Interrupted is true when a signal stopped the run between batches (Left shards untouched).
	Interrupted bool `json:"interrupted"`
	// Unmarked counts the done shards whose batch committed but whose archive markers could
	// not be written (a full disk): their rows are deleted and archived, and restore settles
	// them. The run stops there.
	Unmarked int `json:"unmarked,omitempty"`
}

// BulkShardRow is one row of a bulk repair's shards table: the scope as its integer (for
// scripts) and its name.
type BulkShardRow struct {
	Scope     int    `json:"shard_scope" render:"machine"`
	ScopeName string `json:"scope"`
	ID        int64  `json:"shard_identifier"`
	Outcome   string `json:"outcome"`
	Rows      int64  `json:"rows"`
	Error     string `json:"error"`
}
