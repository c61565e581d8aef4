package drain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// ArchivedDelete is the one protocol by which rows are deleted without delivery (a drain's
// discard and kill-switch trim, compact, skip): inside a write transaction ArchiveAndDelete
// stages the rows in the archive (synced) and deletes exactly the ids it staged; after the
// transaction, Finish writes each staged batch's second phase. A drain calls
// ArchiveAndDelete several times in one transaction (one call per group), a repair once.
type ArchivedDelete struct {
	Op     *Operation
	Target query.Target
	// Why marks the DELETE (--reason in pg_stat_activity).
	Why query.Why
	// Warnf, when set, hears of an abort marker that could not be written: the rows were not
	// deleted, but the archive shows their batch as staged (restore reports it and checks
	// the table).
	Warnf func(format string, args ...any)
	// Progress, when set, hears how many rows DeleteArchived has deleted so far (the server's
	// count, not yet committed) after each chunk.
	Progress func(deleted int64)
	// chunk replaces query.DeleteChunk in tests (progress over a small shard).
	chunk int
	// staged are the batches of the transaction in progress, with the ids it deleted;
	// doubt those of a transaction whose COMMIT got no answer, until Settle marks them.
	staged []stagedBatch
	doubt  []stagedBatch
}

// stagedBatch is an archive batch and the ids its transaction deleted.
type stagedBatch struct {
	batch   Batch
	deleted []int64
}

// statementError is a failure of one of ArchiveAndDelete's statements, naming it for
// DeleteArchived's db.Classify; it reads as the error itself, so the drain, which names
// its failures "drain", says what it always said.
type statementError struct {
	name string
	err  error
}

func (e *statementError) Error() string { return e.err.Error() }
func (e *statementError) Unwrap() error { return e.err }

// ArchiveAndDelete reads the rows sel selects whole (the archive's columns, see
// RowsFromResult), stages them as one batch, and deletes exactly the ids it staged, a
// chunk at a time (query.DeleteChunk: each DELETE finishes well inside the statement
// timeout, as Sentry's slices do). before gives each row's schedule from before a drain's
// claim (nil: as read). It returns the ids deleted, which the batch's commit marker names
// (another session may have deleted some of the staged rows meanwhile).
//
// Deleting the staged ids, never re-running sel, means a row that becomes visible between
// the read and the DELETE (a late commit) is never deleted unarchived.
func (a *ArchivedDelete) ArchiveAndDelete(ctx context.Context, tx pgx.Tx, sel query.Statement, before *Schedules) ([]int64, error) {
	if a == nil || a.Op == nil {
		return nil, ErrNoArchive
	}
	res, err := query.Run(ctx, tx, sel)
	if err != nil {
		return nil, &statementError{sel.Name, err}
	}
	rows, err := RowsFromResult(res, before)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return a.StageAndDelete(ctx, tx, rows)
}

// StageAndDelete is ArchiveAndDelete for rows already read whole in tx (a bulk repair reads
// a batch of shards' rows in one statement and hands each shard's operation its own).
func (a *ArchivedDelete) StageAndDelete(ctx context.Context, tx pgx.Tx, rows []Row) ([]int64, error) {
	if a == nil || a.Op == nil {
		return nil, ErrNoArchive
	}
	b, err := a.Op.Stage(rows)
	if err != nil {
		return nil, err
	}
	a.staged = append(a.staged, stagedBatch{batch: b})
	sb := &a.staged[len(a.staged)-1]
	for ids := b.IDs; len(ids) > 0; {
		n := min(len(ids), query.DeleteChunk)
		del := query.DeleteArchivedIDs(a.Target, ids[:n], a.Why)
		out, err := query.Run(ctx, tx, del)
		if err != nil {
			return sb.deleted, &statementError{del.Name, err}
		}
		got, err := query.Rows[deletedID](out)
		if err != nil {
			return sb.deleted, err
		}
		for _, r := range got {
			sb.deleted = append(sb.deleted, r.ID)
		}
		ids = ids[n:]
	}
	return sb.deleted, nil
}

// Stage stages rows as one batch of a's operation, without deleting them: DeleteStaged
// deletes the staged rows of several ArchivedDeletes (a bulk repair's shards) at once, once
// their archive is synced.
func (a *ArchivedDelete) Stage(rows []Row) error {
	if a == nil || a.Op == nil {
		return ErrNoArchive
	}
	b, err := a.Op.Stage(rows)
	if err != nil {
		return err
	}
	a.staged = append(a.staged, stagedBatch{batch: b})
	return nil
}

// DeleteStaged syncs the archives of dels and deletes, in tx, the ids their last Stage
// staged, query.DeleteChunk at a time across all of them; each batch's commit marker then
// names the ids it deleted. It returns the rows deleted per ArchivedDelete.
func DeleteStaged(ctx context.Context, tx pgx.Tx, t query.Target, why query.Why, dels []*ArchivedDelete) ([]int64, error) {
	owner := map[int64]int{}
	var ids []int64
	for i, a := range dels {
		if err := a.Op.Sync(); err != nil {
			return nil, err
		}
		if len(a.staged) == 0 {
			continue
		}
		for _, id := range a.staged[len(a.staged)-1].batch.IDs {
			owner[id] = i
			ids = append(ids, id)
		}
	}
	counts := make([]int64, len(dels))
	for len(ids) > 0 {
		n := min(len(ids), query.DeleteChunk)
		del := query.DeleteArchivedIDs(t, ids[:n], why)
		out, err := query.Run(ctx, tx, del)
		if err != nil {
			return counts, db.Classify(err, del.Name)
		}
		got, err := query.Rows[deletedID](out)
		if err != nil {
			return counts, err
		}
		for _, r := range got {
			i := owner[r.ID]
			sb := &dels[i].staged[len(dels[i].staged)-1]
			sb.deleted = append(sb.deleted, r.ID)
			counts[i]++
		}
		ids = ids[n:]
	}
	return counts, nil
}

// deletedID is a row of query.DeleteArchivedIDs.
type deletedID struct {
	ID int64 `db:"id"`
}

// Finish writes the second phase of the batches the transaction staged, given how it
// ended (err; committing: its COMMIT was sent, so a failure leaves the outcome unknown):
// commit markers naming the deleted ids after a commit, abort markers after a certain
// rollback, nothing when the COMMIT's outcome is unknown (restore then reports the batch
// and checks the table). It returns err, or what went wrong writing the markers.
func (a *ArchivedDelete) Finish(err error, committing bool) error {
	if a == nil {
		return err
	}
	staged := a.staged
	a.staged = nil
	if len(staged) == 0 {
		return err
	}
	switch {
	case err != nil && !committing:
		for _, sb := range staged {
			if aerr := a.Op.Abort(sb.batch, err); aerr != nil && a.Warnf != nil {
				a.Warnf("the rows were not deleted, but the archive could not say so: %v", aerr)
			}
		}
		return err
	case db.IsInDoubt(err):
		a.doubt = append(a.doubt, staged...) // Settle marks them from what it finds
		return err
	case err != nil:
		return fmt.Errorf("%w; archive %s keeps the rows staged without a commit marker: outboxctl restore reports them and checks the table", err, a.Op.Path)
	}
	for _, sb := range staged {
		if cerr := a.Op.CommitDeleted(sb.batch, sb.deleted); cerr != nil {
			return &UnmarkedError{Path: a.Op.Path, Operation: a.Op.Meta.ID, Err: cerr}
		}
	}
	return nil
}

// UnmarkedError is a transaction that committed (its rows are deleted, and staged in the
// archive) whose commit markers could not be written or synced (a full disk): its batches
// read as staged, and restore settles them against the table (every id gone: committed).
type UnmarkedError struct {
	Path string
	// Operation is the operation whose marker failed ("" for a bulk run's: the file's).
	Operation string
	Err       error
}

func (e *UnmarkedError) Error() string {
	return fmt.Sprintf("the rows were deleted and archived, but their commit marker could not be written (%v): %s", e.Err, e.RestoreHint())
}

func (e *UnmarkedError) Unwrap() error { return e.Err }

// RestoreHint is the restore that puts the rows back.
func (e *UnmarkedError) RestoreHint() string {
	if e.Operation == "" {
		return fmt.Sprintf("outboxctl restore %s --all puts them back (it settles batches with no marker against the table)", e.Path)
	}
	return fmt.Sprintf("outboxctl restore %s --operation %s puts them back (it settles batches with no marker against the table)", e.Path, e.Operation)
}

// DeleteArchived is a repair's archive-then-delete (compact, skip): sel's rows archived and
// deleted in one write transaction on conn (after db.CheckPrimary), then marked. It
// returns how many rows were deleted.
//
// sel is read through a cursor, ArchiveChunk rows at a time, each chunk staged (one
// archive batch, synced) and then deleted: one evaluation of sel and one transaction, as
// before, but a compact of a 1M-row hot shard no longer reads every row (650 MB) before it
// stages one, and Progress hears the server's count after every chunk's DELETE (#40: the
// line said 0 for 36 s, then done).
func (a *ArchivedDelete) DeleteArchived(ctx context.Context, conn *db.Conn, sel query.Statement) (int64, error) {
	var deleted int64
	committing := false
	err := db.WriteTx(ctx, conn, func(tx db.Tx) error {
		var err error
		if deleted, err = a.deleteChunks(ctx, tx, sel); err != nil {
			var se *statementError
			if errors.As(err, &se) {
				return db.Classify(se.err, se.name)
			}
			return err
		}
		committing = true
		return nil
	})
	return deleted, a.Finish(err, committing)
}

// archiveCursor is the cursor deleteChunks reads a repair's rows through.
const archiveCursor = "outboxctl_archive_rows"

// ArchiveChunk is how many rows DeleteArchived reads, stages and deletes at a time: a chunk of
// a hot shard's rows (~650 bytes of archive line each) takes well under a second, so the
// progress line moves at least every 2 s even on a loaded machine (10,000 took 2.8 s at a load
// of 40), and a thousand batches' markers and fsyncs for a million rows cost little.
const ArchiveChunk = 2500

// deleteChunks archives and deletes sel's rows in tx, ArchiveChunk rows at a time (the
// tests' chunk), and returns how many the server deleted; Progress hears the running count
// after each chunk.
func (a *ArchivedDelete) deleteChunks(ctx context.Context, tx pgx.Tx, sel query.Statement) (int64, error) {
	chunk := ArchiveChunk
	if a.chunk > 0 {
		chunk = a.chunk
	}
	declare := query.Cursor(archiveCursor, sel)
	if _, err := query.Run(ctx, tx, declare); err != nil {
		return 0, &statementError{sel.Name, err}
	}
	var deleted int64
	for {
		fetch := query.Fetch(archiveCursor, chunk)
		res, err := query.Run(ctx, tx, fetch)
		if err != nil {
			return deleted, &statementError{sel.Name, err}
		}
		rows, err := RowsFromResult(res, nil)
		if err != nil || len(rows) == 0 {
			return deleted, err
		}
		ids, err := a.StageAndDelete(ctx, tx, rows)
		deleted += int64(len(ids))
		if err != nil {
			return deleted, err
		}
		if a.Progress != nil {
			a.Progress(deleted)
		}
		if len(rows) < chunk {
			return deleted, nil
		}
	}
}

// OpenArchive opens the archive operation meta describes, started now: at path, or, when
// path is empty, in the operation's own file under the user's state directory
// (OperationArchivePath).
func OpenArchive(path string, meta OperationMeta, now time.Time) (*Operation, error) {
	return openArchive(path, meta, now)
}

func openArchive(path string, meta OperationMeta, now time.Time) (*Operation, error) {
	meta.Started = now.UTC()
	meta.ID = NewOperationID(meta.Command, meta.Started)
	if path == "" {
		var err error
		if path, err = OperationArchivePath(meta.ID); err != nil {
			return nil, err
		}
	}
	return openOperation(path, meta)
}

// doubtIDs are the ids the transaction whose COMMIT got no answer deleted.
func (a *ArchivedDelete) doubtIDs() []int64 {
	if a == nil {
		return nil
	}
	var ids []int64
	for _, sb := range a.doubt {
		ids = append(ids, sb.deleted...)
	}
	return ids
}

// settled writes the second phase of the batches of a COMMIT in doubt from what its settle
// found: commit markers when it committed (restore then puts the rows back), abort markers
// when it did not, nothing while it is still in doubt (the batches stay staged: restore
// reports them and checks which of their rows are in the table, and --include-uncommitted
// puts back the missing ones).
func (a *ArchivedDelete) settled(s Settlement) error {
	if a == nil {
		return nil
	}
	doubt := a.doubt
	a.doubt = nil
	for _, sb := range doubt {
		switch s {
		case Committed:
			if err := a.Op.CommitDeleted(sb.batch, sb.deleted); err != nil {
				return &UnmarkedError{Path: a.Op.Path, Operation: a.Op.Meta.ID, Err: err}
			}
		case NotCommitted:
			if err := a.Op.Abort(sb.batch, errNotCommitted); err != nil && a.Warnf != nil {
				a.Warnf("the rows were not deleted, but the archive could not say so: %v", err)
			}
		}
	}
	return nil
}

// Settle settles, on conn (a fresh connection: the one the COMMIT went on is gone), the
// COMMIT of a DeleteArchived that got no answer (db.InDoubtError), and marks its batches
// from what it found.
func (a *ArchivedDelete) Settle(ctx context.Context, conn *db.Conn) (Settlement, error) {
	s, err := SettleDeleted(ctx, conn, a.Target, a.doubtIDs())
	if merr := a.settled(s); merr != nil && err == nil {
		err = merr
	}
	return s, err
}
