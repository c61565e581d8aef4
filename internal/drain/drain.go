package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Errors the drain returns before or instead of draining.
var (
	// ErrInTransaction: the connection is inside a transaction block. A drain holds row
	// locks across deliveries and must commit each message on its own (Sentry's drain_shard
	// asserts the same, in tests only).
	ErrInTransaction = errors.New("refusing to drain inside a transaction block: the drain commits each message on its own; run it on a connection outside BEGIN … COMMIT")
	// ErrReplica: the server is in recovery.
	ErrReplica = errors.New("refusing to drain on a read replica (pg_is_in_recovery() is true): connect to the primary")
	// ErrShardLocked: another drainer holds the shard's lowest row (SQLSTATE 55P03).
	ErrShardLocked = errors.New("another drainer holds this shard (its lowest row is locked): let it finish, or retry later")
	// ErrEmpty: the shard has no rows.
	ErrEmpty = errors.New("the shard is empty")
)

// Mode chooses how a drain issues its statements.
type Mode string

// The modes. Both deliver the same messages in the same order and leave the same table.
const (
	// ModeExact replays Sentry's statement sequence one for one: one transaction per message,
	// duplicates deleted by 50-row slices.
	ModeExact Mode = "exact"
	// ModeBatch delivers several coalesce groups under one lock of the shard's head and
	// deletes them with set-based statements.
	ModeBatch Mode = "batch"
)

// Message is one delivery: the newest row of a coalesce group.
type Message struct {
	ID           int64   `json:"id"`
	Table        string  `json:"table"`
	Silo         string  `json:"silo"`
	Cell         string  `json:"cell,omitempty"`
	Scope        int     `json:"shard_scope"`
	ScopeName    string  `json:"shard_scope_name"`
	Shard        int64   `json:"shard_identifier"`
	Category     int     `json:"category"`
	CategoryName string  `json:"category_name"`
	Object       int64   `json:"object_identifier"`
	Payload      *string `json:"-"`
	Coalesced    []int64 `json:"coalesced_ids,omitempty"`
	// CoalescedCount is how many rows of the group were waiting at delivery (newer rows the
	// drain leaves, above its watermark, included); Coalesced lists the first 100 ids up to
	// the delivered one when Options.CoalescedIDs is set.
	CoalescedCount int64     `json:"coalesced_count"`
	DateAdded      time.Time `json:"date_added"`
	ScheduledFor   time.Time `json:"scheduled_for"`
}

// Handler delivers a message. Sentry's contract is at-least-once: a handler must be
// idempotent, because a drain that fails after delivering (or is killed) delivers again.
type Handler interface {
	Deliver(ctx context.Context, m Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m Message) error

// Deliver calls f.
func (f HandlerFunc) Deliver(ctx context.Context, m Message) error { return f(ctx, m) }

// Options configure one drain of one shard.
type Options struct {
	Target query.Target
	Shard  query.ShardKey
	Mode   Mode
	// Handler delivers; nil means skip-delivery (the kill-switch trim only).
	Handler Handler
	// Killswitched drains like Sentry does a disabled shard: trim the head group's older
	// duplicates without delivering, keep the newest, stop.
	Killswitched bool
	// Watermark bounds the drain: rows above it are never touched (0: no bound, --follow).
	Watermark int64
	// MaxMessages stops after this many deliveries (0: no limit).
	MaxMessages int
	// BatchSize is the most groups ModeBatch delivers under one lock (default 500).
	BatchSize int
	// Names resolves enum names for messages.
	CategoryName func(int) string
	ScopeName    func(int) string
	// OnDelivered is called after each message is committed as delivered.
	OnDelivered func(Message)
	// Archive receives every row deleted without delivery (discard, kill-switch trim)
	// before it is deleted; the drain refuses to delete such rows without one.
	Archive *Archive
	// Command and Reason are recorded with archived rows.
	Command, Reason string
	// CoalescedIDs lists, in each message, the first ids of its group (reads every row of the
	// group: opt-in); the count is always there.
	CoalescedIDs bool
}

// discards reports whether rows are deleted without being delivered.
func (o Options) discards() bool {
	_, isDiscard := o.Handler.(Discard)
	return isDiscard || o.Killswitched || o.Handler == nil
}

// archive appends the rows of the given groups (up to, or below, each id) to the archive.
func (o Options) archive(ctx context.Context, tx pgx.Tx, cats, objs, upTo []int64, below bool) error {
	if o.Archive == nil {
		return errors.New("refusing to delete rows without delivery: no archive to write them to (--archive)")
	}
	res, err := query.Run(ctx, tx, o.st(query.DrainArchiveRows(o.Target, o.Shard, cats, objs, upTo, below)))
	if err != nil {
		return err
	}
	rows, _ := ArchivedRows(res, o.Target, o.Command, o.Reason)
	return o.Archive.Append(rows)
}

// ArchivedRows turns rows read by query.DrainArchiveRows (or query.Superseded) into archive
// lines, and returns their ids.
func ArchivedRows(res *query.Result, t query.Target, command, reason string) ([]ArchivedRow, []int64) {
	rows := make([]ArchivedRow, 0, len(res.Rows))
	ids := make([]int64, 0, len(res.Rows))
	now := time.Now().UTC()
	for _, r := range res.Rows {
		a := ArchivedRow{Schema: t.Schema, Table: t.TableName(), ArchivedAt: now, Command: command, Reason: reason,
			Payload: json.RawMessage("null")}
		a.ID, _ = r[0].(int64)
		a.ShardScope = int(query.AsInt64(r[1]))
		a.ShardID, _ = r[2].(int64)
		a.Category = int(query.AsInt64(r[3]))
		a.ObjectID, _ = r[4].(int64)
		if c, ok := r[5].(string); ok {
			a.Cell = &c
		}
		if p, ok := r[6].(string); ok {
			if json.Valid([]byte(p)) {
				a.Payload = json.RawMessage(p)
			} else {
				a.Payload, _ = json.Marshal(p)
			}
		}
		a.ScheduledFrom, _ = r[7].(time.Time)
		a.ScheduledFor, _ = r[8].(time.Time)
		a.DateAdded, _ = r[9].(time.Time)
		rows = append(rows, a)
		ids = append(ids, a.ID)
	}
	return rows, ids
}

// Result says what a drain did.
type Result struct {
	Delivered int
	Deleted   int64 // rows deleted, delivered ones included
	Trimmed   int64 // rows deleted without delivery (kill-switched shard)
	// Contended is true when another drainer held the shard (the drain stopped quietly).
	Contended bool
	// Failed is the message whose delivery failed, with the handler's error.
	Failed    *Message
	FailedErr error
}

// Guard refuses a connection that is inside a transaction block or on a replica.
func Guard(ctx context.Context, conn *pgx.Conn) error {
	if s := conn.PgConn().TxStatus(); s != 'I' {
		return ErrInTransaction
	}
	var inRecovery bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return fmt.Errorf("checking for a replica: %w", err)
	}
	if inRecovery {
		return ErrReplica
	}
	return nil
}

// fillCoalesced sets, on each message, the rows of its group the delivery stands for.
func (o Options) fillCoalesced(ctx context.Context, tx pgx.Tx, ms []Message) error {
	if len(ms) == 0 {
		return nil
	}
	cats, objs, ids := make([]int64, len(ms)), make([]int64, len(ms)), make([]int64, len(ms))
	for i, m := range ms {
		cats[i], objs[i], ids[i] = int64(m.Category), m.Object, m.ID
	}
	res, err := query.Run(ctx, tx, o.st(query.DrainCoalesced(o.Target, o.Shard, cats, objs, ids, o.CoalescedIDs)))
	if err != nil {
		return err
	}
	type key struct{ c, o int64 }
	found := map[key][]any{}
	for _, r := range res.Rows {
		found[key{query.AsInt64(r[0]), query.AsInt64(r[1])}] = r
	}
	for i := range ms {
		r, ok := found[key{int64(ms[i].Category), ms[i].Object}]
		if !ok {
			continue
		}
		ms[i].CoalescedCount = query.AsInt64(r[2])
		if arr, ok := r[3].([]any); ok {
			for _, v := range arr {
				ms[i].Coalesced = append(ms[i].Coalesced, query.AsInt64(v))
			}
		}
	}
	return nil
}

// lockHead locks the shard's lowest row (NOWAIT). It returns nil when the shard is empty,
// and errRollback when another drainer holds it (the failed lock aborted the transaction).
func (o Options) lockHead(ctx context.Context, tx pgx.Tx, res *Result) (*query.Result, error) {
	head, err := query.Run(ctx, tx, o.st(query.DrainHead(o.Target, o.Shard, o.Watermark)))
	switch {
	case isLockNotAvailable(err):
		res.Contended = true
		return nil, errRollback
	case err != nil:
		return nil, err
	case len(head.Rows) == 0:
		return nil, nil
	}
	return head, nil
}

// st marks a statement with the drain's --reason, as a SQL comment that shows in
// pg_stat_activity while it runs.
func (o Options) st(s query.Statement) query.Statement {
	if o.Reason != "" || o.Command != "" {
		s.Text = query.ReasonComment(o.Command, o.Reason) + s.Text
	}
	return s
}

func isLockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// Claim is prepare_next_from_shard: lock the shard's lowest row without waiting and push
// the whole shard's schedule forward (next = now + min(2 × last delay, 1 h), last delay from
// the lowest row, at least 1 s), in its own transaction. The backoff is applied before
// processing: success deletes the rows, failure leaves them with the new schedule.
func Claim(ctx context.Context, conn *pgx.Conn, t query.Target, k query.ShardKey) (time.Time, error) {
	if err := Guard(ctx, conn); err != nil {
		return time.Time{}, err
	}
	var next time.Time
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		head, err := query.Run(ctx, tx, query.DrainHead(t, k, 0))
		if err != nil {
			if isLockNotAvailable(err) {
				return ErrShardLocked
			}
			return err
		}
		if len(head.Rows) == 0 {
			return ErrEmpty
		}
		from, _ := head.Rows[0][head.Col("scheduled_from")].(time.Time)
		sfor, _ := head.Rows[0][head.Col("scheduled_for")].(time.Time)
		res, err := query.Run(ctx, tx, query.DrainReschedule(t, k, from, sfor))
		if err != nil {
			return err
		}
		next, _ = res.Rows[0][0].(time.Time)
		return nil
	})
	return next, err
}

// Run drains one shard, message by message, faithful to Sentry's task path
// (process_shard with flush_all): lock the lowest row (NOWAIT; contention ends the drain
// quietly), deliver the newest row of its coalesce group, delete the group's older rows,
// then the delivered one. A delivery failure rolls that message back and stops the drain
// (head-of-line, like Sentry). It does not claim: call Claim first to apply the backoff.
func Run(ctx context.Context, conn *pgx.Conn, o Options) (Result, error) {
	var res Result
	if err := Guard(ctx, conn); err != nil {
		return res, err
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	var after int64 // ModeBatch: ids at or below it belong to delivered groups
	for {
		if o.MaxMessages > 0 && res.Delivered >= o.MaxMessages {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// A step runs to its end even if the context is cancelled meanwhile (SIGINT finishes
		// the current message, then the drain stops before the next one).
		step := context.WithoutCancel(ctx)
		var more bool
		var err error
		if o.Mode == ModeBatch && !o.Killswitched {
			more, err = batchStep(step, conn, o, &res, &after)
		} else {
			more, err = exactStep(step, conn, o, &res)
		}
		if err != nil || !more || res.Failed != nil {
			return res, err
		}
	}
}

func (o Options) message(r []any, cols func(string) int) Message {
	m := Message{Table: o.Target.TableName(), Silo: string(o.Target.Silo), Cell: o.Target.Cell,
		Scope: o.Shard.Scope.Value, ScopeName: o.Shard.Scope.Name, Shard: o.Shard.ID}
	m.ID, _ = r[cols("id")].(int64)
	m.Category = int(query.AsInt64(r[cols("category")]))
	m.Object, _ = r[cols("object_identifier")].(int64)
	if p, ok := r[cols("payload")].(string); ok {
		m.Payload = &p
	}
	m.DateAdded, _ = r[cols("date_added")].(time.Time)
	m.ScheduledFor, _ = r[cols("scheduled_for")].(time.Time)
	if o.CategoryName != nil {
		m.CategoryName = o.CategoryName(m.Category)
	}
	return m
}

// exactStep is one iteration of Sentry's process_shard, statement for statement.
func exactStep(ctx context.Context, conn *pgx.Conn, o Options, res *Result) (bool, error) {
	more := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		head, err := o.lockHead(ctx, tx, res)
		if err != nil || head == nil {
			return err
		}
		cat := int(query.AsInt64(head.Rows[0][head.Col("category")]))
		obj, _ := head.Rows[0][head.Col("object_identifier")].(int64)
		newest, err := query.Run(ctx, tx, o.st(query.DrainNewest(o.Target, o.Shard, cat, obj, o.Watermark)))
		if err != nil {
			return err
		}
		if len(newest.Rows) == 0 {
			return nil
		}
		m := o.message(newest.Rows[0], newest.Col)
		one := []Message{m}
		if err := o.fillCoalesced(ctx, tx, one); err != nil {
			return err
		}
		m = one[0]
		if !o.Killswitched && o.Handler != nil {
			if err := o.Handler.Deliver(ctx, m); err != nil {
				res.Failed, res.FailedErr = &m, err
				return errRollback
			}
		}
		if o.discards() {
			// Nothing here is delivered: archive the group (all of it when discarding, the
			// older rows when trimming a disabled shard) before any of it is deleted.
			if err := o.archive(ctx, tx, []int64{int64(cat)}, []int64{obj}, []int64{m.ID}, o.Killswitched); err != nil {
				return err
			}
		}
		// Sentry's duplicate deletion: SELECT id … LIMIT 50 without ORDER BY, keep the ids
		// below the delivered one, stop at the first slice with none.
		for {
			slice, err := query.Run(ctx, tx, o.st(query.DrainDuplicateSlice(o.Target, o.Shard, cat, obj)))
			if err != nil {
				return err
			}
			var older []int64
			for _, r := range slice.Rows {
				if id, _ := r[0].(int64); id < m.ID {
					older = append(older, id)
				}
			}
			if len(older) == 0 {
				break
			}
			n, err := query.Exec(ctx, tx, o.st(query.DrainDeleteIDs(o.Target, older)))
			if err != nil {
				return err
			}
			res.Deleted += n
			if o.Killswitched {
				res.Trimmed += n
			}
		}
		if o.Killswitched {
			return nil // Sentry keeps the newest row of a disabled shard and stops
		}
		n, err := query.Exec(ctx, tx, o.st(query.DrainDeleteIDs(o.Target, []int64{m.ID})))
		if err != nil {
			return err
		}
		res.Deleted += n
		res.Delivered++
		if o.OnDelivered != nil {
			o.OnDelivered(m)
		}
		more = true
		return nil
	})
	if errors.Is(err, errRollback) {
		return false, nil
	}
	return more, err
}

// errRollback rolls a transaction back on a delivery failure or a contended lock, which
// Result reports.
var errRollback = errors.New("rollback")

// batchStep delivers up to BatchSize groups under one lock of the shard's head, in head
// order (by each group's lowest id, the order exact mode reaches them), and deletes every
// delivered group's rows up to its delivered id in one statement. A failure stops at the
// failing group: the groups delivered before it are deleted and committed.
func batchStep(ctx context.Context, conn *pgx.Conn, o Options, res *Result, after *int64) (bool, error) {
	more := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		head, err := o.lockHead(ctx, tx, res)
		if err != nil || head == nil {
			return err
		}
		limit := o.BatchSize
		if o.MaxMessages > 0 {
			limit = min(limit, o.MaxMessages-res.Delivered)
		}
		groups, err := query.Run(ctx, tx, o.st(query.DrainGroups(o.Target, o.Shard, o.Watermark, limit, *after)))
		if err != nil {
			return err
		}
		var delivered []Message
		batch := make([]Message, 0, len(groups.Rows))
		for _, r := range groups.Rows {
			batch = append(batch, o.message(r, groups.Col))
		}
		if err := o.fillCoalesced(ctx, tx, batch); err != nil {
			return err
		}
		for _, m := range batch {
			if o.Handler != nil {
				if err := o.Handler.Deliver(ctx, m); err != nil {
					res.Failed, res.FailedErr = &m, err
					break
				}
			}
			delivered = append(delivered, m)
		}
		if len(delivered) > 0 {
			// The next batch starts above the lowest id of the last group delivered.
			if first, ok := groups.Rows[len(delivered)-1][groups.Col("first_id")].(int64); ok && first > *after {
				*after = first - 1
			}
			cats, objs, ids := make([]int64, len(delivered)), make([]int64, len(delivered)), make([]int64, len(delivered))
			for i, m := range delivered {
				cats[i], objs[i], ids[i] = int64(m.Category), m.Object, m.ID
			}
			if o.discards() {
				if err := o.archive(ctx, tx, cats, objs, ids, false); err != nil {
					return err
				}
			}
			n, err := query.Exec(ctx, tx, o.st(query.DrainDeleteGroups(o.Target, o.Shard, cats, objs, ids)))
			if err != nil {
				return err
			}
			res.Deleted += n
			res.Delivered += len(delivered)
			if o.OnDelivered != nil {
				for _, m := range delivered {
					o.OnDelivered(m)
				}
			}
		}
		more = res.Failed == nil && len(groups.Rows) == limit
		return nil
	})
	if errors.Is(err, errRollback) {
		return false, nil
	}
	return more, err
}
