package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/textsafe"
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
three cells, and backfill state. It never touches any other schema.`),
		Args: exactArgs(0, "(a subcommand: seed or drop)"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newDemoSeedCmd(a), newDemoDropCmd(a))
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

// runDemoSeed creates the demo schema and fills it, after the plan is confirmed.
func runDemoSeed(ctx context.Context, d factory, o demoSeedOptions) error {
	if err := refusePrintSQL(d.printSQL, "demo seed"); err != nil {
		return err
	}
	if err := d.requireDB("outboxctl demo seed"); err != nil {
		return err
	}
	do := fixture.DemoOptions{Rows: o.Rows, Shards: o.Shards, Payload: fixture.PayloadType(o.Payload), Schema: d.demoSchema}
	if err := d.confirm("outboxctl demo seed", fixture.DemoPlan(do), o.Yes); err != nil {
		return err
	}
	conn, err := d.connect(ctx, "demo")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	progress := d.progress(ctx, "seeded rows", fixture.DemoRows(do), false)
	do.Progress = progress.Set
	err = fixture.Seed(ctx, conn, do)
	progress.done()
	if err != nil {
		return db.Classify(err, "demo seed")
	}
	// The schema is the operator's text: quoted as one word, so the line can be pasted.
	fmt.Fprintf(d.stderr, "seeded schema %s; try: %s\n", textsafe.Command(do.Schema), textsafe.Command("outboxctl", "--schema", do.Schema, "shards", "--stuck"))
	return nil
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

// runDemoDrop drops the demo schema, after the plan is confirmed; fixture.Drop refuses a
// schema demo seed did not create.
func runDemoDrop(ctx context.Context, d factory, o demoDropOptions) error {
	if err := refusePrintSQL(d.printSQL, "demo drop"); err != nil {
		return err
	}
	if err := d.requireDB("outboxctl demo drop"); err != nil {
		return err
	}
	if err := d.confirm("outboxctl demo drop", []string{"drop schema " + d.demoSchema + " and everything in it"}, o.Yes); err != nil {
		return err
	}
	conn, err := d.connect(ctx, "demo")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := fixture.Drop(ctx, conn, d.demoSchema); err != nil {
		return db.Classify(err, "demo drop")
	}
	fmt.Fprintf(d.stderr, "dropped schema %s\n", d.demoSchema)
	return nil
}
