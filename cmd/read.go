package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/selection"
)

// connectHint is what a command without a database says on stderr after printing its SQL.
const connectHint = "note: no database given, so this is the SQL rather than its result; to run it, pass " +
	"--dsn postgres://USER@HOST:5432/DB (or set OUTBOXCTL_DSN, or PGHOST and PGDATABASE)"

// readSpec is what a read snapshot is of, beyond the flags.
type readSpec struct {
	// check is what its catalog must hold: the target's outbox table (outbox.CheckOutbox),
	// an options table (outbox.CheckOptions) or nothing (the doctor finds its tables).
	check outbox.Check
	// timeout bounds its statements instead of --statement-timeout (0: --statement-timeout):
	// a full pass asked for by its flag.
	timeout time.Duration
	// table is the table read when the flags do not name it (the webhook mailboxes); nil:
	// the target the flags select.
	table *query.Target
}

// snapshot connects for command, opens a read snapshot (outbox.Open: the budget, the
// catalog read once, --deployment applied) and calls fn.
func (a *app) snapshot(ctx context.Context, command string, r readSpec, fn func(*outbox.Snapshot) error) error {
	var t query.Target
	if r.table != nil {
		t = *r.table
	} else {
		var err error
		if t, err = a.target(); err != nil {
			return err
		}
	}
	cfg := a.dbConfig(command)
	if r.timeout > 0 {
		cfg.StatementTimeout = r.timeout
	}
	return outbox.Open(ctx, cfg, t, outbox.Options{Deployment: a.deployment(), Check: r.check}, fn)
}

// reader is what a read service takes of d for command (outbox.Reader): whether it prints,
// the script printer, the snapshot opener, the printer of its notes and the registry.
func (d factory) reader(ctx context.Context, command string) outbox.Reader {
	return outbox.Reader{PrintOnly: d.sql.printOnly, Print: d.sql.printScript, Printer: d.printer, Registry: d.registry,
		Now: d.clock.now, Next: d.suggest.next, Open: func(check outbox.Check, fn func(*outbox.Snapshot) error) error {
			return d.db.snapshot(ctx, command, readSpec{check: check}, fn)
		},
		OpenOn: func(t query.Target, fn func(*outbox.Snapshot) error) error {
			return d.db.snapshot(ctx, command, readSpec{table: &t}, fn)
		},
		Target: d.db.target, PrintSchema: d.sql.printSchema}
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

// needsDatabase refuses a verdict or machine output asked for without a database
// (selection.NeedsDatabase): printed SQL and exit 0 would read as a pass or an empty result.
func (a *app) needsDatabase() error {
	given := func(flag string) bool { return a.cmd != nil && a.cmd.Flags().Changed(flag) }
	return selection.NeedsDatabase(given, a.g.JSONFields, a.g.JQ, a.g.Output)
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

// completeNames completes enum names for positional arguments and flags, honouring --enums
// (enums.Registry.Complete).
func (a *app) completeNames(kind enums.Kind) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		reg, err := a.registry()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return reg.Complete(kind, prefix), cobra.ShellCompDirectiveNoFileComp
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
