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

// The batch mode is Sentry's iteration, read for read, without a commit between messages:
// for each message it reads the shard's head and the newest row of the head's group in one
// statement (so every row committed since is seen, a late-committing lower id included),
// delivers that row, and deletes the group up to it in chunk-sized set-based statements.
// What it saves is the round trips and the commit of each message; what it keeps is the
// order and the choice of every delivery.
//
// One lock is taken per batch, on the shard's lowest row, as Sentry's claim does: while the
// batch runs, that row (deleted by the batch, but not yet committed) stays the lowest row
// every other drainer sees, and its lock turns their NOWAIT away.
//
// A batch commits after BatchSize messages, after BatchTime, after a large delete, before
// any --rate wait, on cancellation, and at the first failed delivery (the messages
// delivered before it are deleted and committed).
//
// One difference from Sentry's statements, by design: Sentry deletes a group's older rows
// by unordered 50-id slices and stops at the first slice with none older, so when 50 or more
// rows arrive in the group during its delivery, heap order decides whether older rows are
// left behind (reference §8.7). The batch mode deletes every row up to the delivered one;
// the exact mode replays the slices.

// bigDelete ends a batch after a group this large was deleted: the index entries it left
// are skipped faster once the deletion committed.
const bigDelete = 50_000

// batchStep runs one batch transaction.
func (r *run) batchStep(ctx context.Context) (bool, error) {
	o := r.o
	var delivered []Message
	var deleted int64
	more := false
	err := r.tx(ctx, func(sctx context.Context, tx pgx.Tx) error {
		started := time.Now()
		head, err := r.lockHead(sctx, tx)
		if err != nil || head == nil {
			return err
		}
		// prev is the group delivered last whose rows are not deleted yet: the next read
		// deletes them in the same statement. Every way out deletes it first.
		var prev *query.GroupUpTo
		flush := func() error {
			if prev == nil {
				return nil
			}
			n, err := r.deleteGroup(sctx, tx, *prev)
			deleted += n
			prev = nil
			return err
		}
		for {
			m, found, n, err := r.next(sctx, tx, prev)
			if err != nil {
				return err
			}
			deleted += n
			if prev != nil && n < query.DeleteChunk {
				prev = nil // the read deleted all of it
			}
			if err := flush(); err != nil || !found {
				return err
			}
			if err := r.deliver(ctx, m); err != nil {
				r.stopped(m, err)
				return nil // commit what was delivered before it
			}
			delivered = append(delivered, m)
			g := query.GroupUpTo{Category: m.Category, Object: m.Object, UpTo: m.ID}
			if o.discards() {
				n, err := r.discardGroup(sctx, tx, g)
				deleted += n
				if err != nil {
					return err
				}
			} else {
				prev = &g
			}
			switch {
			case o.MaxMessages > 0 && r.res.Delivered+len(delivered) >= o.MaxMessages:
				return flush()
			case ctx.Err() != nil, len(delivered) >= o.BatchSize, time.Since(started) > o.BatchTime, r.gap() > 0, deleted >= bigDelete:
				more = true // commit what was delivered; stop, or wait outside the transaction
				return flush()
			}
		}
	})
	switch {
	case errors.Is(err, errStop):
		return false, nil
	case db.IsInDoubt(err):
		r.inDoubt(delivered, o.Handler != nil && !o.Discard, deleted, 0)
		return false, err
	case err != nil:
		if o.Handler != nil && !o.Discard {
			r.res.Uncommitted += len(delivered)
		}
		return false, err
	}
	r.res.Delivered += len(delivered)
	r.res.Deleted += deleted
	if o.OnDelivered != nil {
		for _, m := range delivered {
			o.OnDelivered(m)
		}
	}
	return more && r.res.Failed == nil && r.res.Abandoned == nil, nil
}

// nextCounts are the counts drain-next returns beside the message: the rows it deleted of
// the previous group, and the size of the next message's group (NULL, with the id, when no
// row is left).
type nextCounts struct {
	Deleted        int64  `db:"deleted"`
	ID             *int64 `db:"id"`
	CoalescedCount *int64 `db:"coalesced_count"`
}

// next deletes (a chunk of) prev's group and reads the next message: the newest row of the
// head's group. found is false when no row is left at or below the watermark.
func (r *run) next(ctx context.Context, tx pgx.Tx, prev *query.GroupUpTo) (Message, bool, int64, error) {
	once := prev == nil && !r.o.discards() // a batch's first read; discarding, every read
	res, err := r.runPrepared(ctx, tx, r.o.st(query.DrainNext(r.o.Target, r.o.Shard, r.o.Watermark, prev)), once)
	if err != nil || len(res.Rows) == 0 {
		return Message{}, false, 0, err
	}
	counts, err := query.Rows[nextCounts](res)
	if err != nil {
		return Message{}, false, 0, err
	}
	deleted := counts[0].Deleted
	if counts[0].ID == nil {
		return Message{}, false, deleted, nil
	}
	m, err := r.o.message(res, 0)
	if err != nil {
		return Message{}, false, deleted, err
	}
	if counts[0].CoalescedCount == nil {
		return Message{}, false, deleted, fmt.Errorf("%s: NULL coalesced_count for message %d", res.Statement, *counts[0].ID)
	}
	m.CoalescedCount = *counts[0].CoalescedCount
	if r.o.CoalescedIDs {
		one := []Message{m}
		if err := r.o.fillCoalesced(ctx, tx, one); err != nil {
			return m, false, deleted, err
		}
		m = one[0]
	}
	return m, true, deleted, nil
}

// deleteGroup deletes a delivered group up to the delivered row, a chunk at a time.
func (r *run) deleteGroup(ctx context.Context, tx pgx.Tx, g query.GroupUpTo) (int64, error) {
	var deleted int64
	for {
		res, err := r.runPrepared(ctx, tx, r.o.st(query.DrainDeleteGroupChunk(r.o.Target, r.o.Shard, g.Category, g.Object, g.UpTo)), false)
		var n int64
		if err == nil {
			n = int64(len(res.Rows))
		}
		deleted += n
		if err != nil || n < query.DeleteChunk {
			return deleted, err
		}
	}
}

// discardGroup archives a group up to the delivered row and deletes exactly the ids it
// archived.
func (r *run) discardGroup(ctx context.Context, tx pgx.Tx, g query.GroupUpTo) (int64, error) {
	return r.discardGroups(ctx, tx, []int64{int64(g.Category)}, []int64{g.Object}, []int64{g.UpTo}, false)
}
