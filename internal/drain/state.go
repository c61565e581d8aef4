package drain

import (
	"context"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// ShardStateRow is a row of query.ShardState: what a repair or drain reports before and
// after, and inspect shard reads its depth from.
type ShardStateRow struct {
	Depth       int64 `db:"depth"`
	NextAttempt any   `db:"next_attempt"` // printed as it is: a time, or NULL
}

// ShardState reads a shard's depth and next attempt in a snapshot of their own. A failed
// read is its error, never a depth of 0: a caller that took it for "empty" would report a
// state it never read. In the control silo without a cell the shard has a row per cell:
// their depths add up and the earliest next attempt is the shard's.
func ShardState(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (depth int64, next any, err error) {
	// The statement goes with the BEGIN (one round trip): a parallel drain reads it after
	// every shard.
	st := query.ShardState(t, k)
	sql, args, err := st.Bind()
	if err != nil {
		return 0, nil, err
	}
	var res *query.Result
	first := &db.First{SQL: sql, Args: args, Read: func(rows db.Rows) error {
		res, err = query.Collect(st.Name, rows)
		return err
	}}
	err = db.ReadTxFirst(ctx, conn, first, func(db.Tx) error {
		rows, err := query.Rows[ShardStateRow](res)
		if err != nil {
			return err
		}
		for _, r := range rows {
			depth += r.Depth
			if tm, ok := r.NextAttempt.(time.Time); ok {
				if cur, ok := next.(time.Time); !ok || tm.Before(cur) {
					next = tm
				}
			}
		}
		return nil
	})
	return depth, next, db.Classify(err, "shard-state")
}

// SupersededRows is what compact's plan reads of a shard's superseded rows.
type SupersededRows struct {
	Count int64
	// Watermark is the shard's highest id, the DELETE stops at.
	Watermark int64
	// Sample is an even spread of the rows (Sampler), for the archive's size.
	Sample []Row
}

// Superseded counts a shard's superseded rows, keeps a sample of them and reads its highest
// id, the watermark the DELETE stops at, in one snapshot. The rows are streamed, not kept: a
// hot shard's million rows (650 MB of payloads) were read into memory to be counted.
func Superseded(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (SupersededRows, error) {
	var out SupersededRows
	err := db.ReadTx(ctx, conn, func(tx db.Tx) error {
		var cols []string
		var sample Sampler[[]any]
		err := query.Stream(ctx, tx, query.Superseded(t, k, 0, query.Why{}), func(c []string) error { cols = c; return nil }, func(row []any) error {
			out.Count++
			sample.Add(row)
			return nil
		})
		if err != nil {
			return db.Classify(err, "superseded")
		}
		if out.Sample, err = RowsFromResult(&query.Result{Columns: cols, Rows: sample.Rows}, nil); err != nil {
			return err
		}
		out.Watermark, err = MaxID(ctx, tx, t, k)
		return err
	})
	return out, err
}

// Head is a shard's state as a repair's summary reports it: depth, next attempt (a time, or
// nil when empty) and its head row's id (0 when empty; the lowest of the cells' heads in the
// control silo without a cell).
type Head struct {
	Depth  int64
	Next   any
	HeadID int64
}

type headRow struct {
	Depth       int64 `db:"depth"`
	NextAttempt any   `db:"next_attempt"`
	HeadID      int64 `db:"head_id"`
}

// ShardHead reads shard k's depth, next attempt and head in a snapshot of its own.
func ShardHead(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (Head, error) {
	var h Head
	err := db.ReadTx(ctx, conn, func(tx db.Tx) error {
		res, err := query.Run(ctx, tx, query.ShardState(t, k))
		if err != nil {
			return err
		}
		rows, err := query.Rows[headRow](res)
		if err != nil {
			return err
		}
		for _, r := range rows {
			h.Depth += r.Depth
			if h.HeadID == 0 || r.HeadID < h.HeadID {
				h.HeadID = r.HeadID
			}
			if tm, ok := r.NextAttempt.(time.Time); ok {
				if cur, ok := h.Next.(time.Time); !ok || tm.Before(cur) {
					h.Next = tm
				}
			}
		}
		return nil
	})
	return h, db.Classify(err, "shard-state")
}

// ShardGroups counts shard k's coalesce groups (shard-categories' per category, added up) in
// a snapshot of its own: the rows a --group-heads reschedule rewrites.
func ShardGroups(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (int64, error) {
	var groups int64
	err := db.ReadTx(ctx, conn, func(tx db.Tx) error {
		res, err := query.Run(ctx, tx, query.ShardCategories(t, k))
		if err != nil {
			return err
		}
		rows, err := query.Rows[query.ShardCategoryRow](res)
		for _, r := range rows {
			groups += r.CoalesceGroups
		}
		return err
	})
	return groups, db.Classify(err, "shard-categories")
}
