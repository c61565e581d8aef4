package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// connectHint is what a command without a database says on stderr after printing its SQL.
const connectHint = "note: no database given, so this is the SQL rather than its result; to run it, pass " +
	"--dsn postgres://USER@HOST:5432/DB (or set OUTBOXCTL_DSN, or PGHOST and PGDATABASE)"

// session is one read-only snapshot of the database, with what introspection learned.
type session struct {
	ctx    context.Context
	tx     db.Tx
	target query.Target
	schema query.Schema
	// jitOff: the transaction's jit = off is outboxctl's own (db.Conn.JITOff), which
	// jitPass may lift for a whole-table pass.
	jitOff bool
}

// run executes one statement in the snapshot.
func (s *session) run(st query.Statement) (*query.Result, error) {
	res, err := query.Run(s.ctx, s.tx, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	return res, nil
}

// shardStateAndCategories reads shard k's state and its categories. The categories go
// first: their depths, summed per cell, are the shard's in this snapshot, so the state is
// given them instead of counting the shard a second time (a pass over every row of a hot
// shard: 14 ms of 200,000 rows).
func (s *session) shardStateAndCategories(k query.ShardKey) (state, categories *query.Result, err error) {
	if categories, err = s.run(query.ShardCategories(s.target, k)); err != nil {
		return nil, nil, err
	}
	depths, err := query.CategoryDepthSums(s.target, categories)
	if err != nil {
		return nil, nil, err
	}
	if state, err = s.run(query.ShardStateGivenDepth(s.target, k, depths)); err != nil {
		return nil, nil, err
	}
	return state, categories, nil
}

// introspected lists the tables every read session looks up.
func introspected(t query.Target) []string {
	names := []string{t.TableName()}
	// The leftover signs too (query.LeftoverSignTables): one more name in the same catalog read.
	for _, n := range append([]string{query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable}, query.LeftoverSignTables()...) {
		if n != t.TableName() {
			names = append(names, n)
		}
	}
	return names
}

// readSession connects, opens a read-only snapshot, checks that the target is an outbox
// table (adapting to its cell column), and calls fn.
func (a *app) readSession(ctx context.Context, command string, fn func(*session) error) error {
	return a.readSessionTimeout(ctx, command, 0, fn)
}

// readSessionTimeout is readSession with its statements bounded by timeout instead of
// --statement-timeout (0: --statement-timeout): a full pass asked for by its flag.
func (a *app) readSessionTimeout(ctx context.Context, command string, timeout time.Duration, fn func(*session) error) error {
	return a.openSessionTimeout(ctx, command, timeout, func(s *session) error {
		if err := s.schema.CheckOutbox(s.target); err != nil {
			return err
		}
		return fn(s)
	})
}

// openSession connects, opens a read-only snapshot, reads the catalog, and calls fn.
func (a *app) openSession(ctx context.Context, command string, fn func(*session) error) error {
	return a.openSessionTimeout(ctx, command, 0, fn)
}

// openSessionTimeout is openSession with a statement timeout of its own (0: the global one).
func (a *app) openSessionTimeout(ctx context.Context, command string, timeout time.Duration, fn func(*session) error) error {
	t, err := a.target()
	if err != nil {
		return err
	}
	return a.openSessionOf(ctx, command, t, timeout, fn)
}

// openSessionOf is openSessionTimeout on table t (the mailboxes' table, which names no
// outbox).
func (a *app) openSessionOf(ctx context.Context, command string, t query.Target, timeout time.Duration, fn func(*session) error) error {
	cfg := a.dbConfig(command)
	if timeout > 0 {
		cfg.StatementTimeout = timeout
	}
	var lower time.Duration
	cfg.StatementTimeout, lower = catalogBudget(cfg.StatementTimeout)
	conn, err := db.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return a.sessionOn(ctx, conn, t, lower, fn)
}

// readSessionOn is readSession on a connection the command already holds: a repair or a
// drain reads its catalog and plan on the connection it then writes with, one per command.
func (a *app) readSessionOn(ctx context.Context, conn *db.Conn, fn func(*session) error) error {
	t, err := a.target()
	if err != nil {
		return err
	}
	return a.sessionOn(ctx, conn, t, 0, func(s *session) error {
		if err := s.schema.CheckOutbox(s.target); err != nil {
			return err
		}
		return fn(s)
	})
}

// sessionOn opens a read-only snapshot of t on conn, reads the catalog, and calls fn. The
// catalog read goes to the server in one round trip with the BEGIN (db.ReadTxFirst). lower,
// when not 0, is the statement timeout for fn's statements of a connection opened under the
// catalog read's own (catalogBudget).
func (a *app) sessionOn(ctx context.Context, conn *db.Conn, t query.Target, lower time.Duration, fn func(*session) error) error {
	tables := query.SchemaTables(introspected(t))
	var res *query.Result
	first, err := firstOf(query.Introspect(t.Schema, tables), func(r *query.Result) error { res = r; return nil })
	if err != nil {
		return err
	}
	return db.ReadTxFirst(ctx, conn, first, func(tx db.Tx) error {
		if lower > 0 {
			end := query.CatalogBudgetEnd(lower)
			if _, err := query.Run(ctx, tx, end); err != nil {
				return db.Classify(err, end.Name)
			}
		}
		return a.startSession(ctx, tx, t, res, tables, func(s *session) error {
			s.jitOff = conn.JITOff()
			return fn(s)
		})
	})
}

// catalogBudget is the statement timeout a read command connects with under a
// --statement-timeout (d) lower than query.IntrospectTimeout, and the one its own statements
// get after the catalog read (lower, 0 when d is not lower): the catalog read is bounded by
// the catalog, and on a fresh connection its first lookups alone can cost more than an 8 ms
// timeout, so an operator who set a low timeout because the database is in trouble still
// gets an answer rather than a timed-out catalog read (#27). One statement more, only then.
func catalogBudget(d time.Duration) (connect, lower time.Duration) {
	if d > 0 && d < query.IntrospectTimeout {
		return query.IntrospectTimeout, d
	}
	return d, 0
}

// JITPassRows is the planner's estimate of a table's rows from which a whole-table pass
// runs with the server's JIT (query.JITPass): at 20M rows inspect category's pass is 15%
// faster with it, and its compilation (no inlining, no optimisation) is a few ms of a pass
// of a second; below, the pass is short and JIT rarely passes jit_above_cost anyway.
const JITPassRows = 5_000_000

// jitPass runs fn, a pass over every row of a table of about rows rows, with the server's
// own JIT setting in place of outboxctl's jit = off (light: no inlining, no optimisation)
// when the table is that large and the jit = off is outboxctl's (a DSN's jit is kept), and
// the transaction's settings back after it.
func (s *session) jitPass(rows int64, fn func() error) error {
	if !s.jitOff || rows < JITPassRows {
		return fn()
	}
	return settingsAround(s, query.JITPass(), query.JITPassEnd, fn)
}

// settingsAround runs fn between start, which SET LOCALs settings and returns one row of the
// values it replaced, and end of that row, which sets them back.
func settingsAround[T any](s *session, start query.Statement, end func(T) query.Statement, fn func() error) error {
	res, err := s.run(start)
	if err != nil {
		return err
	}
	was, err := query.Rows[T](res)
	if err != nil || len(was) != 1 {
		return fmt.Errorf("%s: %d rows: %w", start.Name, len(was), err)
	}
	if err := fn(); err != nil {
		return err
	}
	_, err = s.run(end(was[0]))
	return err
}

// withBudget runs fn with the transaction's statement timeout raised to d (when
// --statement-timeout is lower) and sets it back after: for a read bounded by something else
// than the outbox's size (query.StatementBudget).
func (s *session) withBudget(d, timeout time.Duration, fn func() error) error {
	if timeout <= 0 || timeout >= d {
		return fn()
	}
	return settingsAround(s, query.StatementBudget(d), func(was query.StatementBudgetRow) query.Statement {
		return query.StatementBudgetEnd(was.Replaced)
	}, fn)
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

// startSession is the session of tx once the catalog read res: every command reads the
// catalog through here and applies --deployment, so readers and writers agree on which
// options table Sentry reads.
func (a *app) startSession(ctx context.Context, tx db.Tx, t query.Target, res *query.Result, tables []string, fn func(*session) error) error {
	schema, err := query.SchemaFrom(res, tables)
	if err != nil {
		return err
	}
	s := &session{ctx: ctx, tx: tx, target: t, schema: schema.WithDeployment(a.deployment())}
	s.target = s.schema.Adapt(s.target)
	return fn(s)
}

// runRead prints the script build makes (on --print-sql, or when no database is given) or
// runs it in one read-only snapshot. It returns nil results when it printed.
func (a *app) runRead(ctx context.Context, command string, build func(query.Target) query.Script) ([]*query.Result, error) {
	printOnly, noDB := a.wantsSQL()
	if printOnly {
		t, err := a.target()
		if err != nil {
			return nil, err
		}
		return nil, a.printScript(build(t), noDB)
	}
	var results []*query.Result
	err := a.readSession(ctx, command, func(s *session) error {
		for _, st := range build(s.target) {
			res, err := s.run(st)
			if err != nil {
				return err
			}
			results = append(results, res)
		}
		return nil
	})
	return results, err
}

func (a *app) printScript(script query.Script, noDB bool) error {
	text, err := script.Render()
	if err != nil {
		return err
	}
	return a.printSQLText(text, noDB)
}

// printSQLText is printScript for a script already rendered (a psql script's \if blocks).
func (a *app) printSQLText(text string, noDB bool) error {
	if noDB && !a.g.PrintSQL {
		if err := a.needsDatabase(); err != nil {
			return err
		}
	}
	if err := a.printer().SQL(text); err != nil {
		return fmt.Errorf("writing SQL: %w", err)
	}
	if noDB && !a.g.PrintSQL {
		fmt.Fprintln(a.io.Err, connectHint)
	}
	return nil
}

// verdictFlags are the flags that ask a command for a verdict in its exit code.
var verdictFlags = []string{"exit-status", "fail-if-depth", "fail-on-drift"} //nolint:gochecknoglobals // constant list

// needsDatabase is the no-database verdict rule, shared by every command that would print
// its SQL for want of a database: a verdict (--exit-status, --fail-if-…) or machine output
// (-o json, jsonl, csv) asked for without one is a usage error, since printing SQL and
// exiting 0 would read as a passing check or as an empty result.
func (a *app) needsDatabase() error {
	var asked string
	for _, name := range verdictFlags {
		if a.cmd != nil && a.cmd.Flags().Changed(name) && asked == "" {
			asked = "--" + name
		}
	}
	if asked == "" && a.g.JSONFields != "" {
		asked = "--json"
	}
	if asked == "" && a.g.JQ != "" {
		asked = "--jq"
	}
	if f, _ := render.ParseFormat(a.g.Output); asked == "" && (f == render.FormatJSON || f == render.FormatJSONL || f == render.FormatCSV) {
		asked = "-o " + a.g.Output
	}
	if asked == "" {
		return nil
	}
	return usageErrorf("--dsn postgres://USER@HOST:5432/DB (or --print-sql for the SQL)",
		"%s needs a database to answer, and none is given: pass --dsn (or set OUTBOXCTL_DSN, or PGHOST and PGDATABASE)", asked)
}

// scopeArg resolves a scope given on the command line.
func (a *app) scopeArg(s string) (*query.Enum, error) {
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	sc, err := reg.ResolveScope(s)
	if err != nil {
		return nil, err
	}
	return &query.Enum{Value: sc.Value, Name: sc.Name}, nil
}

// categoryArg resolves a category given on the command line.
func (a *app) categoryArg(s string) (enums.Category, error) {
	reg, err := a.registry()
	if err != nil {
		return enums.Category{}, err
	}
	return reg.ResolveCategory(s)
}

// idArg parses a shard, object or message id; hint is the command line the error suggests,
// as for a negative id (nonNegativeID).
func idArg(what, s, hint string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, usageErrorf(hint, "invalid %s %q: want an integer id", what, s)
	}
	return n, nil
}

// completeNames completes enum names for positional arguments and flags, honouring --enums.
func (a *app) completeNames(kind enums.Kind) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		reg, err := a.registry()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		// The shell keeps only the candidates that start with what was typed, case and all:
		// a name typed in lower case (org) is completed in lower case (organization, the
		// form the commands print), in upper case as Sentry spells it.
		lower := prefix != strings.ToUpper(prefix)
		var out []string
		for _, n := range reg.Names(kind) {
			cands := []string{n}
			if lower {
				cands = []string{strings.ToLower(n)}
				if short, ok := strings.CutSuffix(cands[0], "_scope"); ok && kind == enums.KindScope {
					cands = []string{short, cands[0]}
				}
			}
			for _, c := range cands {
				if strings.HasPrefix(c, prefix) || strings.HasPrefix(c, strings.ToUpper(prefix)) {
					out = append(out, c)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// requireCell refuses a control-silo mutation without --cell: Sentry keys a control shard by
// (cell, scope, shard id), so the same scope and id in two cells are two shards.
// hint is the command line to try: the invocation's with --cell us added.
func requireCell(t query.Target, hint string) error {
	if t.Control() && t.Cell == "" {
		return usageErrorf(hint,
			"a control shard is keyed by cell as well (region_name): pass --cell to say which cell's shard")
	}
	return nil
}
