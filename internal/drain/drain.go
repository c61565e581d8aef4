package drain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/query/session"
)

// Errors the drain returns before or instead of draining.
var (
	// ErrInTransaction: the connection is inside a transaction block. A drain holds row
	// locks across deliveries and must commit each message on its own (Sentry's drain_shard
	// asserts the same, in tests only).
	ErrInTransaction = errors.New("refusing to drain inside a transaction block: the drain commits each message on its own; run it on a connection outside BEGIN … COMMIT")
	// ErrReplica: the server is in recovery (db.CheckPrimary's cause).
	ErrReplica = db.ErrReplica
	// ErrShardLocked: another drainer holds the shard's lowest row (SQLSTATE 55P03).
	ErrShardLocked = errors.New("another drainer holds this shard (its lowest row is locked): let it finish, or retry later")
	// ErrEmpty: the shard has no rows.
	ErrEmpty = errors.New("the shard is empty")
	// ErrNoArchive: rows would be deleted without delivery and there is nowhere to keep them.
	ErrNoArchive = errors.New("refusing to delete rows without delivery: no archive to write them to (--archive)")
)

// Mode chooses how a drain issues its statements.
type Mode string

// The modes. Both deliver the same messages in the same order and leave the same table.
const (
	// ModeExact replays Sentry's statement sequence one for one: one transaction per message,
	// duplicates deleted by 50-row slices.
	ModeExact Mode = "exact"
	// ModeBatch delivers several coalesce groups under one lock of the shard's head and
	// deletes them with one set-based statement per transaction.
	ModeBatch Mode = "batch"
)

// Defaults of the batch mode.
const (
	DefaultBatchSize = 500
	// DefaultBatchTime bounds how long one batch transaction stays open: a failure or a kill
	// redelivers at most this much work, and row locks are held no longer.
	DefaultBatchTime = 2 * time.Second
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
	// CoalescedCount is how many rows of the group were waiting at delivery; Coalesced lists
	// the first 100 ids up to the delivered one when Options.CoalescedIDs is set.
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
	// Handler delivers; nil delivers nothing (a kill-switch trim, or Discard).
	Handler Handler
	// Discard deletes without delivering (--handler discard): every deleted row is archived
	// first. The command says so explicitly: whether a delete needs an archive is decided
	// from what the run does, never from the handler's type (a wrapped handler would hide it).
	Discard bool
	// Killswitched drains like Sentry does a disabled shard: trim the head group's older
	// duplicates without delivering, keep the newest, stop.
	Killswitched bool
	// Watermark bounds which groups are visited: the drain ends when no row at or below it
	// is left (0: no bound, --follow). It never bounds which row of a group is delivered.
	Watermark int64
	// MaxMessages stops after this many deliveries (0: no limit).
	MaxMessages int
	// Rate is the most deliveries per second (0: no limit). The drain never waits inside a
	// transaction: a batch commits before any wait, and every wait ends on cancellation.
	Rate float64
	// HandlerTimeout is the longest one delivery may take; the drain's transactions allow
	// the server to keep them open (idle in transaction) at least this long.
	HandlerTimeout time.Duration
	// BatchSize is the most messages ModeBatch delivers in one transaction; BatchTime the
	// longest one batch transaction stays open before it commits.
	BatchSize int
	BatchTime time.Duration
	// Names resolves enum names for messages.
	CategoryName func(int) string
	ScopeName    func(int) string
	// OnDelivered is called once for each message after its deletion committed.
	OnDelivered func(Message)
	// Abandon, when cancelled (a second Ctrl-C), abandons the delivery in flight: the
	// handler gets it as its context and stops (a command's process group is killed), the
	// message is not deleted, what was delivered before it is committed, and Run returns
	// context.Canceled. nil: a delivery is never abandoned.
	Abandon context.Context
	// OnWaiting is called when Run's context is cancelled (the first Ctrl-C) while a
	// delivery is in flight, with the message and the most the handler may still take: the
	// command says what it waits for and how to abandon it.
	OnWaiting func(m Message, left time.Duration)
	// Archive receives every row deleted without delivery (discard, kill-switch trim), in
	// two phases: staged (synced) before the DELETE, a commit marker after the transaction
	// committed. The drain refuses to delete such rows without one.
	Archive *Operation
	// Warnf, when set, hears of an archive marker that could not be written after a
	// rollback (ArchivedDelete.Warnf).
	Warnf func(format string, args ...any)
	// Claimed is the claim this drain runs under: the archive keeps each row's schedule
	// from before the claim (the rows as they were before outboxctl touched them).
	Claimed *Claimed
	// Command and Reason are recorded with archived rows and in the SQL comment.
	Command, Reason string
	// Reconnect opens a fresh connection to settle a COMMIT that got no answer
	// (db.InDoubtError): the drain's own connection is the one that failed. nil: the
	// transaction is left in doubt (Result.InDoubt, Outcome Unsettled).
	Reconnect func(ctx context.Context) (*db.Conn, error)
	// IdleTimeoutMS is the connection's idle_in_transaction_session_timeout in ms, when the
	// caller read it already (a parallel drain's worker, once per connection); nil: Run
	// reads it.
	IdleTimeoutMS *int64
	// CoalescedIDs lists, in each message, the first ids of its group (reads every row of the
	// group: opt-in); the count is always there.
	CoalescedIDs bool
	// guarded: Guard passed on this connection already (a parallel drain's worker checks
	// once per connection, not once per shard); Run still refuses a transaction block.
	guarded bool
}

// discards reports whether this run deletes rows that nothing delivered.
func (o Options) discards() bool {
	return o.Discard || o.Killswitched || o.Handler == nil
}

// discardGroups archives the rows of the given groups (up to, or below, each id), with
// their schedules from before the claim, and deletes exactly what it archived (one
// ArchivedDelete: the transaction's end writes the batch's marker). It returns how many
// rows it deleted.
func (r *run) discardGroups(ctx context.Context, tx pgx.Tx, cats, objs, upTo []int64, below bool) (int64, error) {
	o := r.o
	var before *Schedules
	if o.Claimed != nil {
		before = o.Claimed.Before
	}
	deleted, err := r.del.ArchiveAndDelete(ctx, tx, o.st(query.DrainArchiveRows(o.Target, o.Shard, cats, objs, upTo, below)), before)
	return int64(len(deleted)), err
}

// Result says what a drain did.
type Result struct {
	// Delivered counts messages delivered whose deletion committed.
	Delivered int
	// Uncommitted counts messages the handler accepted but whose deletion did not commit
	// (the connection died, or the commit failed): they are still in the table and will be
	// delivered again (at-least-once).
	Uncommitted int
	Deleted     int64 // rows deleted, delivered ones included
	Trimmed     int64 // rows deleted without delivery (kill-switched shard)
	// InDoubt is the transaction whose COMMIT got no answer (the drain stopped there), with
	// what the settle found; Delivered, Deleted and Uncommitted count it once settled.
	InDoubt *InDoubt
	// Contended is true when another drainer held the shard (the drain stopped).
	Contended bool
	// Failed is the message whose delivery failed, with the handler's error.
	Failed    *Message
	FailedErr error
	// Abandoned is the message whose delivery was abandoned (Options.Abandon): it is still
	// in the table.
	Abandoned *Message
}

// errAbandonedDelivery is what deliver returns for a delivery abandoned by Options.Abandon.
var errAbandonedDelivery = errors.New("delivery abandoned")

// Guard refuses a connection that is inside a transaction block or on a replica.
func Guard(ctx context.Context, conn *db.Conn) error {
	if conn.InTransaction() {
		return ErrInTransaction
	}
	return db.CheckPrimary(ctx, conn, "drain")
}

// st marks a statement with the drain's --reason, as a SQL comment that shows in
// pg_stat_activity while it runs.
func (o Options) st(s query.Statement) query.Statement {
	return query.Why{Command: o.Command, Reason: o.Reason}.Mark(s)
}

func isLockNotAvailable(err error) bool { return db.SQLState(err) == "55P03" }

// Claimed is what a claim did: the schedule it gave the shard, and every row's schedule
// before it.
type Claimed struct {
	At, Next time.Time // scheduled_from and scheduled_for the claim wrote
	Before   *Schedules
}

// Delay is the backoff the claim applied.
func (c *Claimed) Delay() time.Duration { return c.Next.Sub(c.At) }

// claimHead is the lowest row's schedule, which the claim's next delay is computed from.
type claimHead struct {
	From time.Time `db:"scheduled_from"`
	For  time.Time `db:"scheduled_for"`
}

// claimedRows is one line of drain-claim: the schedule some rows had before the claim, what
// the claim wrote, and their ids, scanned typed (a NULL id is an error, never id 0: a
// schedule put back on the wrong row would be worse than none). The schedules are read as
// they come: an infinite timestamp (which no time.Time holds) is left where it is rather
// than put back wrong.
type claimedRows struct {
	For         pgtype.Timestamptz   `db:"scheduled_for"`
	ClaimedFrom time.Time            `db:"claimed_from"`
	ClaimedFor  time.Time            `db:"claimed_for"`
	IDs         []int64              `db:"ids"`
	From        pgtype.Timestamptz   `db:"scheduled_from"` // the rows' one scheduled_from, when Froms is nil
	Froms       []pgtype.Timestamptz `db:"froms"`          // else IDs' own, in IDs' order
}

// claimedGroup is one line of drain-claim as a ScheduleGroup: its rows' scheduled_for, and
// their scheduled_from once when they share it (a shard claimed before) or row by row (rows
// never claimed since they were written). A row whose schedule is an infinite timestamp
// (which no time.Time holds) is left out: the unclaim leaves it where the claim put it rather
// than put it back wrong.
func claimedGroup(r claimedRows) (ScheduleGroup, error) {
	if r.Froms != nil && len(r.Froms) != len(r.IDs) {
		return ScheduleGroup{}, fmt.Errorf("drain-claim: %d ids but %d scheduled_from", len(r.IDs), len(r.Froms))
	}
	sfor, ok := finite(r.For)
	if !ok || len(r.IDs) == 0 {
		return ScheduleGroup{}, nil
	}
	if r.Froms == nil {
		from, ok := finite(r.From)
		if !ok {
			return ScheduleGroup{}, nil
		}
		return ScheduleGroup{Schedule: Schedule{From: from, For: sfor}, IDs: r.IDs}, nil
	}
	g := ScheduleGroup{Schedule: Schedule{For: sfor}, IDs: make([]int64, 0, len(r.IDs)), Froms: make([]int64, 0, len(r.IDs))}
	for i, f := range r.Froms {
		if from, ok := finite(f); ok {
			g.IDs = append(g.IDs, r.IDs[i])
			g.Froms = append(g.Froms, from.UnixMicro())
		}
	}
	return g, nil
}

// finite is t as a time, false for NULL or an infinite timestamp.
func finite(t pgtype.Timestamptz) (time.Time, bool) {
	return t.Time.UTC(), t.Valid && t.InfinityModifier == pgtype.Finite
}

// Claim is prepare_next_from_shard: lock the shard's lowest row without waiting and push
// the whole shard's schedule forward (next = now + min(2 × last delay, 1 h), last delay from
// the lowest row, at least 1 s), in its own transaction. The backoff is applied before
// processing: success deletes the rows, failure leaves them with the new schedule.
func Claim(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (*Claimed, error) {
	if err := Guard(ctx, conn); err != nil {
		return nil, err
	}
	return claim(ctx, conn, t, k)
}

// claim is Claim on a connection Guard already passed (a parallel drain's worker checks
// once per connection: a primary's session never turns into a replica's).
func claim(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (*Claimed, error) {
	if conn.InTransaction() {
		return nil, ErrInTransaction
	}
	// REPEATABLE READ: the claim records every row's schedule from its snapshot and pushes
	// the same rows forward. In READ COMMITTED a row another transaction rescheduled and
	// committed while the UPDATE waited for its lock was pushed as it had become but recorded
	// as it was, and an unclaim put back a schedule nobody had any more. Now that UPDATE fails
	// (40001) and the claim starts again from a new snapshot. What causes it is a writer that
	// changes or deletes the shard's rows without waiting for the head the claim holds: a
	// hand-written statement, a single-shard compact or skip (they delete a group's rows
	// without locking the head), or a drainer whose head is a lower id committed after the
	// snapshot. Rare; each try costs the claim's UPDATE again (seconds on a shard of
	// millions), so a few tries, a short pause between them, then a plain error.
	var err error
	for try := 1; ; try++ {
		var c *Claimed
		c, err = claimOnce(ctx, conn, t, k)
		if err == nil {
			return c, nil
		}
		if !db.IsSerializationFailure(err) || try == claimTries {
			break
		}
		select {
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if db.IsSerializationFailure(err) {
		return nil, &db.Error{Kind: db.KindOther, SQLState: "40001", Err: err,
			Msg:  fmt.Sprintf("the shard's rows changed under the claim %d times in a row (in drain-claim)", claimTries),
			Hint: "another session updates or deletes this shard's rows (a compact, a skip, a hand-written statement): find it in pg_stat_activity, then drain again"}
	}
	return nil, err
}

// claimTries is how many times a claim starts again when a row changed under it.
const claimTries = 5

// claimOnce is one try of the claim, in one REPEATABLE READ transaction.
func claimOnce(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (*Claimed, error) {
	c := &Claimed{}
	err := db.RunSnapshotWriteTx(ctx, conn, nil, func(tx pgx.Tx) error {
		head, err := query.Run(ctx, tx, query.DrainHead(t, k, 0, 0))
		if err != nil {
			if isLockNotAvailable(err) {
				return ErrShardLocked
			}
			return err
		}
		if len(head.Rows) == 0 {
			return ErrEmpty
		}
		heads, err := query.Rows[claimHead](head)
		if err != nil {
			return err
		}
		// Binary rows: the ids are the whole shard's (2M on #27's hot shard).
		rows, err := query.AllBinary[claimedRows](ctx, tx, query.DrainClaim(t, k, heads[0].From, heads[0].For))
		if err != nil {
			return err
		}
		groups := make([]ScheduleGroup, 0, len(rows))
		for _, r := range rows {
			c.At, c.Next = r.ClaimedFrom.UTC(), r.ClaimedFor.UTC()
			g, err := claimedGroup(r)
			if err != nil {
				return err
			}
			if len(g.IDs) > 0 {
				groups = append(groups, g)
			}
		}
		c.Before = NewSchedules(groups)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// UnclaimIfUnavailable puts the shard's schedule back when the run's first delivery failed
// because the handler itself could not be reached (ErrHandlerUnavailable): nothing was
// attempted for real, so the shard must not carry a backoff for it. It reports whether it
// did; an error is why it could not (the caller says so and goes on).
func UnclaimIfUnavailable(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, c *Claimed, res Result) (bool, error) {
	if res.Failed == nil || res.Delivered > 0 || !errors.Is(res.FailedErr, ErrHandlerUnavailable) {
		return false, nil
	}
	n, err := Unclaim(context.WithoutCancel(ctx), conn, t, k, c)
	if err != nil {
		return false, err
	}
	if n == 0 && c.Before.Len() > 0 {
		// Nothing carried the claim's schedule any more (rows drained, or claimed again by a
		// Sentry worker since): say so rather than "back as it was".
		return false, ErrNothingUnclaimed
	}
	return true, nil
}

// ErrNothingUnclaimed is an unclaim that found no row still carrying the claim's schedule.
var ErrNothingUnclaimed = errors.New("no row of the shard carries the claim's schedule any more (drained or claimed again since): nothing was put back")

// Unclaim puts the shard's schedule back as it was before the claim, on every row that
// still carries the claim's schedule. A drain whose handler could not be reached at all
// uses it, so that typos never push a shard towards the 1 h cap.
func Unclaim(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, c *Claimed) (int64, error) {
	ids, froms, fors := c.Before.unclaimArrays()
	var n int64
	err := db.RunWriteTx(ctx, conn, nil, func(tx pgx.Tx) error {
		var err error
		n, err = query.Exec(ctx, tx, query.DrainUnclaim(t, k, ids, froms, fors, c.At, c.Next))
		return err
	})
	return n, err
}

// run is one drain in progress.
type run struct {
	conn *db.Conn
	o    Options
	res  Result
	// local is the SET LOCAL statements every transaction of the drain adds to the session's.
	local []string
	// last is when the last delivery started (for --rate).
	last time.Time
	// del archives and deletes what the drain deletes undelivered (nil without an archive).
	del *ArchivedDelete
	// prepared maps the SQL of statements prepared in the transaction in progress to their
	// names; seq numbers them. seen holds the SQL run once, unprepared, in it.
	prepared   map[string]string
	seen       map[string]bool
	seq        int
	namePrefix string
}

// Run drains one shard, message by message, faithful to Sentry's process_shard: lock the
// shard's lowest row (at or below the watermark; NOWAIT: contention stops the drain),
// deliver the newest row of its coalesce group, delete the group up to that row, repeat
// until no row at or below the watermark is left. A delivery failure stops the drain at
// that message (head-of-line, like Sentry); what was delivered before it is committed.
// Cancelling ctx (SIGINT, SIGTERM) lets the delivery in flight finish, commits what was
// delivered and returns ctx's error. It does not claim: call Claim first.
func Run(ctx context.Context, conn *db.Conn, o Options) (Result, error) {
	r := &run{conn: conn, o: o}
	if o.guarded && conn.InTransaction() {
		return r.res, ErrInTransaction
	} else if !o.guarded {
		if err := Guard(ctx, conn); err != nil {
			return r.res, err
		}
	}
	if o.discards() && o.Archive == nil {
		return r.res, ErrNoArchive
	}
	if o.Archive != nil {
		r.del = &ArchivedDelete{Op: o.Archive, Target: o.Target, Why: query.Why{Command: o.Command, Reason: o.Reason}, Warnf: o.Warnf}
	}
	if r.o.BatchSize <= 0 {
		r.o.BatchSize = DefaultBatchSize
	}
	if r.o.BatchTime <= 0 {
		r.o.BatchTime = DefaultBatchTime
	}
	if err := r.sessionSettings(ctx); err != nil {
		return r.res, err
	}
	for {
		if o.MaxMessages > 0 && r.res.Delivered >= o.MaxMessages {
			return r.res, nil
		}
		if err := r.wait(ctx); err != nil {
			return r.res, err
		}
		var more bool
		var err error
		if o.Mode == ModeBatch && !o.Killswitched {
			more, err = r.batchStep(ctx)
		} else {
			more, err = r.exactStep(ctx)
		}
		if err == nil && r.res.Abandoned != nil {
			return r.res, context.Canceled // interrupted, like any other stop on a signal
		}
		if db.IsInDoubt(err) {
			r.settle(ctx)
		}
		if err != nil || !more || r.res.Failed != nil || r.res.Contended {
			return r.res, err
		}
	}
}

// sessionSettings makes the server allow a transaction to sit idle at least as long as one
// delivery may take: a shorter idle_in_transaction_session_timeout would kill the drain's
// transaction mid-delivery, roll back what it delivered, and redeliver it on every run.
func (r *run) sessionSettings(ctx context.Context) error {
	r.local = []string{session.SetLocal("plan_cache_mode", "force_generic_plan")}
	if r.o.HandlerTimeout <= 0 {
		return nil
	}
	ms, err := IdleTimeout(ctx, r.conn, r.o.IdleTimeoutMS)
	if err != nil {
		return err
	}
	// PostgreSQL's limit for the setting is INT_MAX milliseconds (~24.8 days).
	if want := min((r.o.HandlerTimeout + 10*time.Second).Milliseconds(), math.MaxInt32); ms != 0 && ms < want {
		r.local = append(r.local, session.SetLocal("idle_in_transaction_session_timeout", strconv.FormatInt(want, 10)))
	}
	return nil
}

// IdleTimeout is the connection's idle_in_transaction_session_timeout in ms: known when
// given, else read.
func IdleTimeout(ctx context.Context, conn *db.Conn, known *int64) (int64, error) {
	if known != nil {
		return *known, nil
	}
	var ms int64
	if err := conn.QueryRow(ctx, session.IdleTimeoutSetting()).Scan(&ms); err != nil {
		return 0, db.Classify(err, "reading the idle timeout")
	}
	return ms, nil
}

// gap is the time to wait before the next delivery under --rate.
func (r *run) gap() time.Duration {
	if r.o.Rate <= 0 || r.last.IsZero() {
		return 0
	}
	return time.Duration(math.Min(float64(time.Second)/r.o.Rate, float64(math.MaxInt64))) - time.Since(r.last)
}

// wait sleeps out the rate limit, outside any transaction; cancellation ends it at once.
func (r *run) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := r.gap()
	if g <= 0 {
		return nil
	}
	t := time.NewTimer(g)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver hands one message to the handler. The delivery in flight is not cancelled by
// the first SIGINT (the handler's own timeout bounds it): the drain says what it waits for
// (OnWaiting), finishes it, then stops. Options.Abandon, cancelled by a second signal, stops
// the handler: the delivery then fails with errAbandonedDelivery, whatever the handler said.
func (r *run) deliver(ctx context.Context, m Message) error {
	r.last = time.Now()
	if r.o.Handler == nil || r.o.Killswitched {
		return nil
	}
	abandon := r.o.Abandon
	if abandon == nil {
		abandon = context.WithoutCancel(ctx)
	}
	if r.o.OnWaiting != nil {
		start, said := r.last, make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(said)
			r.o.OnWaiting(m, r.o.HandlerTimeout-time.Since(start))
		})
		defer func() {
			if !stop() {
				<-said // the line is out before the delivery's outcome is
			}
		}()
	}
	err := r.o.Handler.Deliver(abandon, m)
	if err != nil && abandon.Err() != nil {
		return fmt.Errorf("%w: %w", errAbandonedDelivery, err)
	}
	return err
}

// stopped records a delivery that did not succeed: abandoned, or failed.
func (r *run) stopped(m Message, err error) {
	if errors.Is(err, errAbandonedDelivery) {
		r.res.Abandoned = &m
		return
	}
	r.res.Failed, r.res.FailedErr = &m, err
}

// tx runs one transaction of the drain. Its statements are not cancelled by SIGINT either:
// a step runs to its commit, and the drain stops before the next one.
func (r *run) tx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	step := context.WithoutCancel(ctx)
	committing := false
	err := db.RunWriteTx(step, r.conn, r.local, func(tx pgx.Tx) error {
		// Drop the prepared statements inside the transaction, before its COMMIT or
		// ROLLBACK: behind PgBouncer's transaction pooling, the server connection is another
		// client's after it, and a statement left there collides with the next drain's.
		defer r.deallocate(step, tx)
		if err := fn(step, tx); err != nil {
			return err
		}
		committing = true
		return nil
	})
	return r.del.Finish(err, committing)
}

// runPrepared runs a statement the batch repeats for every message with other values,
// planned once per transaction (plan_cache_mode = force_generic_plan in the drain's
// transactions): planning the statement afresh cost several times its execution. The
// statement lives only as long as the transaction (deallocated before its end), so it is
// safe behind PgBouncer's transaction pooling too; its name carries the process's own
// prefix besides, so that even a statement a crash left behind never collides. A statement
// the caller expects once per transaction (once: the batch's first read, with no group
// before it) is prepared only at its second run: a PREPARE and its DEALLOCATE would cost
// two round trips more than they save.
func (r *run) runPrepared(ctx context.Context, tx pgx.Tx, st query.Statement, once bool) (*query.Result, error) {
	sql, args, err := st.Bind()
	if err != nil {
		return nil, err
	}
	name, ok := r.prepared[sql]
	if !ok && once && !r.seen[sql] {
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[sql] = true
		return query.Run(ctx, tx, st)
	}
	if !ok {
		r.seq++
		name = fmt.Sprintf("outboxctl_drain_%s_%d", r.prefix(), r.seq)
		if _, err := tx.Prepare(ctx, name, sql); err != nil {
			return nil, err
		}
		if r.prepared == nil {
			r.prepared = map[string]string{}
		}
		r.prepared[sql] = name
	}
	return query.RunBound(ctx, tx, st.Name, name, args)
}

// deallocate drops the statements the transaction prepared, on the transaction's own
// connection (best effort: after a failure the connection may be gone, and the names are
// never reused).
func (r *run) deallocate(ctx context.Context, tx pgx.Tx) {
	for _, name := range r.prepared {
		_ = tx.Conn().Deallocate(ctx, name)
	}
	r.prepared, r.seen = nil, nil
}

// prefix is this run's part of its prepared statements' names: random, so two processes
// whose statements meet on one pooled server connection never share a name.
func (r *run) prefix() string {
	if r.namePrefix == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		r.namePrefix = hex.EncodeToString(b[:])
	}
	return r.namePrefix
}

// lockHead locks the shard's lowest row at or below the watermark (NOWAIT). It returns nil
// when there is none, and errStop when another drainer holds it.
func (r *run) lockHead(ctx context.Context, tx pgx.Tx) (*query.Result, error) {
	head, err := query.Run(ctx, tx, r.o.st(query.DrainHead(r.o.Target, r.o.Shard, r.o.Watermark, 0)))
	switch {
	case isLockNotAvailable(err):
		r.res.Contended = true
		return nil, errStop
	case err != nil:
		return nil, err
	case len(head.Rows) == 0:
		return nil, nil
	}
	return head, nil
}

// messageKey is the key of the row a message delivers, read by name: a NULL or a value of
// another type is an error, never message 0 of category 0. Its payload (NULL: none) and
// times come along; a statement without them leaves them unset, as before.
type messageKey struct {
	ID           int64      `db:"id"`
	Category     int        `db:"category"`
	Object       int64      `db:"object_identifier"`
	Payload      *string    `db:"payload,optional"`
	DateAdded    *time.Time `db:"date_added,optional"`
	ScheduledFor *time.Time `db:"scheduled_for,optional"`
}

// message is the row r of res (DrainNewest's or DrainNext's) as a handler receives it.
func (o Options) message(res *query.Result, r int) (Message, error) {
	keys, err := query.Rows[messageKey](&query.Result{Statement: res.Statement, Columns: res.Columns, Rows: res.Rows[r : r+1]})
	if err != nil {
		return Message{}, err
	}
	k := keys[0]
	m := Message{Table: o.Target.TableName(), Silo: string(o.Target.Silo), Cell: o.Target.Cell,
		Scope: o.Shard.Scope.Value, ScopeName: o.Shard.Scope.Name, Shard: o.Shard.ID,
		ID: k.ID, Category: k.Category, Object: k.Object, Payload: k.Payload,
		DateAdded: query.Deref(k.DateAdded), ScheduledFor: query.Deref(k.ScheduledFor)}
	if o.CategoryName != nil {
		m.CategoryName = o.CategoryName(m.Category)
	}
	return m, nil
}

// fillCoalesced sets, on each message, the rows of its group the delivery stands for.
func (o Options) fillCoalesced(ctx context.Context, tx pgx.Tx, ms []Message) error {
	if len(ms) == 0 {
		return nil
	}
	cats, objs, ids := groupArrays(ms)
	res, err := query.Run(ctx, tx, o.st(query.DrainCoalesced(o.Target, o.Shard, cats, objs, ids, o.CoalescedIDs)))
	if err != nil {
		return err
	}
	rows, err := query.Rows[coalescedRow](res)
	if err != nil {
		return err
	}
	found := map[groupKey]coalescedRow{}
	for _, r := range rows {
		found[groupKey{r.Category, r.Object}] = r
	}
	for i := range ms {
		r, ok := found[groupKey{int64(ms[i].Category), ms[i].Object}]
		if !ok {
			continue
		}
		ms[i].CoalescedCount = r.Count
		if r.IDs != nil { // NULL: the ids were not asked for
			if ms[i].Coalesced, err = query.Int64s(*r.IDs); err != nil {
				return fmt.Errorf("%s, column coalesced_ids: %w", res.Statement, err)
			}
		}
	}
	return nil
}

// coalescedRow is one row of query.DrainCoalesced.
type coalescedRow struct {
	Category int64  `db:"category"`
	Object   int64  `db:"object_identifier"`
	Count    int64  `db:"coalesced_count"`
	IDs      *[]any `db:"coalesced_ids"`
}

type groupKey struct{ cat, obj int64 }

func groupArrays(ms []Message) (cats, objs, ids []int64) {
	cats, objs, ids = make([]int64, len(ms)), make([]int64, len(ms)), make([]int64, len(ms))
	for i, m := range ms {
		cats[i], objs[i], ids[i] = int64(m.Category), m.Object, m.ID
	}
	return cats, objs, ids
}

// errStop rolls a transaction back on a delivery failure or a contended lock, which
// Result reports.
var errStop = errors.New("stop")

// exactStep is one iteration of Sentry's process_shard, statement for statement.
func (r *run) exactStep(ctx context.Context) (bool, error) {
	o := r.o
	var m Message
	var found, handed bool
	var deleted, trimmed int64
	signals := ctx // the statements below run under the step's uncancelled context
	err := r.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		head, err := r.lockHead(ctx, tx)
		if err != nil || head == nil {
			return err
		}
		hk, err := query.Rows[messageKey](head)
		if err != nil {
			return err
		}
		cat, obj := hk[0].Category, hk[0].Object
		newest, err := query.Run(ctx, tx, o.st(query.DrainNewest(o.Target, o.Shard, cat, obj)))
		if err != nil || len(newest.Rows) == 0 {
			return err
		}
		msg, err := o.message(newest, 0)
		if err != nil {
			return err
		}
		one := []Message{msg}
		if err := o.fillCoalesced(ctx, tx, one); err != nil {
			return err
		}
		m, found = one[0], true
		if err := r.deliver(signals, m); err != nil {
			r.stopped(m, err)
			return errStop
		}
		handed = !o.Killswitched && !o.Discard && o.Handler != nil
		if o.discards() {
			// Nothing here is delivered: archive the group (all of it when discarding, the
			// older rows when trimming a disabled shard) and delete exactly what was archived.
			deleted, err = r.discardGroups(ctx, tx, []int64{int64(cat)}, []int64{obj}, []int64{m.ID}, o.Killswitched)
			if o.Killswitched {
				trimmed = deleted // Sentry keeps the newest row of a disabled shard and stops
			}
			return err
		}
		if deleted, err = r.deleteOlder(ctx, tx, cat, obj, m.ID); err != nil {
			return err
		}
		n, err := query.Exec(ctx, tx, o.st(query.DrainDeleteIDs(o.Target, []int64{m.ID})))
		deleted += n
		return err
	})
	switch {
	case errors.Is(err, errStop):
		return false, nil
	case db.IsInDoubt(err):
		var msgs []Message
		if found && !o.Killswitched {
			msgs = []Message{m}
		}
		r.inDoubt(msgs, handed, deleted, trimmed)
		return false, err
	case err != nil:
		if handed {
			r.res.Uncommitted++
		}
		return false, err
	case !found:
		return false, nil // no row left at or below the watermark
	}
	r.res.Deleted += deleted
	r.res.Trimmed += trimmed
	if o.Killswitched {
		return false, nil
	}
	r.res.Delivered++
	if o.OnDelivered != nil {
		o.OnDelivered(m)
	}
	return true, nil
}

// deleteOlder is Sentry's duplicate deletion: SELECT id … LIMIT 50 without ORDER BY, keep
// the ids below the delivered one, delete them, stop at the first slice with none.
func (r *run) deleteOlder(ctx context.Context, tx pgx.Tx, cat int, obj, below int64) (int64, error) {
	var deleted int64
	for {
		slice, err := query.Run(ctx, tx, r.o.st(query.DrainDuplicateSlice(r.o.Target, r.o.Shard, cat, obj)))
		if err != nil {
			return deleted, err
		}
		var older []int64
		for _, row := range slice.Rows {
			if id, _ := row[0].(int64); id < below {
				older = append(older, id)
			}
		}
		if len(older) == 0 {
			return deleted, nil
		}
		n, err := query.Exec(ctx, tx, r.o.st(query.DrainDeleteIDs(r.o.Target, older)))
		if err != nil {
			return deleted, err
		}
		deleted += n
	}
}
