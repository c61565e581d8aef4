package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
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
func (a *app) refusePrintSQL(command string) error {
	if !a.g.PrintSQL {
		return nil
	}
	return usageErrorf("outboxctl "+command+" --yes", "outboxctl %s cannot print its work as SQL, and `--print-sql` never writes: drop --print-sql to run it", command)
}

func newDemoSeedCmd(a *app) *cobra.Command {
	var o fixture.DemoOptions
	var payload string
	var yes bool
	c := &cobra.Command{
		Use:   "seed",
		Short: "Create the demo schema and fill it (replaces an earlier demo schema)",
		Example: examples(`
			outboxctl demo seed --dsn postgres://postgres@127.0.0.1:5432/test --yes
			outboxctl demo seed --rows 2000000 --schema outboxctl_bench --yes`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := a.refusePrintSQL("demo seed"); err != nil {
				return err
			}
			if err := a.requireDatabase("outboxctl demo seed"); err != nil {
				return err
			}
			if o.Rows < 1000 {
				return usageErrorf("outboxctl demo seed --rows 200000", "`--rows` must be at least 1000")
			}
			if o.Shards < 100 {
				return usageErrorf("", "`--shards` must be at least 100")
			}
			o.Payload = fixture.PayloadType(payload)
			o.Schema = a.demoSchema()
			if err := a.confirm("outboxctl demo seed", fixture.DemoPlan(o), yes); err != nil {
				return err
			}
			// Seeding millions of rows is one long statement per step: unless the operator chose a
			// timeout, give it half an hour instead of the 30 s meant for diagnostics.
			if f := c.Flag("statement-timeout"); f == nil || !f.Changed {
				a.g.StatementTimeout = 30 * time.Minute
			}
			conn, err := a.connect(c.Context(), "demo")
			if err != nil {
				return err
			}
			defer conn.Close(c.Context())
			progress := a.progress(c.Context(), "seeded rows", fixture.DemoRows(o), false)
			o.Progress = progress.Set
			err = fixture.Seed(c.Context(), conn, o)
			progress.done()
			if err != nil {
				return db.Classify(err, "demo seed")
			}
			fmt.Fprintf(a.io.Err, "seeded schema %s; try: outboxctl --schema %s shards --stuck\n", o.Schema, o.Schema)
			return nil
		},
	}
	c.Flags().IntVar(&o.Rows, "rows", 200_000, "cell outbox rows to create")
	c.Flags().IntVar(&o.Shards, "shards", 50_000, "organization shards to spread them over")
	addEnumFlag(c, &payload, "payload", "payload column type: jsonb (Sentry since Aug 2025) or text (before)",
		"outboxctl demo seed --payload text", string(fixture.PayloadJSONB), string(fixture.PayloadText))
	addYesFlag(c.Flags(), &yes)
	return c
}

func newDemoDropCmd(a *app) *cobra.Command {
	var yes bool
	return func() *cobra.Command {
		c := &cobra.Command{
			Use:   "drop",
			Short: "Drop the demo schema (only a schema demo seed created)",
			Args:  exactArgs(0, "(no arguments)"),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := a.refusePrintSQL("demo drop"); err != nil {
					return err
				}
				if err := a.requireDatabase("outboxctl demo drop"); err != nil {
					return err
				}
				schema := a.demoSchema()
				if err := a.confirm("outboxctl demo drop", []string{"drop schema " + schema + " and everything in it"}, yes); err != nil {
					return err
				}
				conn, err := a.connect(c.Context(), "demo")
				if err != nil {
					return err
				}
				defer conn.Close(c.Context())
				if err := fixture.Drop(c.Context(), conn, schema); err != nil {
					return db.Classify(err, "demo drop")
				}
				fmt.Fprintf(a.io.Err, "dropped schema %s\n", schema)
				return nil
			},
		}
		addYesFlag(c.Flags(), &yes)
		return c
	}()
}
