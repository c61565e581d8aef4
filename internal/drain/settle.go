package drain

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Settlement is what a COMMIT that got no answer (db.InDoubtError) turned out to be, read on
// a fresh connection.
type Settlement string

// The settlements.
const (
	// Committed: the change is in the table (the deleted ids are gone, the rows carry the
	// new schedule).
	Committed Settlement = "committed"
	// NotCommitted: the change is not in the table (a deleted id is still there, a row keeps
	// its old schedule).
	NotCommitted Settlement = "not committed"
	// Unsettled: the settle could not tell (the server still unreachable, the rows still
	// locked by the unfinished transaction past lock_timeout).
	Unsettled Settlement = "in doubt"
)

// errNotCommitted is the abort marker's cause for a batch whose COMMIT got no answer and
// whose rows a settle found still there.
var errNotCommitted = errors.New("the COMMIT got no answer; settled on a fresh connection: not committed (the rows are still in the table)")

// SettleDeleted reads on conn (a fresh connection: the one the COMMIT was sent on is gone)
// whether the transaction that deleted ids from t committed. A transaction commits whole, so
// one id still there means it did not; none means it did (or another session deleted the
// rows since: either way they are gone). No ids: nothing was deleted, so nothing is in doubt.
func SettleDeleted(ctx context.Context, conn *db.Conn, t query.Target, ids []int64) (Settlement, error) {
	if len(ids) == 0 {
		return Committed, nil
	}
	var left int
	// A write transaction for FOR SHARE (refused in a read-only one); it changes nothing.
	err := db.RunWriteTx(ctx, conn, nil, func(tx pgx.Tx) error {
		res, err := query.Run(ctx, tx, query.SettleDeleted(t, ids))
		if err != nil {
			return err
		}
		left = len(res.Rows)
		return nil
	})
	if err != nil {
		return Unsettled, db.Classify(err, "settle-deleted")
	}
	if left > 0 {
		return NotCommitted, nil
	}
	return Committed, nil
}

// SettleRescheduled reads on conn whether a reschedule of shard k (up to wm when above 0) in
// mode whose COMMIT got no answer committed: every row it rewrites (in mode group-heads, each
// coalesce group's lowest) carries THE_PAST.
func SettleRescheduled(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, wm int64, mode query.RescheduleMode) (Settlement, error) {
	var row query.SettleRescheduledRow
	err := db.RunWriteTx(ctx, conn, nil, func(tx pgx.Tx) error {
		res, err := query.Run(ctx, tx, query.SettleRescheduled(t, k, wm, mode))
		if err != nil {
			return err
		}
		rows, err := query.Rows[query.SettleRescheduledRow](res)
		if err == nil && len(rows) == 1 {
			row = rows[0]
		}
		return err
	})
	switch {
	case err != nil:
		return Unsettled, db.Classify(err, "settle-reschedule")
	case row.NotRescheduled > 0:
		return NotCommitted, nil
	}
	return Committed, nil
}

// InDoubt is a drain transaction whose COMMIT got no answer, and what its settle found.
type InDoubt struct {
	// Messages counts the messages (delivered, or discarded) whose deletion the transaction
	// held; Deleted
	// and Trimmed the rows it deleted: what Result gains if it committed.
	Messages         int
	Deleted, Trimmed int64
	// Outcome is what the settle found; SettleErr why it could not tell (Outcome Unsettled).
	Outcome   Settlement
	SettleErr error

	msgs   []Message
	handed bool
	ids    []int64 // the ids the transaction deleted that tell whether it committed
}

// inDoubt records a step's transaction whose COMMIT got no answer: the delivered messages it
// would have committed, the rows it deleted, and the archive batches it staged.
// handed says whether a handler took them (a discard delivers nothing, so nothing of it is
// delivered again).
func (r *run) inDoubt(msgs []Message, handed bool, deleted, trimmed int64) {
	d := &InDoubt{Messages: len(msgs), Deleted: deleted, Trimmed: trimmed, Outcome: Unsettled, msgs: msgs, handed: handed}
	for _, m := range msgs {
		d.ids = append(d.ids, m.ID)
	}
	d.ids = append(d.ids, r.del.doubtIDs()...)
	r.res.InDoubt = d
}

// settle settles the step's COMMIT in doubt on a fresh connection (Options.Reconnect), within
// that connection's timeouts, and moves its counts where they belong: committed, into
// Delivered and Deleted (and the archive's commit markers); not committed, into Uncommitted
// (abort markers); in doubt, nowhere (no marker: restore reports the batches).
func (r *run) settle(ctx context.Context) {
	d := r.res.InDoubt
	if d == nil {
		return
	}
	if r.o.Reconnect == nil {
		d.SettleErr = errors.New("no connection to settle it on")
		return
	}
	ctx = context.WithoutCancel(ctx)
	conn, err := r.o.Reconnect(ctx)
	if err != nil {
		d.SettleErr = err
		return
	}
	defer conn.Close(ctx)
	d.Outcome, d.SettleErr = SettleDeleted(ctx, conn, r.o.Target, d.ids)
	if err := r.del.settled(d.Outcome); err != nil && d.SettleErr == nil {
		d.SettleErr = err
	}
	switch d.Outcome {
	case Committed:
		r.res.Delivered += len(d.msgs)
		r.res.Deleted += d.Deleted
		r.res.Trimmed += d.Trimmed
		if r.o.OnDelivered != nil {
			for _, m := range d.msgs {
				r.o.OnDelivered(m)
			}
		}
	case NotCommitted:
		if d.handed {
			r.res.Uncommitted += len(d.msgs)
		}
	}
}
