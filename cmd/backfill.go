package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

func newBackfillCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "backfill",
		Short: "Inspect Sentry's outbox backfills",
		Args:  exactArgs(0, "(a subcommand: status)"),
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newBackfillStatusCmd(a))
	return c
}

// redisFlags are the Redis connection flags, shared by every command that reads Redis.
type redisFlags struct {
	URL       string
	Cluster   string
	KeyPrefix string
}

func addRedisFlags(c *cobra.Command, r *redisFlags) {
	c.Flags().StringVar(&r.URL, "redis-url", "", "Redis holding the backfill cursors (redis:// or rediss://; default $OUTBOXCTL_REDIS_URL; password from the URL or $REDISCLI_AUTH)")
	c.Flags().StringVar(&r.Cluster, "redis-cluster", "", "Redis Cluster seed addresses, host:port,host:port")
	c.Flags().StringVar(&r.KeyPrefix, "redis-key-prefix", "", "prefix of the cursor keys (for a Redis shared with other data)")
}

// config is the Redis to use: the flags, else the environment (db.RedisFrom).
func (r redisFlags) config(getenv func(string) string) db.RedisConfig {
	return db.RedisFrom(r.URL, r.Cluster, getenv)
}

// backfillStatusOptions are backfill status's flags and arguments.
type backfillStatusOptions struct {
	Tables     []string
	Coded      []string
	SelfHosted bool
	Store      string
	Sample     time.Duration
	Watch      time.Duration
	ExitStatus bool
	Exact      bool
	Redis      redisFlags
	MaxCursor  byteSize // --max-cursor-bytes

	overrides map[string]int64 // parsed --coded, set by Validate
}

// Validate checks the flags and arguments before anything is read.
func (o *backfillStatusOptions) Validate() error {
	if o.Watch > 0 && o.Sample > 0 {
		return usageErrorf("outboxctl backfill status --watch 10s", "`--watch` samples by itself; drop `--sample`")
	}
	overrides, err := backfill.ParseCoded(o.Coded)
	if err != nil {
		return usageErrorf("outboxctl backfill status --coded sentry_organization=4", "%s", err.Error())
	}
	o.overrides = overrides
	if err := backfill.CheckName("`--redis-key-prefix`", o.Redis.KeyPrefix); err != nil {
		return usageErrorf("outboxctl backfill status --redis-key-prefix 'sentry:'", "%s", err.Error())
	}
	for _, name := range o.Tables {
		if err := backfill.CheckName("table", name); err != nil {
			return usageErrorf("outboxctl backfill status sentry_organization", "%s", err.Error())
		}
	}
	return nil
}

// backfillStatusLong is backfill status's help.
const backfillStatusLong = `
Show, for each replicated table (or the ones named), where its outbox backfill stands: the
version its code is at, the option that gates it (outbox_replication.<table>.replication_
version; Sentry's default 0 gates everything), the effective target (min of the two, or the
coded version with --self-hosted), the cursor (low_bound, version), and a state:

  not started          no cursor yet (Sentry stores (0, 1) on its first read)
  in progress          walking at the target version; progress by id span
  complete             the stored version is above the coded one
  complete, version skipped
                       complete, but the walk ran at a version below the coded one
                       (walked): that version's walk will never run
  gated by option      the option holds the target below the coded version
  new version pending  the stored version is below the target: the walk restarts from 0
  cursor beyond max(id), malformed cursor: anomalies (the first would finish the table
                       without replicating anything)

On completion Sentry stores coded version + 1 whatever version the walk ran at, so the
walked column shows that version only when the state tells it: self-hosted, or the option
last updated before the watermark (its value then is its value now). Otherwise it is empty
and the note says what cannot be told.

Cursors are read from the watermark tables (Sentry since September 2026) when they exist,
else from Redis (key outbox_backfill.<table>, JSON [low, version]); --store chooses. The
gating options are read from the options table Sentry reads for the table's silo
(--deployment; the option_in field). With --sample, the cursors are read twice and the
rate and ETA shown against Sentry's budget of 10,000 rows per minute; --watch 10s redraws
the status every 10s, with each table's rows_done change and rate since the last frame,
until every table is complete (exit 0) or q. A cursor that cannot be read (Redis unreachable) or
is malformed (not the JSON [low, version], a key of another Redis type, a table without
an id column, a NULL in a watermark row) gives a row saying so while the rest answers,
with a warning naming each malformed cursor in full, then exit 1. A schema with neither
options table is an error, as for killswitch list. --exit-status
exits 8 while any selected table is not complete.

A control table whose option outbox_replication.<table>.backfill.target_cells is set (Sentry
since June 2026) is backfilled for the listed cells only: the cells column gives its state in
each cell the organization mappings name ("de: not attempted; us: complete"), and the note
names the cells left out.`

func newBackfillStatusCmd(a *app) *cobra.Command {
	var o backfillStatusOptions
	var w *watchSpec
	c := &cobra.Command{
		Use:   "status [TABLE...]",
		Short: "Show each replicated table's backfill: running, stuck, finished or gated",
		Long:  strings.TrimSpace(backfillStatusLong),
		Example: examples(`
  outboxctl backfill status
  outboxctl backfill status sentry_organization auth_user --sample 30s
  outboxctl backfill status --store redis --redis-url redis://cache:6379/0
  outboxctl backfill status sentry_organization --exit-status && echo done`),
		RunE: func(c *cobra.Command, args []string) error {
			o.Tables, o.Watch = args, w.every
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				return watchBackfill(ctx, on.factory(), o)
			})
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.Coded, "coded", nil, "override a table's coded replication_version, TABLE=N (repeatable)")
	f.BoolVar(&o.SelfHosted, "self-hosted", false, "ignore the options, as self-hosted Sentry does (target = coded version)")
	addEnumFlag(c, f, &o.Store, status.StoreAuto, enumFlag{name: "store", help: "where the cursors are: auto (watermark tables if present, else Redis), postgres or redis",
		example: "--store auto", words: []string{status.StoreAuto, status.StorePostgres, status.StoreRedis}})
	addDurationFlag(f, &o.Sample, "sample", 0, "30s", "read the cursors again after this long and show the rate and ETA")
	w = a.addWatch(c, []string{"table"}, []string{"rows_done"})
	w.untilDone = true
	f.BoolVar(&o.ExitStatus, "exit-status", false, "exit 8 while any selected table is not complete (for runbooks that wait)")
	f.BoolVar(&o.Exact, "exact", false, "count the rows below each cursor exactly (an index scan) instead of estimating by id span")
	addRedisFlags(c, &o.Redis)
	o.MaxCursor = byteSize(status.DefaultMaxCursor)
	f.Var(&o.MaxCursor, "max-cursor-bytes", "refuse a Redis cursor value longer than this (KiB, MiB, GiB), before fetching it: Sentry's is a few dozen bytes")
	// --watch samples by itself (Validate says so to a direct caller as well).
	c.MarkFlagsMutuallyExclusive("watch", "sample")
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return backfill.Names(backfill.Registered(nil)), cobra.ShellCompDirectiveNoFileComp
	}
	return c
}

// watchBackfill runs the status once. Under --watch this is one frame of the watch (see
// runDocument), which asks for the verdict so that the watch ends when every selected table
// is complete: the frames show rows_done's change and rate from frame to frame.
func watchBackfill(ctx context.Context, d factory, o backfillStatusOptions) (render.Doc, error) {
	if o.Watch > 0 {
		o.ExitStatus = true
	}
	return runBackfillStatus(ctx, d, o)
}

// runBackfillStatus selects the tables, prints the SQL or reads the status and returns it.
// o must have passed Validate.
func runBackfillStatus(ctx context.Context, d factory, o backfillStatusOptions) (render.Doc, error) {
	selected, err := selectTables(backfill.Registered(o.overrides), o.Tables)
	if err != nil {
		return nil, err
	}
	if d.sql.printOnly {
		return nil, status.Print(d.sql.printText, d.printer, d.db.schema, o.Redis.KeyPrefix, selected)
	}
	src := status.Source{Schema: d.db.schema, Deployment: d.db.deployment, Store: o.Store,
		Redis: o.Redis.config(d.getenv), KeyPrefix: o.Redis.KeyPrefix, MaxCursor: int64(o.MaxCursor), Now: d.clock.now}
	connect := func(ctx context.Context) (*db.Conn, error) { return d.db.connect(ctx, "backfill") }
	doc, rep, err := src.Run(ctx, connect, d.printer, selected, len(o.Tables) == 0, status.Request{SelfHosted: o.SelfHosted, Exact: o.Exact,
		Sample: o.Sample, Wait: func(ctx context.Context, dur time.Duration) error { return d.sampleAgain(ctx, "cursors", dur) }})
	if err != nil {
		return nil, err
	}
	return doc, rep.Verdict(o.ExitStatus)
}

// selectTables is every registered table, or the ones named (each must be registered).
func selectTables(all []backfill.Table, names []string) ([]backfill.Table, error) {
	selected, name := backfill.Select(all, names)
	if name != "" {
		return nil, usageErrorf("outboxctl backfill status --coded "+name+"=1 "+name,
			"%s is not a registered replicated table; pass --coded %s=N to check it anyway", name, name)
	}
	return selected, nil
}
