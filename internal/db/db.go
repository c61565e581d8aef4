// Package db is the one place outboxctl opens PostgreSQL connections. Every transaction it
// runs names itself (application_name) and carries a statement, lock and idle-in-transaction
// timeout, all SET LOCAL: nothing outboxctl sets outlives its transaction, so it works through
// PgBouncer in transaction pooling mode without leaving anything on a pooled server
// connection (queries use unnamed statements; the drain's named ones are dropped inside
// their transaction). Read commands run in READ ONLY transactions. Passwords never reach
// output.
package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxctl/outboxctl/internal/query/session"
)

// Config says how to connect.
type Config struct {
	// DSN is a postgres:// URL or a libpq key=value string; empty means the libpq
	// environment (PGHOST, PGUSER, PGDATABASE, PGPASSWORD, ~/.pgpass, PGSSLMODE, …).
	DSN string
	// Command names the subcommand in application_name ("outboxctl/shards").
	Command string
	// StatementTimeout bounds every statement; LockTimeout bounds every lock wait. A read
	// must never queue behind a migration's lock and then block writers queued behind it.
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	ConnectTimeout   time.Duration
}

// Defaults for the session settings.
const (
	DefaultStatementTimeout = 30 * time.Second
	DefaultLockTimeout      = 2 * time.Second
	DefaultConnectTimeout   = 5 * time.Second
)

// EnvKeys are the libpq variables whose presence means "connect": with none of them, no
// --dsn and no OUTBOXCTL_DSN, commands print their SQL instead.
var EnvKeys = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"} //nolint:gochecknoglobals // constant list

// Resolve picks the connection string: --dsn wins over OUTBOXCTL_DSN, which wins over the
// libpq environment. given is false when nothing says where to connect.
func Resolve(flagDSN string, getenv func(string) string) (dsn string, given bool) {
	if flagDSN != "" {
		return flagDSN, true
	}
	if v := getenv("OUTBOXCTL_DSN"); v != "" {
		return v, true
	}
	for _, k := range EnvKeys {
		if getenv(k) != "" {
			return "", true
		}
	}
	return "", false
}

// Tx is a transaction ReadTx, WriteTx or RunWriteTx opened: the one transaction API, named
// here so commands run statements without importing the driver.
type Tx = pgx.Tx

// Conn is a connection with outboxctl's session settings. The pgx connection is not
// exposed: callers get the statements, transactions and batches below, each of which runs
// inside a transaction that starts with the settings, so nothing can run without them.
//
// The settings are only ever SET LOCAL: a session SET would stay on the server connection
// after outboxctl leaves, and under PgBouncer's transaction pooling the next client of that
// connection (Sentry's workers) would inherit outboxctl's 2 s lock_timeout, 30 s
// statement_timeout and jit = off.
type Conn struct {
	conn *pgx.Conn
	// local is the SET LOCAL statements every transaction runs first.
	local []string
	// w gives every statement its client-side deadline and explains what follows a stall.
	w *watchdog
	// jitOff: outboxctl turned JIT off itself (the DSN did not choose), so a whole-table pass
	// may ask for the server's own setting back (query.JITPass).
	jitOff bool
}

// JITOff says outboxctl turned JIT off on this connection's transactions itself: the DSN
// did not choose jit.
func (c *Conn) JITOff() bool { return c.jitOff }

// Statements is how many statements this connection has sent (each of a batch's counts).
func (c *Conn) Statements() int64 { return c.w.sent.Load() }

// statements is what alone hands its function: a transaction, or the connection already in one.
type statements interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// alone runs fn in a transaction of its own that starts with the settings, for a statement
// run outside a transaction block; inside one (a caller's Begin), fn runs as it is.
func (c *Conn) alone(ctx context.Context, fn func(q statements) error) error {
	if c.InTransaction() {
		return c.w.explain(fn(c.conn))
	}
	tx, err := c.beginWith(ctx, session.Begin(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // committed below on success
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ErrSessionStatement: a statement that sets or ends session or transaction state, sent
// through Exec outside a transaction. In the transaction of its own Exec would give it, a SET
// would outlive the COMMIT on the session (and, behind PgBouncer, on the pool's server
// connection), and BEGIN or COMMIT would do nothing: transactions go through Begin, settings
// through the Config.
var ErrSessionStatement = errors.New("db: SET, RESET, DISCARD and transaction control are not run outside a transaction: use Begin, or the connection's settings")

// sessionStatement says whether sql starts with a keyword that changes session or
// transaction state.
func sessionStatement(sql string) bool {
	f := strings.Fields(strings.TrimLeft(sql, " \t\r\n(;"))
	if len(f) == 0 {
		return false
	}
	switch strings.ToUpper(strings.TrimRight(f[0], ";")) {
	case "SET", "RESET", "DISCARD", "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE", "LISTEN":
		return true
	}
	return false
}

// Exec is pgx's, in a transaction that starts with the settings (ErrSessionStatement for a
// statement that would outlive it or escape it).
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (tag pgconn.CommandTag, err error) {
	if !c.InTransaction() && sessionStatement(sql) {
		return tag, ErrSessionStatement
	}
	err = c.alone(ctx, func(q statements) error {
		tag, err = q.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// ErrOutsideTx: Query streams rows, which would outlive a transaction of its own; a caller
// runs it in ReadTx or RunWriteTx.
var ErrOutsideTx = errors.New("db: Query outside a transaction: run it in ReadTx or RunWriteTx")

// Query is pgx's, inside a transaction only (ErrOutsideTx otherwise).
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !c.InTransaction() {
		return nil, ErrOutsideTx
	}
	rows, err := c.conn.Query(ctx, sql, args...)
	return explainedRows{Rows: rows, w: c.w}, c.w.explain(err)
}

// QueryRow is pgx's, in a transaction that starts with the settings: the statement runs when
// the row is scanned.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return localRow{c: c, ctx: ctx, sql: sql, args: args}
}

type localRow struct {
	c    *Conn
	ctx  context.Context //nolint:containedctx // the row runs its statement when scanned
	sql  string
	args []any
}

// Scan runs the statement: inside a caller's transaction as it is; outside one, in a
// transaction of its own whose BEGIN, settings and statement go to the server in one round
// trip (begin's pipeline), then COMMIT: two round trips, where Begin, the statement and
// COMMIT each waited for the last (three; the drain pays this for every replica check).
func (r localRow) Scan(dest ...any) error {
	if r.c.InTransaction() {
		return r.c.w.explain(r.c.conn.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...))
	}
	tx, err := r.c.begin(r.ctx, session.Begin(), nil, &First{SQL: r.sql, Args: r.args, Read: func(rows Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return pgx.ErrNoRows
		}
		return rows.Scan(dest...)
	}})
	if err != nil {
		return err
	}
	tx.write = true // a statement of its own commits, as Exec's does
	return tx.Commit(r.ctx)
}

// beginWith begins a write-capable transaction (stmt: BEGIN with its options) with the
// settings and extra, the caller's own SET LOCAL statements, in one round trip (begin).
func (c *Conn) beginWith(ctx context.Context, stmt string, extra []string) (*ownTx, error) {
	tx, err := c.begin(ctx, stmt, extra, nil)
	if err != nil {
		return nil, err
	}
	tx.write = true
	return tx, nil
}

// begin is the one way outboxctl opens a transaction: BEGIN (stmt), the SET LOCAL settings,
// extra and, for a read, its first statement go to the server as one pipeline (one round
// trip), where pgx's own Tx would wait for BEGIN's answer first. (A write transaction used
// to pay one round trip more, which the exact-mode drain pays per message.)
func (c *Conn) begin(ctx context.Context, stmt string, extra []string, first *First) (*ownTx, error) {
	if c.InTransaction() {
		return nil, errors.New("db: begin inside a transaction block")
	}
	sets := append(slices.Clone(c.local), extra...)
	b := &pgx.Batch{}
	b.Queue(stmt)
	for _, set := range sets {
		b.Queue(set)
	}
	if first != nil {
		b.Queue(first.SQL, first.Args...)
	}
	br := c.conn.SendBatch(ctx, b)
	err := func() error {
		for range 1 + len(sets) {
			if _, err := br.Exec(); err != nil {
				return Classify(err, "session settings")
			}
		}
		if first != nil {
			return readFirst(br, first)
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = Classify(cerr, "")
	}
	err = c.w.explain(err)
	tx := &ownTx{conn: c.conn, w: c.w, n: new(int)}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	return tx, nil
}

// Begin is pgx's, followed by the SET LOCAL settings.
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := c.beginWith(ctx, session.Begin(), nil)
	if err != nil {
		return nil, err // not a nil *ownTx in a non-nil interface
	}
	return tx, nil
}

// InTransaction says whether the session is inside a transaction block (or a failed one):
// what a caller that must start from a clean session (the drain's Guard) checks.
func (c *Conn) InTransaction() bool { return c.conn.PgConn().TxStatus() != 'I' }

// Close closes the connection. Its goodbye is bounded like a statement: a server that
// stopped answering must not hold the command's exit.
func (c *Conn) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StallMargin)
	defer cancel()
	return c.conn.Close(ctx)
}

// Connect opens one connection configured for safe use on a production primary or replica.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	// The secrets are read from the DSN's raw text: pgx's parse is what may misplace them.
	secrets := Secrets(cfg.DSN)
	pc, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, &Error{Kind: KindConfig, BadInput: true, Msg: "invalid connection string: " + Redact(err.Error(), secrets...),
			Hint: "pass --dsn postgres://USER@HOST:5432/DB or set PGHOST/PGDATABASE"}
	}
	if err := checkHosts(pc, secrets); err != nil {
		return nil, err
	}
	secrets = append(secrets, pc.Password) // also PGPASSWORD's or ~/.pgpass's
	ct := cfg.ConnectTimeout
	if ct <= 0 {
		ct = DefaultConnectTimeout
	}
	if pc.ConnectTimeout == 0 || pc.ConnectTimeout > ct {
		pc.ConnectTimeout = ct
	}
	// PgBouncer in transaction pooling mode cannot keep named prepared statements: use the
	// extended protocol with unnamed statements only.
	pc.DefaultQueryExecMode = pgx.QueryExecModeExec
	pc.StatementCacheCapacity = 0
	pc.DescriptionCacheCapacity = 0
	jitOff := !dsnChoosesJIT(pc)
	local, st := applySessionSettings(pc, cfg)
	w := newWatchdog(st, cfg.StatementTimeout)
	pc.Tracer = w
	if !strings.HasPrefix(pc.Host, "/") {
		// TCP keepalive, so that a peer that vanished while a drain's handler works (no
		// statement, so no deadline, is armed) is noticed (keepAlive).
		pc.DialFunc = (&net.Dialer{KeepAliveConfig: keepAlive}).DialContext
	}

	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		e := classifyConnect(err, pc)
		e.Msg = Redact(e.Msg, secrets...)
		return nil, e
	}
	return &Conn{conn: conn, local: local, w: w, jitOff: jitOff}, nil
}

// applySessionSettings sets the timeouts the DSN left unset. PgBouncer rejects unknown startup
// parameters, so they are not sent at startup, and a session SET would outlive outboxctl on
// a pooled server connection (see Conn): they are SET LOCAL at the start of every
// transaction, which in transaction pooling mode is also the only way they reach the server
// connection the transaction runs on. It returns the SET LOCAL statements and the
// statement_timeout they set.
func applySessionSettings(pc *pgx.ConnConfig, cfg Config) (local []string, statementTimeout string) {
	st := cfg.StatementTimeout
	if st <= 0 {
		st = DefaultStatementTimeout
	}
	lt := cfg.LockTimeout
	if lt <= 0 {
		lt = DefaultLockTimeout
	}
	app := "outboxctl"
	if cfg.Command != "" {
		app += "/" + cfg.Command
	}
	settings := map[string]string{
		"statement_timeout": strconv.FormatInt(st.Milliseconds(), 10),
		"lock_timeout":      strconv.FormatInt(lt.Milliseconds(), 10),
		// Statements count towards idle-in-transaction time, so keep it above the
		// statement timeout: an abandoned transaction still ends soon after.
		"idle_in_transaction_session_timeout": strconv.FormatInt((st + 10*time.Second).Milliseconds(), 10),
	}
	if _, ok := pc.RuntimeParams["application_name"]; !ok {
		// Named per transaction, not at startup: PgBouncer passes a startup application_name
		// on to the server connection and leaves it there, so the pool's next client that
		// does not name itself (Sentry's workers) would show up as outboxctl. A DSN's own
		// application_name is the operator's choice and is sent as given.
		local = append(local, session.SetLocal("application_name", session.Quote(app)))
	}
	for _, k := range []string{"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"} {
		if v, set := pc.RuntimeParams[k]; set {
			// The DSN chose it; keep its value, but still apply it per transaction.
			settings[k] = v
			delete(pc.RuntimeParams, k)
		}
		local = append(local, session.SetLocal(k, session.Quote(settings[k])))
	}
	// JIT off: outboxctl's statements are index probes and bounded scans whose planner cost
	// can still pass jit_above_cost, and then compiling them costs more than running them
	// (measured: 33.6 ms of JIT emission in a 50 ms shards --stuck; inspect category 205 ms
	// with JIT, 136 ms without). A DSN that sets jit (?jit=on, or options=-c jit=on) keeps
	// its choice.
	if v, set := pc.RuntimeParams["jit"]; set {
		delete(pc.RuntimeParams, "jit")
		local = append(local, session.SetLocal("jit", session.Quote(v)))
	} else if !dsnChoosesJIT(pc) {
		local = append(local, session.SetLocal("jit", "off"))
	}
	return local, settings["statement_timeout"]
}

// dsnChoosesJIT says the DSN sets jit (?jit=on, or options=-c jit=on): its choice is kept.
func dsnChoosesJIT(pc *pgx.ConnConfig) bool {
	_, set := pc.RuntimeParams["jit"]
	return set || strings.Contains(pc.RuntimeParams["options"], "jit")
}

// Rows is a statement's rows, as ReadTxFirst hands them to its caller.
type Rows = pgx.Rows

// First is a statement sent together with a transaction's BEGIN, and what reads its rows.
type First struct {
	SQL  string
	Args []any
	Read func(Rows) error
}

// ReadTx runs fn in a READ ONLY, REPEATABLE READ transaction (one snapshot for every
// statement of a command) and always rolls back: a read command cannot write, even by
// accident, and leaves nothing behind.
func ReadTx(ctx context.Context, conn *Conn, fn func(pgx.Tx) error) error {
	return ReadTxFirst(ctx, conn, nil, fn)
}

// ReadTxFirst is ReadTx that also runs first (when not nil) as the transaction's first
// statement. BEGIN, the SET LOCAL settings and first go to the server as one pipeline (one
// round trip): the fixed cost of a read command is the connection and this round trip.
func ReadTxFirst(ctx context.Context, conn *Conn, first *First, fn func(pgx.Tx) error) error {
	tx, err := conn.begin(ctx, session.BeginRead(), nil, first)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only; nothing to keep
	return fn(tx)
}

func readFirst(br pgx.BatchResults, first *First) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	return first.Read(rows)
}

// ownTx is a transaction outboxctl began with its settings in one round trip (ReadTxFirst's
// pipeline, beginWith's script): pgx's own Tx can only be had from a BEGIN that waits for
// its answer. It runs statements on the connection; Begin nests a savepoint (sp names it),
// as pgx's Tx does. A read transaction ends with ROLLBACK even on Commit; a write one
// (write) commits, and reports a COMMIT the server turned into a ROLLBACK (an aborted
// transaction) as pgx does.
type ownTx struct {
	conn   *pgx.Conn
	w      *watchdog
	n      *int // savepoints made so far in the transaction
	sp     string
	closed bool
	write  bool
}

var _ pgx.Tx = (*ownTx)(nil)

func (t *ownTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	*t.n++
	sp := "sp_" + strconv.Itoa(*t.n)
	if _, err := t.conn.Exec(ctx, session.Savepoint(sp)); err != nil {
		return nil, t.w.explain(err)
	}
	return &ownTx{conn: t.conn, w: t.w, n: t.n, sp: sp, write: t.write}, nil
}

// Commit releases a savepoint; the transaction itself ends like Rollback: it wrote nothing.
func (t *ownTx) Commit(ctx context.Context) error {
	if t.write && t.sp == "" && !t.closed {
		t.closed = true
		tag, err := t.conn.Exec(ctx, session.Commit())
		if err != nil {
			return inDoubt(err, t.w.explain(err))
		}
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	}
	if t.sp == "" || t.closed {
		return t.Rollback(ctx)
	}
	t.closed = true
	_, err := t.conn.Exec(ctx, session.ReleaseSavepoint(t.sp))
	return t.w.explain(err)
}

func (t *ownTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if t.conn.PgConn().TxStatus() == 'I' {
		return nil
	}
	if t.sp == "" {
		_, err := t.conn.Exec(ctx, session.Rollback())
		return t.w.explain(err)
	}
	return t.w.explain(rollbackTo(ctx, t.conn.Exec, session.RollbackToSavepoint(t.sp)))
}

// rollbackToTries bounds rollbackTo's attempts.
const rollbackToTries = 5

// rollbackTo runs sql, a ROLLBACK TO SAVEPOINT, again while the server cancels it for the
// statement timeout: on a loaded server under a low --statement-timeout (10 ms) the
// rollback itself can be cancelled before it runs. The transaction is then still aborted
// and the savepoint still there, and a caller that goes on (shards --stuck's fallback
// sample after its pass timed out) would meet "current transaction is aborted" instead of
// its answer. Any other error, or the last timeout, is returned.
func rollbackTo(ctx context.Context, exec func(context.Context, string, ...any) (pgconn.CommandTag, error), sql string) error {
	var err error
	for range rollbackToTries {
		if _, err = exec(ctx, sql); !IsStatementTimeout(err) {
			return err
		}
	}
	return err
}

func (t *ownTx) CopyFrom(ctx context.Context, name pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	n, err := t.conn.CopyFrom(ctx, name, cols, src)
	return n, t.w.explain(err)
}

func (t *ownTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return explainedBatch{BatchResults: t.conn.SendBatch(ctx, b), w: t.w}
}

func (t *ownTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *ownTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	sd, err := t.conn.Prepare(ctx, name, sql)
	return sd, t.w.explain(err)
}

func (t *ownTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.conn.Exec(ctx, sql, args...)
	return tag, t.w.explain(err)
}

func (t *ownTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.conn.Query(ctx, sql, args...)
	return explainedRows{Rows: rows, w: t.w}, t.w.explain(err)
}

func (t *ownTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return explainedRow{row: t.conn.QueryRow(ctx, sql, args...), w: t.w}
}

// explainedRows, explainedRow and explainedBatch report an error after a stall as the
// stall (watchdog.explain).
type explainedRows struct {
	pgx.Rows
	w *watchdog
}

func (r explainedRows) Err() error             { return r.w.explain(r.Rows.Err()) }
func (r explainedRows) Scan(dest ...any) error { return r.w.explain(r.Rows.Scan(dest...)) }

type explainedRow struct {
	row pgx.Row
	w   *watchdog
}

func (r explainedRow) Scan(dest ...any) error { return r.w.explain(r.row.Scan(dest...)) }

type explainedBatch struct {
	pgx.BatchResults
	w *watchdog
}

func (b explainedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, b.w.explain(err)
}

func (b explainedBatch) Query() (pgx.Rows, error) {
	rows, err := b.BatchResults.Query()
	return explainedRows{Rows: rows, w: b.w}, b.w.explain(err)
}

func (b explainedBatch) QueryRow() pgx.Row {
	return explainedRow{row: b.BatchResults.QueryRow(), w: b.w}
}

func (b explainedBatch) Close() error { return b.w.explain(b.BatchResults.Close()) }

func (t *ownTx) Conn() *pgx.Conn { return t.conn }

// Kind classifies a database error for its one-line message and hint. The kind says what to
// fix, not how the process ends: every error exits 1 (ExitError, cmd/exit.go) except one
// whose BadInput is set (exit 2, like any bad flag value).
type Kind int

// Error kinds.
const (
	KindConfig Kind = iota + 1
	KindUnreachable
	KindAuth
	KindTimeout
	KindMissingTable
	KindReadOnly
	KindOther
)

// Error is a database failure explained for an on-call engineer.
type Error struct {
	Kind     Kind
	Msg      string
	Hint     string
	SQLState string
	Err      error
	// BadInput: the command line itself is wrong (a --dsn or --redis-url that does not
	// parse), not the server's answer (a missing database, a replica).
	BadInput bool
}

// UsageError says whether the error is the operator's input (exit 2), as cmd's usage
// errors do.
func (e *Error) UsageError() bool { return e.BadInput }

func (e *Error) Error() string {
	s := e.Msg
	if e.SQLState != "" {
		s += " (SQLSTATE " + e.SQLState + ")"
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// checkHosts refuses a host holding an @: no host does, so it is the tail of a password
// whose @ was not percent-encoded (libpq and pgx end the userinfo at the first @).
func checkHosts(pc *pgx.ConnConfig, secrets []string) error {
	hosts := []string{pc.Host}
	for _, f := range pc.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if strings.Contains(h, "@") {
			return &Error{Kind: KindConfig, BadInput: true,
				Msg:  fmt.Sprintf("the connection string's host %q holds an @, so its password was cut at an unencoded @", Redact(h, secrets...)),
				Hint: "percent-encode @ / : ? # and spaces in the password (@ is %40, / is %2F)"}
		}
	}
	return nil
}

// classifyConnect explains a failed connection; its message may still hold a secret, which
// the caller redacts.
func classifyConnect(err error, pc *pgx.ConnConfig) *Error {
	target := fmt.Sprintf("%s:%d", pc.Host, pc.Port)
	if strings.HasPrefix(pc.Host, "/") {
		target = pc.Host
	}
	who := fmt.Sprintf("user %q, database %q", pc.User, pc.Database)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// PgBouncer reports a failed client login as 08P01 "password authentication failed".
		authFailed := pgErr.Code == "08P01" && strings.Contains(pgErr.Message, "authentication failed")
		switch {
		case pgErr.Code == "28P01" || pgErr.Code == "28000" || authFailed:
			return &Error{Kind: KindAuth, SQLState: pgErr.Code, Err: err,
				Msg:  fmt.Sprintf("PostgreSQL at %s refused %s: %s", target, who, pgErr.Message),
				Hint: "check the user and password (PGPASSWORD, ~/.pgpass or the DSN) and pg_hba.conf"}
		case pgErr.Code == "3D000":
			return &Error{Kind: KindConfig, SQLState: pgErr.Code, Err: err,
				Msg:  fmt.Sprintf("database %q does not exist on %s", pc.Database, target),
				Hint: "check the database name in --dsn or PGDATABASE"}
		}
		return &Error{Kind: KindOther, SQLState: pgErr.Code, Err: err,
			Msg: fmt.Sprintf("connecting to %s as %s: %s", target, who, pgErr.Message)}
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return &Error{Kind: KindUnreachable, Err: err,
			Msg:  fmt.Sprintf("timed out connecting to PostgreSQL at %s", target),
			Hint: "check the host and port, firewalls, and --connect-timeout"}
	}
	return &Error{Kind: KindUnreachable, Err: err,
		Msg:  fmt.Sprintf("cannot reach PostgreSQL at %s: %s", target, rootCause(err)),
		Hint: "check that the server is running and --dsn / PGHOST / PGPORT point at it"}
}

// rootCause is the innermost error text: "connection refused", not pgx's whole chain.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "dial") {
		return msg[i+2:]
	}
	return msg
}

// Classify explains an error from a statement. name is the statement's name, so the user can
// re-run with --print-sql to see it.
func Classify(err error, name string) error {
	if err == nil {
		return nil
	}
	var dbErr *Error
	if errors.As(err, &dbErr) {
		return err
	}
	where := ""
	if name != "" {
		where = " in " + name
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57014":
			return &Error{Kind: KindTimeout, SQLState: pgErr.Code, Err: err,
				Msg:  "statement timed out" + where,
				Hint: "raise --statement-timeout (see the command's --help for flags that narrow it)"}
		case "55P03":
			return &Error{Kind: KindTimeout, SQLState: pgErr.Code, Err: err,
				Msg:  "gave up waiting for a lock" + where + " (lock_timeout)",
				Hint: "another session holds a conflicting lock; retry, or find it in pg_locks"}
		case "42P01":
			return &Error{Kind: KindMissingTable, SQLState: pgErr.Code, Err: err,
				Msg:  pgErr.Message + where,
				Hint: "is this Sentry's database? use --schema, --table or --silo to point at the outbox table"}
		case "42703":
			return &Error{Kind: KindMissingTable, SQLState: pgErr.Code, Err: err,
				Msg:  pgErr.Message + where,
				Hint: "the table does not have Sentry's outbox columns; check --table and --silo"}
		case "25006":
			return &Error{Kind: KindReadOnly, SQLState: pgErr.Code, Err: err,
				Msg: "refused to write in a read-only transaction" + where}
		}
		return &Error{Kind: KindOther, SQLState: pgErr.Code, Err: err, Msg: pgErr.Message + where}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Err: err, Msg: "timed out" + where}
	}
	return fmt.Errorf("query%s: %w", where, err)
}

// Describe names where a DSN points, without its password: for notes and audit lines.
func Describe(dsn string) string {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return RedactDSN(dsn)
	}
	return Redact(fmt.Sprintf("%s@%s:%d/%s", pc.User, pc.Host, pc.Port, pc.Database), append(Secrets(dsn), pc.Password)...)
}

// ErrReplica is the cause of CheckPrimary's error on a server in recovery: mutations go
// to the primary.
var ErrReplica = errors.New("the server is a read replica (pg_is_in_recovery() is true)")

// CheckPrimary is the one replica check: it refuses a server in recovery, saying what was
// refused (action: "change anything", "drain").
func CheckPrimary(ctx context.Context, conn *Conn, action string) error {
	var inRecovery bool
	if err := conn.QueryRow(ctx, session.PrimaryCheck()).Scan(&inRecovery); err != nil {
		return Classify(err, "replica check")
	}
	if inRecovery {
		return &Error{Kind: KindConfig, Err: ErrReplica,
			Msg: "refusing to " + action + " on a read replica (pg_is_in_recovery() is true): connect to the primary"}
	}
	return nil
}

// WriteTx runs fn in a read-write transaction with the session's timeouts, after checking
// that the server is not a replica. fn's error rolls everything back.
func WriteTx(ctx context.Context, conn *Conn, fn func(pgx.Tx) error) error {
	if err := CheckPrimary(ctx, conn, "change anything"); err != nil {
		return err
	}
	return RunWriteTx(ctx, conn, nil, fn)
}

// RunWriteTx runs fn in a read-write transaction that starts with the session's SET LOCAL
// timeouts (so they hold through PgBouncer's transaction pooling) followed by extra, SET
// LOCAL statements of the caller's. It does not check for a replica: a caller that runs many
// transactions (the drain) checks once. fn's error rolls everything back.
func RunWriteTx(ctx context.Context, conn *Conn, extra []string, fn func(pgx.Tx) error) error {
	return runWrite(ctx, conn, session.BeginWrite(), extra, fn)
}

// RunSnapshotWriteTx is RunWriteTx in REPEATABLE READ: every statement sees the snapshot of
// the first, and one that would change a row changed since fails (IsSerializationFailure)
// where READ COMMITTED would act on the newer row unseen. The caller starts again.
func RunSnapshotWriteTx(ctx context.Context, conn *Conn, extra []string, fn func(pgx.Tx) error) error {
	return runWrite(ctx, conn, session.BeginWriteSnapshot(), extra, fn)
}

// IsSerializationFailure says err is PostgreSQL's 40001: a REPEATABLE READ transaction met
// a row changed since its snapshot, and was rolled back.
func IsSerializationFailure(err error) bool { return SQLState(err) == "40001" }

// IsStatementTimeout says err is the server's cancel of a statement for the statement
// timeout (SQLSTATE 57014), as the server sent it or explained (Classify: Error unwraps to it).
func IsStatementTimeout(err error) bool { return SQLState(err) == "57014" }

// SQLState is the PostgreSQL error code err carries ("" when it carries none).
func SQLState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func runWrite(ctx context.Context, conn *Conn, begin string, extra []string, fn func(pgx.Tx) error) error {
	tx, err := conn.beginWith(ctx, begin, extra)
	if err != nil {
		return Classify(err, "")
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // committed below on success
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		var doubt *InDoubtError
		if errors.As(err, &doubt) {
			return err
		}
		return Classify(err, "commit")
	}
	return nil
}

// WritePreamble is what a write transaction of cfg sends first, BEGIN and the SET LOCAL
// settings, for a printed script to show (--print-sql): what Connect and RunWriteTx would
// run. A DSN that does not parse prints the settings of none.
func WritePreamble(cfg Config) []string {
	pc, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		pc = &pgx.ConnConfig{}
	}
	if pc.RuntimeParams == nil {
		pc.RuntimeParams = map[string]string{}
	}
	local, _ := applySessionSettings(pc, cfg)
	return append([]string{session.BeginWrite()}, local...)
}

// InDoubtError is a COMMIT that was sent but got no answer: the server's answer was lost (a
// statement deadline, a connection that died), so the transaction may have committed or not.
// It is never "not done": a caller settles it on a fresh connection (reads whether its
// change is there) and reports what it found, or says it is in doubt.
type InDoubtError struct {
	Err error // why no answer came (the stall, the lost connection)
}

func (e *InDoubtError) Error() string {
	return "the COMMIT got no answer, so whether it committed is unknown: " + e.Err.Error()
}

func (e *InDoubtError) Unwrap() error { return e.Err }

// Settled is the error's message once a settle found out (found: "committed, 3 row(s)
// deleted"): the COMMIT is no longer in doubt, and the message no longer says it is.
func (e *InDoubtError) Settled(found string) string {
	return "the COMMIT got no answer (" + e.Err.Error() + "); settled on a fresh connection: " + found
}

// SettledMessage is err's message with what a settle found, when err is an InDoubtError;
// else err's own message.
func SettledMessage(err error, found string) string {
	var doubt *InDoubtError
	if errors.As(err, &doubt) {
		return doubt.Settled(found)
	}
	return err.Error()
}

// IsInDoubt reports whether err is (or wraps) an InDoubtError.
func IsInDoubt(err error) bool {
	var doubt *InDoubtError
	return errors.As(err, &doubt)
}

// inDoubt is the error of a failed COMMIT: explained (the stall, the server's own error)
// when the COMMIT certainly did not commit, wrapped as an InDoubtError when it may have. The
// server's error (a deferred constraint, a serialization failure) is an answer: the COMMIT
// rolled back. An error before anything was sent (pgconn.SafeToRetry: a cancelled context)
// left the transaction open, and its rollback follows.
func inDoubt(err, explained error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) {
		return explained
	}
	return &InDoubtError{Err: explained}
}
