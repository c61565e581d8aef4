// Package outbox is the one read session of outboxctl: a read-only snapshot of a Sentry
// database opened under a budget (statement and lock timeouts, application_name, all set
// by internal/db at BEGIN), with its catalog read once, and the reads that decide something
// on the way (the shards listing's ladder, verify's comparison). Commands and the exporter
// open every read through here; query.LoadSchema is called from this package alone.
package outbox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Check is what a snapshot's catalog must hold before its reads run.
type Check int

const (
	// CheckNothing: any Sentry database (the doctor finds its tables in the catalog).
	CheckNothing Check = iota
	// CheckOutbox: the target is an outbox table (its cell column adapted to).
	CheckOutbox
	// CheckOptions: an options table (the kill switches and options can be read from any
	// Sentry database).
	CheckOptions
)

// Options say how a snapshot reads its catalog.
type Options struct {
	// Deployment is --deployment: applied to the catalog, so readers and writers agree on
	// which options table Sentry reads.
	Deployment query.Deployment
	Check      Check
	// Lower, when not 0, is the statement timeout of the snapshot's statements after the
	// catalog read, on a connection opened under the catalog read's own (CatalogBudget).
	Lower time.Duration
	// Known, when not nil, is the catalog an earlier snapshot on this connection read (top's
	// poller: Snapshot.KnownCatalog): the snapshot starts on a copy of it instead of reading
	// the catalog again, so a poll costs its reads alone.
	Known *query.Schema
}

// Snapshot is one read-only, repeatable-read transaction with what its catalog said.
type Snapshot struct {
	ctx context.Context
	tx  db.Tx
	// Target is the table read, adapted to the catalog (its cell column); a read of one
	// control shard narrows its Cell.
	Target query.Target
	// Schema is the catalog of the target's tables and the options tables, with the
	// deployment applied.
	Schema query.Schema
	// jitOff: the transaction's jit = off is outboxctl's own (db.Conn.JITOff), which
	// JITPass may lift for a whole-table pass.
	jitOff bool
	// more is the catalog of other tables, read once each (Catalog).
	more map[string]query.Schema
}

// Context is the context the snapshot was opened with.
func (s *Snapshot) Context() context.Context { return s.ctx }

// Tx is the snapshot's transaction, for a service that reads with it (the kill switches,
// the doctor's checks).
func (s *Snapshot) Tx() db.Tx { return s.tx }

// Introspected lists the tables every snapshot looks up: the target's, the options tables
// (the kill switches) and the leftover signs (query.LeftoverSignTables: one more name in
// the same catalog read).
func Introspected(t query.Target) []string {
	names := []string{t.TableName()}
	for _, n := range append([]string{query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable}, query.LeftoverSignTables()...) {
		if n != t.TableName() {
			names = append(names, n)
		}
	}
	return names
}

// CatalogBudget is the statement timeout a read connects with under a --statement-timeout
// (d) lower than query.IntrospectTimeout, and the one its own statements get after the
// catalog read (lower, 0 when d is not lower): the catalog read is bounded by the catalog,
// and on a fresh connection its first lookups alone can cost more than an 8 ms timeout, so
// an operator who set a low timeout because the database is in trouble still gets an
// answer rather than a timed-out catalog read (#27). One statement more, only then.
func CatalogBudget(d time.Duration) (connect, lower time.Duration) {
	if d > 0 && d < query.IntrospectTimeout {
		return query.IntrospectTimeout, d
	}
	return d, 0
}

// Open connects with cfg (its statement timeout raised to the catalog read's budget when
// lower: CatalogBudget), opens a snapshot of t and calls fn; the connection is closed after.
func Open(ctx context.Context, cfg db.Config, t query.Target, o Options, fn func(*Snapshot) error) error {
	cfg.StatementTimeout, o.Lower = CatalogBudget(cfg.StatementTimeout)
	conn, err := db.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return On(ctx, conn, t, o, fn)
}

// On opens a snapshot of t on conn (a connection the caller holds: a repair reads its plan
// on the connection it writes with), reads the catalog, checks it (o.Check) and calls fn.
// The catalog read goes to the server in one round trip with the BEGIN (db.ReadTxFirst).
func On(ctx context.Context, conn *db.Conn, t query.Target, o Options, fn func(*Snapshot) error) error {
	if o.Known != nil {
		return db.ReadTx(ctx, conn, func(tx db.Tx) error {
			schema := *o.Known
			schema.Tables = maps.Clone(schema.Tables)
			return o.start(ctx, conn, tx, t, schema, fn)
		})
	}
	tables := query.SchemaTables(Introspected(t))
	var res *query.Result
	first, err := firstOf(query.Introspect(t.Schema, tables), func(r *query.Result) error { res = r; return nil })
	if err != nil {
		return err
	}
	return db.ReadTxFirst(ctx, conn, first, func(tx db.Tx) error {
		schema, err := query.SchemaFrom(res, tables)
		if err != nil {
			return err
		}
		return o.start(ctx, conn, tx, t, schema.WithDeployment(o.Deployment), fn)
	})
}

// start is the snapshot of tx once its catalog is known: the statement timeout lowered
// after the catalog read (o.Lower), the target adapted and checked.
func (o Options) start(ctx context.Context, conn *db.Conn, tx db.Tx, t query.Target, schema query.Schema, fn func(*Snapshot) error) error {
	if o.Lower > 0 {
		end := query.CatalogBudgetEnd(o.Lower)
		if _, err := query.Run(ctx, tx, end); err != nil {
			return db.Classify(err, end.Name)
		}
	}
	s := &Snapshot{ctx: ctx, tx: tx, Schema: schema, jitOff: conn.JITOff()}
	s.Target = s.Schema.Adapt(t)
	if err := s.check(o.Check); err != nil {
		return err
	}
	return fn(s)
}

// KnownCatalog is a copy of the snapshot's catalog, for a later snapshot on the same
// connection (Options.Known).
func (s *Snapshot) KnownCatalog() *query.Schema {
	sch := s.Schema
	sch.Tables = maps.Clone(sch.Tables)
	return &sch
}

func (s *Snapshot) check(c Check) error {
	switch c {
	case CheckOutbox:
		return s.Schema.CheckOutbox(s.Target)
	case CheckOptions:
		return options.RequireTable(s.Schema, s.Target.Schema)
	}
	return nil
}

// firstOf is st as a transaction's first statement, its result handed to read.
func firstOf(st query.Statement, read func(*query.Result) error) (*db.First, error) {
	sql, args, err := st.Bind()
	if err != nil {
		return nil, err
	}
	return &db.First{SQL: sql, Args: args, Read: func(rows db.Rows) error {
		res, err := query.Collect(st.Name, rows)
		if err != nil {
			return db.Classify(err, st.Name)
		}
		return read(res)
	}}, nil
}

// Run executes one statement in the snapshot; a database error is explained (db.Classify).
func (s *Snapshot) Run(st query.Statement) (*query.Result, error) {
	res, err := query.Run(s.ctx, s.tx, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	return res, nil
}

// RowsOf runs st in s and reads its rows by name into T (query.Rows).
func RowsOf[T any](s *Snapshot, st query.Statement) ([]T, error) {
	res, err := s.Run(st)
	if err != nil {
		return nil, err
	}
	return query.Rows[T](res)
}

// Try runs st in a savepoint; timedOut says it ran out of the statement timeout (the
// snapshot is usable again: rolled back to the savepoint).
func (s *Snapshot) Try(st query.Statement) (res *query.Result, timedOut bool, err error) {
	sp, err := s.tx.Begin(s.ctx)
	if err != nil {
		return nil, false, db.Classify(err, st.Name)
	}
	if res, err = query.Run(s.ctx, sp, st); err == nil {
		return res, false, db.Classify(sp.Commit(s.ctx), st.Name)
	}
	if rbErr := sp.Rollback(context.WithoutCancel(s.ctx)); rbErr != nil {
		// The transaction is still aborted: a caller that took the timeout for a fallback
		// would meet "current transaction is aborted" at its next statement.
		return nil, false, db.Classify(rbErr, st.Name+" (its savepoint's rollback)")
	}
	err = db.Classify(err, st.Name)
	return nil, TimedOut(err), err
}

// TimedOut says err is the server's statement timeout (SQLSTATE 57014).
func TimedOut(err error) bool { return db.IsStatementTimeout(err) }

// Catalog is the catalog of tables beyond the snapshot's own (the era's, the watermarks'),
// read once per snapshot for each list of tables.
func (s *Snapshot) Catalog(tables []string) (query.Schema, error) {
	key := strings.Join(slices.Sorted(slices.Values(tables)), ",")
	if sch, ok := s.more[key]; ok {
		return sch, nil
	}
	sch, err := LoadCatalog(s.ctx, s.tx, s.Target.Schema, tables)
	if err != nil {
		return sch, err
	}
	if s.more == nil {
		s.more = map[string]query.Schema{}
	}
	s.more[key] = sch
	return sch, nil
}

// Era is the catalog of the era model's tables (query.EraTables), read once per snapshot.
func (s *Snapshot) Era() (query.Schema, error) { return s.Catalog(query.EraTables()) }

// LoadCatalog is the catalog of tables of schema read with q, a transaction that is not a
// snapshot's (a write transaction's own look-up, the other side of a split verify, a
// service's savepoint); a database error is explained (db.Classify).
func LoadCatalog(ctx context.Context, q query.Querier, schema string, tables []string) (query.Schema, error) {
	sch, err := ReadCatalog(ctx, q, schema, tables)
	if err != nil {
		return sch, db.Classify(err, "introspect")
	}
	return sch, nil
}

// ReadCatalog is LoadCatalog with the database's error as it came (a doctor check's
// warning quotes it): the one reader of the catalog (query.LoadSchema) outside a
// snapshot's first statement.
func ReadCatalog(ctx context.Context, q query.Querier, schema string, tables []string) (query.Schema, error) {
	return query.LoadSchema(ctx, q, schema, tables)
}

// JITPassRows is the planner's estimate of a table's rows from which a whole-table pass
// runs with the server's JIT (query.JITPass): at 20M rows inspect category's pass is 15%
// faster with it, and its compilation (no inlining, no optimisation) is a few ms of a pass
// of a second; below, the pass is short and JIT rarely passes jit_above_cost anyway.
const JITPassRows = 5_000_000

// JITPass runs fn, a pass over every row of a table of about rows rows, with the server's
// own JIT setting in place of outboxctl's jit = off (light: no inlining, no optimisation)
// when the table is that large and the jit = off is outboxctl's (a DSN's jit is kept), and
// the transaction's settings back after it.
func (s *Snapshot) JITPass(rows int64, fn func() error) error {
	if !s.jitOff || rows < JITPassRows {
		return fn()
	}
	return settingsAround(s, query.JITPass(), query.JITPassEnd, fn)
}

// settingsAround runs fn between start, which SET LOCALs settings and returns one row of the
// values it replaced, and end of that row, which sets them back.
func settingsAround[T any](s *Snapshot, start query.Statement, end func(T) query.Statement, fn func() error) error {
	was, err := RowsOf[T](s, start)
	if err != nil || len(was) != 1 {
		return fmt.Errorf("%s: %d rows: %w", start.Name, len(was), err)
	}
	if err := fn(); err != nil {
		return err
	}
	_, err = s.Run(end(was[0]))
	return err
}

// WithBudget runs fn with the transaction's statement timeout raised to d (when timeout,
// --statement-timeout, is lower) and sets it back after: for a read bounded by something
// else than the outbox's size (query.StatementBudget).
func (s *Snapshot) WithBudget(d, timeout time.Duration, fn func() error) error {
	if timeout <= 0 || timeout >= d {
		return fn()
	}
	return settingsAround(s, query.StatementBudget(d), func(was query.StatementBudgetRow) query.Statement {
		return query.StatementBudgetEnd(was.Replaced)
	}, fn)
}

// ShardStateAndCategories reads shard k's state and its categories. The categories go
// first: their depths, summed per cell, are the shard's in this snapshot, so the state is
// given them instead of counting the shard a second time (a pass over every row of a hot
// shard: 14 ms of 200,000 rows).
func (s *Snapshot) ShardStateAndCategories(k query.ShardKey) (state, categories *query.Result, err error) {
	if categories, err = s.Run(query.ShardCategories(s.Target, k)); err != nil {
		return nil, nil, err
	}
	depths, err := query.CategoryDepthSums(s.Target, categories)
	if err != nil {
		return nil, nil, err
	}
	if state, err = s.Run(query.ShardStateGivenDepth(s.Target, k, depths)); err != nil {
		return nil, nil, err
	}
	return state, categories, nil
}

// Stats reads what the planner knows of the snapshot's table.
func (s *Snapshot) Stats() (query.TableStats, error) {
	rows, err := RowsOf[query.TableStats](s, query.TableStatistics(s.Target))
	if err != nil {
		return query.TableStats{}, err
	}
	if len(rows) != 1 {
		return query.TableStats{}, fmt.Errorf("table-statistics returned %d rows for %s", len(rows), s.Target.Describe())
	}
	return rows[0], nil
}

// CatalogStats is Stats (the catalog and the statistics functions, never the table) under
// the catalog read's budget when timeout, --statement-timeout, is lower.
func (s *Snapshot) CatalogStats(timeout time.Duration) (stats query.TableStats, err error) {
	err = s.WithBudget(query.IntrospectTimeout, timeout, func() error {
		stats, err = s.Stats()
		return err
	})
	return stats, err
}

// Stream runs st and hands its columns to cols, then each row to row as it arrives (inspect
// shard's messages); a database error is explained (db.Classify).
func (s *Snapshot) Stream(st query.Statement, cols func([]string) error, row func([]any) error) error {
	if err := query.Stream(s.ctx, s.tx, st, cols, row); err != nil {
		return db.Classify(err, st.Name)
	}
	return nil
}

// Query runs sql in the snapshot: a Snapshot is the query.Querier a service reads with.
func (s *Snapshot) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return s.tx.Query(ctx, sql, args...)
}
