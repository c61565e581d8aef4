package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/repair"
)

const defaultDemoSchema = "outboxctl_demo"

func newDemoCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Create or drop a demo data set with a realistic outbox incident",
		Long: strings.TrimSpace(`
Create, in a schema of its own (default outboxctl_demo; --schema to choose), Sentry's outbox,
option and backfill tables filled with an incident to practise on: tens of thousands of
organization shards of skewed depth, one hot shard holding ~10% of rows with heavy
coalescing, ~2% of shards in backoff, one at the 1 h cap behind a poison message (4242), a
kill-switched shard (4243), a shard being drained right now (4244), a control outbox over
three cells, and backfill state. It never touches any other schema.

With no PostgreSQL to practise on, demo up starts a throwaway one from the server binaries
installed on the machine and prints the export line that points outboxctl at it; it stays up
between commands until demo down removes it.`),
		Args: exactArgs(0, "(a subcommand: up, seed, drop or down)"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newDemoUpCmd(a), newDemoSeedCmd(a), newDemoDropCmd(a), newDemoDownCmd(a))
	return c
}

func (a *app) demoSchema() string {
	if a.g.Schema != "" {
		return a.g.Schema
	}
	return defaultDemoSchema
}

func (a *app) requireDatabase(command string) error {
	if _, given := db.Resolve(a.g.DSN, a.getenv); !given {
		return usageErrorf(command+" --dsn postgres://USER@HOST:5432/DB", "%s needs a database: pass --dsn, or set OUTBOXCTL_DSN or PGHOST and PGDATABASE", command)
	}
	return nil
}

// refusePrintSQL refuses --print-sql, before connecting, for a command that cannot print
// its work as SQL: --print-sql never writes.
func refusePrintSQL(printSQL bool, command string) error {
	if !printSQL {
		return nil
	}
	return usageErrorf("outboxctl "+command+" --yes", "outboxctl %s cannot print its work as SQL, and `--print-sql` never writes: drop --print-sql to run it", command)
}

// demoSeedOptions are demo seed's flags.
type demoSeedOptions struct {
	Rows, Shards int
	Payload      string // one of its words, refused otherwise as it is parsed (addEnumFlag)
	Yes          bool
}

// Validate checks the size of the data set.
func (o demoSeedOptions) Validate() error {
	if o.Rows < 1000 {
		return usageErrorf("outboxctl demo seed --rows 200000", "`--rows` must be at least 1000")
	}
	if o.Shards < 100 {
		return usageErrorf("outboxctl demo seed --shards 50000", "`--shards` must be at least 100")
	}
	return nil
}

func newDemoSeedCmd(a *app) *cobra.Command {
	var o demoSeedOptions
	c := &cobra.Command{
		Use:   "seed",
		Short: "Create the demo schema and fill it (replaces an earlier demo schema)",
		Example: examples(`
			outboxctl demo seed --dsn postgres://postgres@127.0.0.1:5432/test --yes
			outboxctl demo seed --rows 2000000 --schema outboxctl_bench --yes`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			// Seeding millions of rows is one long statement per step: unless the operator chose a
			// timeout, give it half an hour instead of the 30 s meant for diagnostics.
			if f := c.Flag("statement-timeout"); f == nil || !f.Changed {
				a.g.StatementTimeout = 30 * time.Minute
			}
			return runDemoSeed(c.Context(), a.factory(), o)
		},
	}
	c.Flags().IntVar(&o.Rows, "rows", 200_000, "cell outbox rows to create")
	c.Flags().IntVar(&o.Shards, "shards", 50_000, "organization shards to spread them over")
	addEnumFlag(c, c.Flags(), &o.Payload, string(fixture.PayloadJSONB), enumFlag{name: "payload", help: "payload column type: jsonb (Sentry since Aug 2025) or text (before)",
		example: "--payload text", words: []string{string(fixture.PayloadJSONB), string(fixture.PayloadText)}})
	addMutationFlags(a, c.Flags(), &o.Yes)
	return c
}

// runDemoSeed creates the demo schema and fills it (repair.DemoSeed), after the plan is
// confirmed, through the one runner; --print-sql and a database not given are refused first.
func runDemoSeed(ctx context.Context, d factory, o demoSeedOptions) error {
	if err := refusePrintSQL(d.sql.printSQL, "demo seed"); err != nil {
		return err
	}
	if err := d.db.requireDB("outboxctl demo seed"); err != nil {
		return err
	}
	do := fixture.DemoOptions{Rows: o.Rows, Shards: o.Shards, Payload: fixture.PayloadType(o.Payload), Schema: d.db.demoSchema}
	return runMutation(ctx, d, "outboxctl demo seed", &repair.DemoSeed{Env: d.repairEnv(), Options: do, Notes: d.term.stderr}, o.Yes)
}

// demoDropOptions are demo drop's flags.
type demoDropOptions struct {
	Yes bool
}

// Validate checks the flags: --yes needs nothing more.
func (o demoDropOptions) Validate() error { return nil }

func newDemoDropCmd(a *app) *cobra.Command {
	var o demoDropOptions
	c := &cobra.Command{
		Use:   "drop",
		Short: "Drop the demo schema (only a schema demo seed created)",
		Args:  exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return runDemoDrop(c.Context(), a.factory(), o)
		},
	}
	addMutationFlags(a, c.Flags(), &o.Yes)
	return c
}

// runDemoDrop drops the demo schema (repair.DemoDrop), after the plan is confirmed, through
// the one runner; fixture.Drop refuses a schema demo seed did not create.
func runDemoDrop(ctx context.Context, d factory, o demoDropOptions) error {
	if err := refusePrintSQL(d.sql.printSQL, "demo drop"); err != nil {
		return err
	}
	if err := d.db.requireDB("outboxctl demo drop"); err != nil {
		return err
	}
	return runMutation(ctx, d, "outboxctl demo drop", &repair.DemoDrop{Env: d.repairEnv(), DemoSchema: d.db.demoSchema, Notes: d.term.stderr}, o.Yes)
}

func newDemoUpCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "up",
		Short: "Start a throwaway PostgreSQL for the demo, unless one answers, and print its export line",
		Long: strings.TrimSpace(`
Find a PostgreSQL for the demo: the DSN set (--dsn, OUTBOXCTL_DSN, the libpq variables), else
the local server at 127.0.0.1:5432 when it answers, else a throwaway cluster started from the
server binaries installed on the machine (on PATH, pg_config --bindir, /usr/lib/postgresql,
Homebrew, Postgres.app; OUTBOXCTL_PG_BIN names the directory). OUTBOXCTL_THROWAWAY=1 starts the
throwaway even where 5432 answers.

The throwaway runs with trust authentication on 127.0.0.1 and a unix socket in a directory
under /tmp, and stays up until outboxctl demo down stops and removes it (the state directory
remembers it; a second demo up finds it). On stdout: the export line to paste, or to eval:
eval "$(outboxctl demo up)". Nothing is printed there when the DSN was set.`),
		Example: examples(`
			eval "$(outboxctl demo up)"
			OUTBOXCTL_THROWAWAY=1 outboxctl demo up`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemoUp(c.Context(), a.factory(), repair.DemoUser(db.Resolve(a.g.DSN, a.getenv)))
		},
	}
}

// runDemoUp finds or starts the demo's server (user: the DSN set, if any;
// repair.DemoClusterUp) and prints its export line.
func runDemoUp(ctx context.Context, d factory, user string) error {
	export, err := repair.DemoClusterUp(ctx, d.getenv, user, d.printer.Notef)
	if err != nil || export == "" {
		return err
	}
	return d.printer.Linef("%s", export)
}

func newDemoDownCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop and remove the throwaway PostgreSQL demo up started",
		Long: strings.TrimSpace(`
Stop the throwaway PostgreSQL that demo up started and remove its directory (its data with
it). Only that cluster: demo down never touches a server it did not start. With none running
it says so and succeeds.`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(*cobra.Command, []string) error { return runDemoDown(a.factory()) },
	}
}

// runDemoDown stops and removes the cluster demo up started (repair.DemoClusterDown).
func runDemoDown(d factory) error { return repair.DemoClusterDown(d.getenv, d.printer.Notef) }
