package drain

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// A batch whose outcome the archive does not record (a kill, or a full disk, between its
// DELETE and its marker; a marker a kill cut short) is settled by every later reader: the next
// run appending to the file and a resume (SettleArchive, which marks it), and restore
// (PlannedOperation.Settle, which reads the table itself). The earliest reader knows best: a
// batch that did not commit and whose rows Sentry delivered since would read as committed
// later (all its ids gone).

// SettledBatch is an unmarked batch SettleArchive marked.
type SettledBatch struct {
	Operation string
	Batch     int
	// Outcome is Committed (every id it staged is gone: a commit marker naming them) or
	// NotCommitted (one is still in the table: an abort marker).
	Outcome Settlement
	Rows    int
}

// errSettledLater is the abort marker's cause of a batch SettleArchive found not committed.
var errSettledLater = errors.New("no marker when its run ended; settled against the table by a later run: not committed (some of its rows are still in the table)")

// SettleArchive marks, in the archive at path, the unmarked batches of its operations on
// target's table: it reads on conn which of each batch's ids the table holds, and appends a
// commit marker (none: its DELETE committed) or an abort marker (some: it did not; a
// transaction commits whole), each with its operation's checksum, synced. It runs only while
// no other process has the file open to write (ArchiveHandle holds a shared flock): a writer
// still going may have a batch in flight, which is not to be settled. An operation restore
// would refuse (edited, unverified, another format) or of another table is left to restore.
// No file: nothing to do.
func SettleArchive(ctx context.Context, conn *db.Conn, path string, target query.Target) ([]SettledBatch, error) {
	if !canLock {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settling the archive: %w", err)
	}
	defer f.Close()
	if err := tryLock(f); errors.Is(err, ErrJournalLocked) {
		return nil, nil // another run writes to it: its batches may be in flight
	} else if err != nil {
		return nil, err
	}
	af, err := ParseArchive(f, 0)
	if err != nil {
		return nil, fmt.Errorf("settling the archive %s: line %w", path, err)
	}
	type pending struct {
		op *ArchivedOperation
		b  *ArchivedBatch
	}
	var todo []pending
	var ids []int64
	for _, op := range af.Operations {
		if op.Problem != nil || !op.Verified() || op.Version != FormatVersion || op.Schema != target.Schema || op.Table != target.TableName() {
			continue
		}
		for _, b := range op.Batches {
			if b.State == BatchStaged {
				todo = append(todo, pending{op, b})
				ids = append(ids, rowIDs(b.Rows)...)
			}
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	present, err := PresentLocked(ctx, conn, target, ids)
	if err != nil {
		return nil, err
	}
	if err := sealTornTail(f); err != nil {
		return nil, fmt.Errorf("settling the archive %s: %w", path, err)
	}
	var buf []byte
	var out []SettledBatch
	now := time.Now().UTC()
	for _, p := range todo {
		staged := rowIDs(p.b.Rows)
		m := markLine{V: FormatVersion, OperationMeta: p.op.OperationMeta, Batch: p.b.Seq, At: now, Rows: len(staged), IDs: staged}
		s := SettledBatch{Operation: p.op.ID, Batch: p.b.Seq, Outcome: Committed, Rows: len(staged)}
		m.Kind = KindCommit
		for _, id := range staged {
			if present[id] {
				m.Kind, m.IDs, m.Error, s.Outcome = KindAbort, nil, errSettledLater.Error(), NotCommitted
				break
			}
		}
		m.SHA256 = hex.EncodeToString(p.op.sum.Sum(nil))
		line, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		line = append(line, '\n')
		p.op.sum.Write(line) // the next marker of the operation covers this one
		buf = append(buf, line...)
		out = append(out, s)
	}
	if _, err := f.Write(buf); err != nil {
		return nil, fmt.Errorf("settling the archive %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("settling the archive %s: %w", path, err)
	}
	return out, nil
}

// PresentLocked returns which of ids t's table holds, read FOR SHARE in a write transaction
// on conn (query.SettleDeleted): a transaction the server is still finishing (a killed run's
// COMMIT in flight) is waited for, up to lock_timeout, so its DELETE is never read as not
// committed.
func PresentLocked(ctx context.Context, conn *db.Conn, t query.Target, ids []int64) (map[int64]bool, error) {
	present := map[int64]bool{}
	if len(ids) == 0 {
		return present, nil
	}
	err := db.RunWriteTx(ctx, conn, nil, func(tx db.Tx) error {
		res, err := query.Run(ctx, tx, query.SettleDeleted(t, ids))
		if err != nil {
			return err
		}
		rows, err := query.Rows[existingRow](res)
		for _, r := range rows {
			present[r.ID] = true
		}
		return err
	})
	if err != nil {
		return nil, db.Classify(err, "settle-deleted")
	}
	return present, nil
}
