// Package sentrysim replays Sentry's outbox workers against a real PostgreSQL schema, for
// tests only (imported from _test.go files, like internal/testdb). It is written from the
// reference (/work/shared/reference/sentry-outboxes.md §3, §8), not from outboxctl's drain, so
// that the incident tests compare outboxctl with an independent model of what Sentry does:
// the scheduler's id windows (§3.1), find_scheduled_shards (§3.3), the claim with its doubling
// backoff (§3.4), the drain's one transaction per coalesce group (§3.5-3.7) and the kill
// switches (§3.8). Its SQL is Sentry's, written here as plain strings on purpose.
//
// Time is virtual: every operation takes now explicitly, as Sentry's SQL binds :now; the
// database's now() is never used: when outboxctl runs beside it, let the virtual times end
// near the real now. The five window tasks of a tick run one after the other (Sentry runs
// them in parallel): a shard with rows in two windows is claimed by the first, and the
// second finds it no longer due, where Sentry's tasks could race for it. The receiver is
// called inside the iteration's transaction, holding the shard's head locked, as in Sentry
// (§8.9): it must not wait for a command that locks that shard.
package sentrysim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outboxctl/outboxctl/internal/options"
)

// ThePast is Sentry's THE_PAST, the scheduled_for of every new outbox row (§8.3).
var ThePast = time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // a constant time

// Concurrency is schedule_batch's CONCURRENCY: the id windows per tick (§3.1).
const Concurrency = 5

// MaxBackoff caps the claim's doubling delay (PR #51199, §3.4).
const MaxBackoff = time.Hour

// deleteSlice is the size of the drain's duplicate-deletion slices (PR #84176, §3.7).
const deleteSlice = 50

// Shard is a shard key: (region_name, shard_scope, shard_identifier) in the control outbox,
// (shard_scope, shard_identifier) in a cell outbox (Cell "").
type Shard struct {
	Cell  string
	Scope int
	ID    int64
}

// GroupKey is a coalesce group: the sharding columns plus (category, object_identifier).
type GroupKey struct {
	Shard
	Category int
	Object   int64
}

// Message is what a delivery signal carries: the newest row of a coalesce group.
type Message struct {
	ID        int64
	Key       GroupKey
	Payload   *string // payload::text; nil is SQL NULL
	DateAdded time.Time
	At        time.Time // the virtual time of the delivery
}

// Receiver handles one message; an error is Sentry's OutboxFlushError: the iteration rolls
// back and the shard stops until its next attempt.
type Receiver func(Message) error

// Attempt is one call of the receiver. Committed is true when the iteration that delivered it
// committed its deletions (false after a receiver error or a task deadline).
type Attempt struct {
	Message
	Err       error
	Committed bool
}

// Trim is one visit of a kill-switched shard: the older duplicates of its head group it
// deleted without delivery (none once the head is the newest of its group, §3.8).
type Trim struct {
	At  time.Time
	Key GroupKey
	IDs []int64
}

// Failure is a shard whose drain stopped on an error: a receiver error (captured, the task
// goes on with the next shard, §3.2) or the task deadline (the task ends, ErrDeadline).
type Failure struct {
	At    time.Time
	Shard Shard
	Err   error
}

// ErrDeadline is a drain task killed by processing_deadline_duration (see Options.DeadlineRows).
var ErrDeadline = errors.New("drain task passed its processing deadline")

// Options configure a Sim.
type Options struct {
	// Receiver delivers messages; nil accepts every message.
	Receiver Receiver
	// OptionsTable is where the workers read the kill switches, at every tick that has a due
	// row (Sentry's option caches, up to ~20 s, are not modeled): "sentry_option" (default:
	// a cell or a monolith) or "sentry_controloption" (a split control silo) (§5.1).
	OptionsTable string
	// Disabled, when set, replaces the options table's lists (asked for ORG and USER shards
	// only: no other scope is ever skipped).
	Disabled func(scope int, shard int64) bool
	// DeadlineRows models processing_deadline_duration = 90 s (§3.1) as a budget of rows a
	// drain task (one id window of one tick) may delete; 0 means no deadline. The time of a
	// drain is spent deleting (a group's older duplicates go 50 at a time, §3.7), so rows are
	// the unit of work; a task that reaches the budget is killed mid-iteration: that
	// iteration rolls back (its delivery already happened and is logged uncommitted), earlier
	// iterations stay committed, and the task's remaining shards wait for the next tick. A
	// group larger than the budget therefore never drains (§10.5 #3) while small groups do.
	DeadlineRows int
	// Concurrency is schedule_batch's concurrency argument: 0 is Sentry's CONCURRENCY (5);
	// Sentry's own tests pass 1 (§4.1 D7).
	Concurrency int
}

// Sim is one silo's workers over one outbox table. Tick and Run are not for concurrent use;
// the logs (Attempts, Delivered, Trims, Failures) may be read at any time.
type Sim struct {
	pool    *pgxpool.Pool
	schema  string
	table   string
	control bool
	opts    Options
	t       string // quoted schema.table

	mu       sync.Mutex
	attempts []Attempt
	trims    []Trim
	failures []Failure
	ptype    string
}

// New returns the workers of table ("sentry_regionoutbox" or "sentry_controloutbox") in schema.
func New(pool *pgxpool.Pool, schema, table string, opts Options) *Sim {
	if opts.OptionsTable == "" {
		opts.OptionsTable = "sentry_option"
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = Concurrency
	}
	return &Sim{pool: pool, schema: schema, table: table, control: table == "sentry_controloutbox", opts: opts,
		t: pgx.Identifier{schema, table}.Sanitize()}
}

// shardCols are the sharding columns in Sentry's order.
func (s *Sim) shardCols() string {
	if s.control {
		return "region_name, shard_scope, shard_identifier"
	}
	return "shard_scope, shard_identifier"
}

// keyPred is K (or C with the group's columns), its arguments numbered from $1.
func (s *Sim) keyPred(sh Shard, group *GroupKey) (string, []any) {
	pred, args := "shard_scope = $1 AND shard_identifier = $2", []any{sh.Scope, sh.ID}
	if s.control {
		pred, args = "region_name = $3 AND "+pred, append(args, sh.Cell)
	}
	if group != nil {
		n := len(args)
		pred += fmt.Sprintf(" AND category = $%d AND object_identifier = $%d", n+1, n+2)
		args = append(args, group.Category, group.Object)
	}
	return pred, args
}

// Run ticks at from, from+step, ... while not after to.
func (s *Sim) Run(ctx context.Context, from, to time.Time, step time.Duration) error {
	for now := from; !now.After(to); now = now.Add(step) {
		if err := s.Tick(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// Tick is one scheduler run (§3.1) and the drain tasks it enqueues, at virtual time now.
// Receiver errors and deadlines are recorded (Failures), not returned; a database error is.
func (s *Sim) Tick(ctx context.Context, now time.Time) error {
	var lo, hi *int64
	var due bool
	// MIN(id), MAX(id) are §3.1's; "is any row due" only saves the five window queries when
	// they would find nothing (the whole table is read by them anyway).
	if err := s.pool.QueryRow(ctx, "SELECT MIN(id), MAX(id), coalesce(MIN(scheduled_for) <= $1, false) FROM "+s.t, now).Scan(&lo, &hi, &due); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	low, high := int64(0), int64(-1)
	if lo != nil {
		low, high = *lo, *hi
	}
	if high < low || !due {
		return nil
	}
	disabled, err := s.killSwitches(ctx)
	if err != nil {
		return err
	}
	span := high - low + 1
	conc := int64(s.opts.Concurrency)
	batch := (span + conc - 1) / conc
	for i := int64(0); i < conc; i++ {
		if err := s.processBatch(ctx, now, low+i*batch, low+(i+1)*batch, disabled); err != nil {
			return err
		}
	}
	return nil
}

// task is one drain task's budget (Options.DeadlineRows).
type task struct{ left int }

func (tk *task) spend(s *Sim, n int) error {
	if s.opts.DeadlineRows == 0 {
		return nil
	}
	if tk.left -= n; tk.left < 0 {
		return ErrDeadline
	}
	return nil
}

// processBatch is process_outbox_batch(hi, low) (§3.2): every due shard of the window,
// claimed then drained; a shard's error is captured and the loop goes on.
func (s *Sim) processBatch(ctx context.Context, now time.Time, low, hi int64, disabled func(Shard) bool) error {
	shards, err := s.findScheduledShards(ctx, now, low, hi)
	if err != nil {
		return err
	}
	tk := &task{left: s.opts.DeadlineRows}
	for _, sh := range shards {
		claimed, err := s.prepare(ctx, now, sh)
		if err != nil {
			return err
		}
		if !claimed {
			continue
		}
		err = s.drainShard(ctx, now, sh, tk, disabled(sh))
		var re *receiverError
		switch {
		case err == nil:
		case errors.Is(err, ErrDeadline) || errors.As(err, &re):
			if re != nil {
				err = re.err
			}
			s.mu.Lock()
			s.failures = append(s.failures, Failure{At: now, Shard: sh, Err: err})
			s.mu.Unlock()
			if re == nil {
				return nil // the worker is killed: the rest of the window waits for a later tick
			}
		default:
			return err
		}
	}
	return nil
}

// findScheduledShards is §3.3: shards with a due row inside [low, hi), by MIN(scheduled_for)
// then MAX(id).
func (s *Sim) findScheduledShards(ctx context.Context, now time.Time, low, hi int64) ([]Shard, error) {
	cols := s.shardCols()
	rows, err := s.pool.Query(ctx, "SELECT "+cols+" FROM "+s.t+
		" WHERE scheduled_for <= $1 AND id >= $2 AND id < $3 GROUP BY "+cols+
		" ORDER BY MIN(scheduled_for) ASC, MAX(id) ASC", now, low, hi)
	if err != nil {
		return nil, fmt.Errorf("find_scheduled_shards: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Shard, error) {
		var sh Shard
		if s.control {
			return sh, r.Scan(&sh.Cell, &sh.Scope, &sh.ID)
		}
		return sh, r.Scan(&sh.Scope, &sh.ID)
	})
}

func lockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// prepare is prepare_next_from_shard (§3.4): lock the lowest row NOWAIT (a lock held
// elsewhere skips the shard), then push every row of the shard to now + min(2 × the lowest
// row's last delay (at least 1 s), 1 h), before anything is delivered. Sentry's transaction
// (SELECT … FOR UPDATE NOWAIT, then UPDATE) is one statement here, the same locks in one
// round trip; the delay is computed in SQL rather than in Python.
func (s *Sim) prepare(ctx context.Context, now time.Time, sh Shard) (bool, error) {
	k, args := s.keyPred(sh, nil)
	n := len(args)
	var tag pgconn.CommandTag
	err := s.inTx(ctx, func(conn *pgx.Conn, b *pgx.Batch) error {
		b.Queue(fmt.Sprintf(`WITH first AS (
  SELECT scheduled_for, scheduled_from FROM %[1]s WHERE %[2]s ORDER BY id ASC LIMIT 1 FOR UPDATE NOWAIT)
UPDATE %[1]s SET scheduled_for = $%[3]d::timestamptz
         + LEAST(2 * GREATEST(first.scheduled_for - first.scheduled_from, interval '1 second'), $%[4]d::interval),
       scheduled_from = $%[3]d
  FROM first WHERE %[2]s`, s.t, k, n+1, n+2), append(args, now, MaxBackoff)...).Exec(func(ct pgconn.CommandTag) error {
			tag = ct
			return nil
		})
		b.Queue("COMMIT")
		return conn.SendBatch(ctx, b).Close()
	})
	switch {
	case lockNotAvailable(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("prepare_next_from_shard: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// inTx runs fn on a connection with a batch that begins a transaction; fn queues statements
// and sends them, ending with COMMIT; if it fails the transaction is rolled back. Commits
// are asynchronous (synchronous_commit = off: durability only, what other sessions see is
// the same), or every claim would wait for a WAL flush on a busy test machine.
func (s *Sim) inTx(ctx context.Context, fn func(conn *pgx.Conn, b *pgx.Batch) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	if err := fn(conn.Conn(), b); err != nil {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}

type receiverError struct{ err error }

func (e *receiverError) Error() string { return "receiver: " + e.err.Error() }

// drainShard is drain_shard(flush_all=True) (§3.5): iterations until one delivers nothing.
func (s *Sim) drainShard(ctx context.Context, now time.Time, sh Shard, tk *task, skip bool) error {
	for {
		sent, err := s.processShard(ctx, now, sh, tk, skip)
		if err != nil || !sent {
			return err
		}
	}
}

// processShard is one iteration (§3.6, §3.7), one transaction: lock the lowest row NOWAIT,
// deliver its group's newest row, delete the older duplicates 50 at a time, then the
// delivered row. A kill-switched shard deletes the older duplicates only, and stops.
// BEGIN and the two SELECTs go in one pipeline (each statement still has its own snapshot).
func (s *Sim) processShard(ctx context.Context, now time.Time, sh Shard, tk *task, skip bool) (sent bool, err error) {
	msg := Message{Key: GroupKey{Shard: sh}, At: now}
	var trimmed []int64
	attempt := -1
	err = s.inTx(ctx, func(conn *pgx.Conn, b *pgx.Batch) error {
		k, args := s.keyPred(sh, nil)
		head := "SELECT category, object_identifier FROM " + s.t + " WHERE " + k + " ORDER BY id ASC LIMIT 1"
		b.Queue(head+" FOR UPDATE NOWAIT", args...)
		b.Queue("SELECT id, category, object_identifier, payload::text, date_added FROM "+s.t+" WHERE "+k+
			" AND (category, object_identifier) = ("+head+") ORDER BY id DESC LIMIT 1", args...).QueryRow(func(r pgx.Row) error {
			return r.Scan(&msg.ID, &msg.Key.Category, &msg.Key.Object, &msg.Payload, &msg.DateAdded)
		})
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if !skip {
			var rerr error
			if s.opts.Receiver != nil {
				rerr = s.opts.Receiver(msg)
			}
			attempt = s.logAttempt(Attempt{Message: msg, Err: rerr})
			if rerr != nil {
				return &receiverError{rerr}
			}
		}
		c, cargs := s.keyPred(sh, &msg.Key)
		var err error
		if trimmed, err = s.deleteOlder(ctx, conn, c, cargs, msg.ID, tk); err != nil {
			return err
		}
		b = &pgx.Batch{}
		if !skip {
			if err := tk.spend(s, 1); err != nil {
				return err
			}
			b.Queue("DELETE FROM "+s.t+" WHERE id = $1", msg.ID)
		}
		b.Queue("COMMIT")
		return conn.SendBatch(ctx, b).Close()
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows) || lockNotAvailable(err):
		return false, nil // no row, or another drainer holds the head: the loop ends quietly
	case err != nil:
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if skip {
		s.trims = append(s.trims, Trim{At: now, Key: msg.Key, IDs: trimmed})
	} else {
		s.attempts[attempt].Committed = true
	}
	return !skip, nil
}

// deleteOlder is the duplicate-deletion loop: SELECT id … LIMIT 50 with no ORDER BY, keep
// the ids below the delivered row's, stop at the first slice with none (§3.7, §8.7). Under
// a deadline, a group that cannot fit the task's remaining budget is failed before its
// deletions: they would all be rolled back at the deadline anyway, and the loop is
// quadratic (each slice skips the index entries this transaction already deleted), so a
// 10,000-row attempt took 2 s.
func (s *Sim) deleteOlder(ctx context.Context, tx *pgx.Conn, c string, cargs []any, newest int64, tk *task) ([]int64, error) {
	if s.opts.DeadlineRows > 0 {
		var n int
		if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s AND id < $%d", s.t, c, len(cargs)+1),
			append(cargs, newest)...).Scan(&n); err != nil {
			return nil, err
		}
		if n > tk.left {
			return nil, ErrDeadline
		}
	}
	var deleted []int64
	for {
		rows, err := tx.Query(ctx, fmt.Sprintf("SELECT id FROM %s WHERE %s LIMIT %d", s.t, c, deleteSlice), cargs...)
		if err != nil {
			return nil, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		older := ids[:0]
		for _, id := range ids {
			if id < newest {
				older = append(older, id)
			}
		}
		if len(older) == 0 {
			return deleted, nil
		}
		if _, err := tx.Exec(ctx, "DELETE FROM "+s.t+" WHERE id = ANY($1)", older); err != nil {
			return nil, err
		}
		if err := tk.spend(s, len(older)); err != nil {
			return nil, err
		}
		deleted = append(deleted, older...)
	}
}

func (s *Sim) logAttempt(a Attempt) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts = append(s.attempts, a)
	return len(s.attempts) - 1
}

// killSwitches is should_skip_shard (§3.8) for this tick: ORG (0) and USER (1) shards listed
// in the options; every other scope is never skipped.
func (s *Sim) killSwitches(ctx context.Context) (func(Shard) bool, error) {
	if s.opts.Disabled != nil {
		return func(sh Shard) bool { return sh.Scope <= 1 && s.opts.Disabled(sh.Scope, sh.ID) }, nil
	}
	keys := []string{options.DisabledOrgShards, options.DisabledUserShards}
	rows, err := s.pool.Query(ctx, "SELECT key, value::text FROM "+pgx.Identifier{s.schema, s.opts.OptionsTable}.Sanitize()+
		" WHERE key = ANY($1)", keys)
	if err != nil {
		return nil, fmt.Errorf("reading the kill switches: %w", err)
	}
	off := map[int]map[int64]bool{}
	var key, raw string
	_, err = pgx.ForEachRow(rows, []any{&key, &raw}, func() error {
		v, err := options.Decode(key, raw)
		if err != nil {
			return err
		}
		ids, _, err := v.IDs() // strays (strings) match no shard in Sentry either
		scope := options.KillswitchScopes[key]
		off[scope] = map[int64]bool{}
		for _, id := range ids {
			off[scope][id] = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the kill switches: %w", err)
	}
	return func(sh Shard) bool { return off[sh.Scope][sh.ID] }, nil
}

// Attempts returns every receiver call so far, in order.
func (s *Sim) Attempts() []Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Attempt(nil), s.attempts...)
}

// Delivered returns the committed deliveries: messages whose rows Sentry deleted after them.
func (s *Sim) Delivered() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, a := range s.attempts {
		if a.Err == nil && a.Committed {
			out = append(out, a.Message)
		}
	}
	return out
}

// Trims returns the kill switch's deletions without delivery.
func (s *Sim) Trims() []Trim {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Trim(nil), s.trims...)
}

// Failures returns the shards whose drain stopped on an error, in order.
func (s *Sim) Failures() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Failure(nil), s.failures...)
}

// Snapshot maps every coalesce group to its newest row id.
type Snapshot map[GroupKey]int64

// Groups snapshots the table's coalesce groups.
func (s *Sim) Groups(ctx context.Context) (Snapshot, error) {
	cell := "''"
	if s.control {
		cell = "region_name"
	}
	rows, err := s.pool.Query(ctx, "SELECT "+cell+", shard_scope, shard_identifier, category, object_identifier, MAX(id) FROM "+s.t+
		" GROUP BY 1, 2, 3, 4, 5")
	if err != nil {
		return nil, err
	}
	out := Snapshot{}
	var k GroupKey
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&k.Cell, &k.Scope, &k.ID, &k.Category, &k.Object, &id}, func() error {
		out[k] = id
		return nil
	})
	return out, err
}

// Keys returns a snapshot's groups sorted, for stable messages.
func (sn Snapshot) Keys() []GroupKey {
	out := slices.Collect(maps.Keys(sn))
	slices.SortFunc(out, func(a, b GroupKey) int { return cmp.Compare(sn[a], sn[b]) })
	return out
}
