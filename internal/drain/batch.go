package drain

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The batch mode delivers exactly what the exact mode delivers, in the same order, but
// several messages per transaction:
//
//   - the head lock is taken once per batch (Sentry's lock of the shard's lowest row);
//   - the next groups come from pages of the shard's rows in id order, as many pages as it
//     takes: a group's first row in id order is where Sentry reaches it, and a hot group
//     larger than a page never ends a drain early;
//   - every group's newest row is read for the batch in one statement, and before each
//     delivery the rows that arrived since are read, so each group is delivered once, with
//     the payload that is newest when its turn comes (Sentry reads it at that moment too);
//   - the delivered groups are deleted up to their delivered ids in one statement.
//
// A batch commits before it waits for --rate, after BatchTime, on cancellation, and at the
// first failed delivery (the groups delivered before it are deleted and committed).

// batchStep runs one batch transaction.
func (r *run) batchStep(ctx context.Context) (bool, error) {
	o := r.o
	var delivered []Message
	var firstIDs []int64
	var deleted int64
	empty := false
	err := r.tx(ctx, func(sctx context.Context, tx pgx.Tx) error {
		started := time.Now()
		head, err := r.lockHead(sctx, tx, r.after)
		if err == nil && head == nil && r.after > 0 {
			// The hint said "nothing below"; make sure without it before calling it done.
			r.after = 0
			head, err = r.lockHead(sctx, tx, 0)
		}
		if err != nil {
			return err
		}
		if head == nil {
			empty = true
			return nil
		}
		headID, _ := head.Rows[0][head.Col("id")].(int64)
		limit := o.BatchSize
		if o.MaxMessages > 0 {
			limit = min(limit, o.MaxMessages-r.res.Delivered)
		}
		keys, firsts, err := r.nextGroups(sctx, tx, headID, limit)
		if err != nil {
			return err
		}
		batch, maxSeen, err := r.newestOf(sctx, tx, keys)
		if err != nil {
			return err
		}
		pos := make(map[groupKey]int, len(batch))
		for i, m := range batch {
			pos[groupKey{int64(m.Category), m.Object}] = i
		}
		for i := range batch {
			if i > 0 {
				if ctx.Err() != nil || time.Since(started) > o.BatchTime || r.gap() > 0 {
					break // commit what was delivered; stop, or wait outside the transaction
				}
				if maxSeen, err = r.arrivals(sctx, tx, batch, pos, i, maxSeen); err != nil {
					return err
				}
			}
			m := batch[i]
			if err := r.deliver(ctx, m); err != nil {
				r.res.Failed, r.res.FailedErr = &m, err
				break
			}
			delivered = append(delivered, m)
			firstIDs = append(firstIDs, firsts[groupKey{int64(m.Category), m.Object}])
		}
		if len(delivered) == 0 {
			return nil
		}
		cats, objs, ids := groupArrays(delivered)
		if o.discards() {
			if err := r.archive(sctx, tx, cats, objs, ids, false); err != nil {
				return err
			}
		}
		deleted, err = query.Exec(sctx, tx, o.st(query.DrainDeleteGroups(o.Target, o.Shard, cats, objs, ids)))
		return err
	})
	switch {
	case errors.Is(err, errStop):
		return false, nil
	case err != nil:
		if o.Handler != nil {
			r.res.Uncommitted += len(delivered)
		}
		return false, err
	case empty:
		return false, nil
	}
	r.res.Delivered += len(delivered)
	r.res.Deleted += deleted
	if n := len(firstIDs); n > 0 && firstIDs[n-1] > r.after {
		// Every row below the last delivered group's first row belonged to a delivered group.
		r.after = firstIDs[n-1]
	}
	if o.OnDelivered != nil {
		for _, m := range delivered {
			o.OnDelivered(m)
		}
	}
	return r.res.Failed == nil, nil
}

// nextGroups returns up to limit coalesce groups in the order Sentry reaches them, from the
// head on, with each group's first id, reading pages of the shard until it has them or the
// shard (up to the watermark) ends.
func (r *run) nextGroups(ctx context.Context, tx pgx.Tx, from int64, limit int) ([]groupKey, map[groupKey]int64, error) {
	var keys []groupKey
	first := map[groupKey]int64{}
	for len(keys) < limit {
		page, err := query.Run(ctx, tx, r.o.st(query.DrainPage(r.o.Target, r.o.Shard, r.o.Watermark, from, r.o.PageSize)))
		if err != nil {
			return nil, nil, err
		}
		for _, row := range page.Rows {
			id, _ := row[0].(int64)
			k := groupKey{query.AsInt64(row[1]), query.AsInt64(row[2])}
			from = id + 1
			if _, seen := first[k]; seen {
				continue
			}
			first[k] = id
			keys = append(keys, k)
			if len(keys) == limit {
				break
			}
		}
		if len(page.Rows) < r.o.PageSize {
			break
		}
	}
	return keys, first, nil
}

// newestOf reads each group's newest row, and the shard's highest id at that moment.
func (r *run) newestOf(ctx context.Context, tx pgx.Tx, keys []groupKey) ([]Message, int64, error) {
	if len(keys) == 0 {
		return nil, 0, nil
	}
	cats, objs := make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		cats[i], objs[i] = k.cat, k.obj
	}
	res, err := query.Run(ctx, tx, r.o.st(query.DrainNewestOf(r.o.Target, r.o.Shard, cats, objs)))
	if err != nil {
		return nil, 0, err
	}
	batch := make([]Message, 0, len(res.Rows))
	var maxSeen int64
	for _, row := range res.Rows {
		if row[res.Col("id")] == nil {
			continue // the group was deleted by someone else meanwhile
		}
		batch = append(batch, r.o.message(row, res.Col))
		if v, ok := row[res.Col("shard_max_id")].(int64); ok && v > maxSeen {
			maxSeen = v
		}
	}
	return batch, maxSeen, r.o.fillCoalesced(ctx, tx, batch)
}

// arrivals reads the rows that arrived above maxSeen and makes each one the newest row of
// its group when that group is still to be delivered in this batch (from index i on).
func (r *run) arrivals(ctx context.Context, tx pgx.Tx, batch []Message, pos map[groupKey]int, i int, maxSeen int64) (int64, error) {
	for {
		res, err := query.Run(ctx, tx, r.o.st(query.DrainArrivals(r.o.Target, r.o.Shard, maxSeen)))
		if err != nil {
			return maxSeen, err
		}
		for _, row := range res.Rows {
			m := r.o.message(row, res.Col)
			maxSeen = m.ID
			j, ok := pos[groupKey{int64(m.Category), m.Object}]
			if !ok || j < i {
				continue // another group, or one already delivered: its new row waits its turn
			}
			m.CoalescedCount = batch[j].CoalescedCount + 1
			m.Coalesced = batch[j].Coalesced
			batch[j] = m
		}
		if len(res.Rows) < query.ArrivalsPage {
			return maxSeen, nil
		}
	}
}
