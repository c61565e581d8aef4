package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// BackfillBudget is OUTBOX_BACKFILLS_PER_MINUTE: the most rows per minute Sentry backfills,
// shared by every table (less the outboxes already scheduled).
const BackfillBudget = 10_000

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

type backfillOptions struct {
	Coded      []string
	SelfHosted bool
	Store      string
	Sample     time.Duration
	Watch      time.Duration
	ExitStatus bool
	Exact      bool
	Redis      redisFlags
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

func (a *app) redisConfig(r redisFlags) db.RedisConfig {
	cfg := db.RedisConfig{URL: r.URL, Password: a.getenv("REDISCLI_AUTH")}
	if cfg.URL == "" {
		cfg.URL = a.getenv("OUTBOXCTL_REDIS_URL")
	}
	if r.Cluster != "" {
		cfg.Cluster = strings.Split(r.Cluster, ",")
	}
	return cfg
}

func newBackfillStatusCmd(a *app) *cobra.Command {
	var o backfillOptions
	c := &cobra.Command{
		Use:   "status [TABLE...]",
		Short: "Show each replicated table's backfill: running, stuck, finished or gated",
		Long: strings.TrimSpace(`
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
rate and ETA shown against Sentry's budget of 10,000 rows per minute; --watch 10s repeats
that until every table is complete. A cursor that cannot be read (Redis unreachable) or
is malformed (not the JSON [low, version], a key of another Redis type, a table without
an id column) gives a row saying so while the rest answers, then exit 1. --exit-status
exits 8 while any selected table is not complete.`),
		Example: examples(`
  outboxctl backfill status
  outboxctl backfill status sentry_organization auth_user --sample 30s
  outboxctl backfill status --store redis --redis-url redis://cache:6379/0
  outboxctl backfill status sentry_organization --exit-status && echo done`),
		RunE: func(c *cobra.Command, args []string) error {
			if o.Watch <= 0 {
				return a.backfillStatus(c.Context(), o, args)
			}
			if o.Sample > 0 {
				return usageErrorf("outboxctl backfill status --watch 10s", "`--watch` samples by itself; drop `--sample`")
			}
			// Each round reads the cursors twice, o.Watch apart, and prints rate and ETA;
			// it ends when every selected table is complete, or on Ctrl-C (exit 130).
			round := o
			round.Sample, round.ExitStatus = o.Watch, true
			for {
				err := a.backfillStatus(c.Context(), round, args)
				var ee *exitError
				if errors.As(err, &ee) && ee.code == ExitPending {
					fmt.Fprintln(a.io.Err)
					continue
				}
				return err
			}
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.Coded, "coded", nil, "override a table's coded replication_version, TABLE=N (repeatable)")
	f.BoolVar(&o.SelfHosted, "self-hosted", false, "ignore the options, as self-hosted Sentry does (target = coded version)")
	f.StringVar(&o.Store, "store", "auto", "where the cursors are: auto (watermark tables if present, else Redis), postgres or redis")
	f.DurationVar(&o.Sample, "sample", 0, "read the cursors again after this long and show the rate and ETA")
	f.DurationVar(&o.Watch, "watch", 0, "repeat every interval with rate and ETA until every selected table is complete (Ctrl-C stops)")
	f.BoolVar(&o.ExitStatus, "exit-status", false, "exit 8 while any selected table is not complete (for runbooks that wait)")
	f.BoolVar(&o.Exact, "exact", false, "count the rows below each cursor exactly (an index scan) instead of estimating by id span")
	addRedisFlags(c, &o.Redis)
	_ = c.RegisterFlagCompletionFunc("store", fixedCompletion("auto", "postgres", "redis"))
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, t := range backfill.Registered(nil) {
			names = append(names, t.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	return c
}

// cursorRead is one table's cursor as read from a store.
type cursorRead struct {
	store  string
	cursor *backfill.Cursor
	err    error
	at     time.Time
	// updated is the watermark's date_updated (zero for Redis, which keeps no date).
	updated time.Time
}

func (a *app) backfillStatus(ctx context.Context, o backfillOptions, args []string) error {
	overrides, err := backfill.ParseCoded(o.Coded)
	if err != nil {
		return usageErrorf("outboxctl backfill status --coded sentry_organization=4", "%s", err.Error())
	}
	switch o.Store {
	case "auto", "postgres", "redis":
	default:
		return usageErrorf("outboxctl backfill status --store auto", "invalid `--store` %q: valid values are auto, postgres and redis", o.Store)
	}
	if err := backfill.CheckName("`--redis-key-prefix`", o.Redis.KeyPrefix); err != nil {
		return usageErrorf("outboxctl backfill status --redis-key-prefix 'sentry:'", "%s", err.Error())
	}
	for _, name := range args {
		if err := backfill.CheckName("table", name); err != nil {
			return usageErrorf("outboxctl backfill status sentry_organization", "%s", err.Error())
		}
	}
	all := backfill.Registered(overrides)
	if len(args) == 0 && !a.g.PrintSQL {
		// Besides the registered tables, any table with a cursor is shown (with Sentry's
		// default replication_version 1 unless --coded says otherwise).
		extra, err := a.cursorTables(ctx, o)
		if err != nil {
			return err
		}
		for _, name := range extra {
			if err := backfill.CheckName("table", name); err != nil {
				a.printer().Warnf("skipping a cursor whose %s", err.Error())
				continue
			}
			if _, ok := backfill.Lookup(all, name); !ok {
				all = append(all, backfill.Table{Name: name, Silo: backfill.Cell, Coded: 1, Unregistered: true})
			}
		}
	}
	selected := all
	if len(args) > 0 {
		selected = nil
		for _, name := range args {
			t, ok := backfill.Lookup(all, name)
			if !ok {
				return usageErrorf("outboxctl backfill status --coded "+name+"=1 "+name,
					"%s is not a registered replicated table; pass --coded %s=N to check it anyway", name, name)
			}
			selected = append(selected, t)
		}
	}
	names := make([]string, len(selected))
	for i, t := range selected {
		names[i] = t.Name
	}
	redisCfg := a.redisConfig(o.Redis)
	schema := a.g.Schema

	if printOnly, noDB := a.wantsSQL(); printOnly {
		script := query.Script{
			query.Watermarks(schema, query.CellWatermark, names),
			query.Watermarks(schema, query.ControlWatermark, names),
			query.OptionValues(schema, query.OptionTable, optionKeys(selected)),
			query.OptionValues(schema, query.ControlOptionTable, optionKeys(selected)),
			query.TableBounds(schema, names),
		}
		if err := a.printScript(script, noDB); err != nil {
			return err
		}
		// Redis-era cursors, as redis-cli commands in comments: the script stays pasteable.
		fmt.Fprintln(a.io.Out, "\n-- Before September 2026 the cursors live in Redis; read them with:")
		for _, n := range names {
			fmt.Fprintln(a.io.Out, query.RedisGetComment(query.BackfillRedisKey(o.Redis.KeyPrefix, n)))
		}
		return nil
	}

	conn, err := a.connect(ctx, "backfill")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))

	var (
		sch      query.Schema
		opts     map[string]optionRead
		optErr   error
		bounds   = map[string][2]*int64{}
		estimate = map[string]int64{}
	)
	tablesToLook := append([]string{query.CellWatermark, query.ControlWatermark, query.OptionTable, query.ControlOptionTable}, names...)
	err = db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		var err error
		if sch, err = a.loadSchema(ctx, tx, schema, tablesToLook); err != nil {
			return err
		}
		// A database error (a lock timeout on sentry_option) ends the read here, reported
		// as itself: running on would only add "current transaction is aborted".
		if opts, optErr, err = readReplicationOptions(ctx, tx, schema, sch, selected); err != nil {
			return err
		}
		var withID []string
		for _, n := range names {
			if sch.Table(n).Present && sch.Table(n).HasID {
				withID = append(withID, n)
			}
		}
		if len(withID) > 0 {
			res, err := query.Run(ctx, tx, query.TableBounds(schema, withID))
			if err != nil {
				return db.Classify(err, "backfill-table-bounds")
			}
			for _, r := range res.Rows {
				n, _ := r[0].(string)
				minID, _ := r[1].(int64)
				maxID, _ := r[2].(int64)
				bounds[n] = [2]*int64{ptrIf(r[1] != nil, minID), ptrIf(r[2] != nil, maxID)}
				estimate[n], _ = r[3].(int64)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	usePG := o.Store == "postgres" || (o.Store == "auto" && (sch.Table(query.CellWatermark).Present || sch.Table(query.ControlWatermark).Present))
	var rc redis.UniversalClient
	var redisErr error
	if !usePG {
		if !redisCfg.Given() {
			redisErr = errors.New("no watermark tables here and no Redis given: pass --redis-url (or OUTBOXCTL_REDIS_URL)")
		} else if rc, redisErr = db.ConnectRedis(ctx, redisCfg); rc != nil {
			defer rc.Close()
		}
	}
	readCursors := func() (map[string]cursorRead, error) {
		if usePG {
			return readWatermarks(ctx, conn, schema, sch, selected)
		}
		out := map[string]cursorRead{}
		for _, t := range selected {
			if redisErr != nil {
				out[t.Name] = cursorRead{store: "redis", err: redisErr}
				continue
			}
			out[t.Name] = readRedisCursor(ctx, rc, query.BackfillRedisKey(o.Redis.KeyPrefix, t.Name))
		}
		return out, nil
	}
	first, err := readCursors()
	if err != nil {
		return err
	}
	var second map[string]cursorRead
	if o.Sample > 0 {
		fmt.Fprintf(a.io.Err, "sampling the cursors again in %s…\n", o.Sample)
		select {
		case <-time.After(o.Sample):
		case <-ctx.Done():
			return ctx.Err()
		}
		if second, err = readCursors(); err != nil {
			return err
		}
	}

	rows, incomplete, failed := 0, 0, 0
	t := &render.Table{
		Columns: []string{"table", "silo", "coded", "option", "target", "store", "low_bound", "version", "state",
			"max_id", "progress", "rows_estimate", "rows_done", "rate_ids_per_minute", "eta_seconds", "note", "walked_version", "option_in"},
		Labels:      map[string]string{"rows_estimate": "rows", "rate_ids_per_minute": "rate/min", "eta_seconds": "eta", "walked_version": "walked"},
		MachineOnly: map[string]bool{"silo": true, "option_in": true},
	}
	for _, tb := range selected {
		rows++
		cr := first[tb.Name]
		in := backfill.Input{Table: tb, Option: opts[tb.Name].value, SelfHosted: o.SelfHosted, Cursor: cr.cursor}
		var unreachable bool
		if cr.err != nil {
			var dbErr *db.Error
			if errors.As(cr.err, &dbErr) || strings.Contains(cr.err.Error(), "no watermark tables") {
				unreachable = true
			} else {
				in.CursorErr = cr.err
				failed++ // a malformed cursor is an error of its row, like an unreadable one
			}
		}
		if ti := sch.Table(tb.Name); ti.Present && !ti.HasID {
			in.CursorErr = fmt.Errorf("table %s has no id column: not a replicated model's table (a stray cursor?)", tb.Name)
			failed++
		}
		in.OptionUpdated, in.CursorUpdated = opts[tb.Name].updated, cr.updated
		b := bounds[tb.Name]
		in.MaxID = b[1]
		st := backfill.Classify(in)
		state, note := string(st.State), st.Note
		if unreachable {
			state, note = string(backfill.StateUnknown), cr.err.Error()
			failed++
		}
		if !st.Complete {
			incomplete++
		}
		var low, version, progress, rowsDone, rate, eta any
		if cr.cursor != nil {
			low, version = cr.cursor.Low, cr.cursor.Version
			if b[0] != nil && b[1] != nil && *b[1] >= *b[0] && st.State == backfill.StateInProgress {
				span := float64(*b[1] - *b[0] + 1)
				progress = clamp01(float64(cr.cursor.Low-*b[0]) / span)
			}
		}
		if st.Complete {
			progress = 1.0
		}
		if o.Exact && cr.cursor != nil && sch.Table(tb.Name).Present {
			n, err := countBelow(ctx, conn, schema, tb.Name, cr.cursor.Low)
			if err != nil {
				return err
			}
			rowsDone = n
		}
		if second != nil {
			if s2 := second[tb.Name]; s2.cursor != nil && cr.cursor != nil && s2.cursor.Version == cr.cursor.Version {
				minutes := s2.at.Sub(cr.at).Minutes()
				if minutes > 0 {
					r := float64(s2.cursor.Low-cr.cursor.Low) / minutes
					rate = round1(r)
					if r > 0 && b[1] != nil {
						eta = round1(float64(*b[1]+1-s2.cursor.Low) / r * 60)
					}
				}
			}
		}
		if tb.Unregistered && note == "" {
			note = "not a registered table: coded version assumed 1 (Sentry's default); --coded " + tb.Name + "=N to set it"
		} else if tb.Unregistered {
			note += "; not a registered table: coded version assumed 1"
		}
		t.Rows = append(t.Rows, []any{tb.Name, string(tb.Silo), tb.Coded, ptrVal(opts[tb.Name].value), st.Target, cr.store, low, version,
			styledBackfillState(st, unreachable, state), ptrVal(b[1]), progress, nilIfZero(estimate[tb.Name], sch.Table(tb.Name).Present), rowsDone, rate, eta, note,
			ptrVal(st.Walked), nilIfEmpty(options.OptionTableFor(query.Silo(tb.Silo), sch))})
	}
	p := a.printer()
	if !p.Structured() {
		p.Notef("options read from %s", storesText(sch))
	}
	if !p.Structured() && second != nil {
		p.Notef("rates are ids per minute of the cursor; Sentry backfills at most %d rows per minute across all tables", BackfillBudget)
	}
	if err := p.Print(render.Doc{{Name: "backfill", Title: "Backfill status", Table: t}}); err != nil {
		return err
	}
	switch {
	case optErr != nil:
		return optErr
	case failed > 0:
		return &exitError{code: ExitError, msg: fmt.Sprintf("the cursors of %d table(s) could not be read or are malformed (see the note column)", failed)}
	case o.ExitStatus && incomplete > 0:
		return &exitError{code: ExitPending, msg: fmt.Sprintf("%d of %d table(s) not complete", incomplete, rows)}
	}
	return nil
}

// cursorTables lists the tables that have a cursor in the watermark tables or, without
// them, in Redis (SCAN, never KEYS). Failures here are left to the main read to report.
func (a *app) cursorTables(ctx context.Context, o backfillOptions) ([]string, error) {
	if _, given := db.Resolve(a.g.DSN, a.getenv); !given {
		return nil, nil
	}
	conn, err := a.connect(ctx, "backfill")
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var names []string
	usedPG := false
	err = db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		sch, err := query.LoadSchema(ctx, tx, a.g.Schema, []string{query.CellWatermark, query.ControlWatermark})
		if err != nil {
			return db.Classify(err, "introspect")
		}
		for _, wt := range []string{query.CellWatermark, query.ControlWatermark} {
			if !sch.Table(wt).Present || o.Store == "redis" {
				continue
			}
			usedPG = true
			res, err := query.Run(ctx, tx, query.WatermarkTables(a.g.Schema, wt))
			if err != nil {
				return db.Classify(err, "backfill-cursor-tables")
			}
			for _, r := range res.Rows {
				if n, ok := r[0].(string); ok {
					names = append(names, n)
				}
			}
		}
		return nil
	})
	if err != nil || usedPG || o.Store == "postgres" {
		return names, err
	}
	cfg := a.redisConfig(o.Redis)
	if !cfg.Given() {
		return names, nil
	}
	rc, err := db.ConnectRedis(ctx, cfg)
	if err != nil {
		return names, nil //nolint:nilerr // the main read reports an unreachable Redis per row
	}
	defer rc.Close()
	prefix := query.BackfillRedisKey(o.Redis.KeyPrefix, "")
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, globEscape(prefix)+"*", 500).Iterator()
		for iter.Next(ctx) {
			names = append(names, strings.TrimPrefix(iter.Val(), prefix))
		}
		return iter.Err()
	}
	if cc, ok := rc.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, scan)
	} else if c, ok := rc.(*redis.Client); ok {
		err = scan(ctx, c)
	}
	return names, err
}

// globEscape makes a key prefix match itself in SCAN's MATCH pattern: a prefix holding *, ?,
// [ or \ would otherwise match other keys.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}

func optionKeys(tables []backfill.Table) []string {
	keys := make([]string, len(tables))
	for i, t := range tables {
		keys[i] = backfill.OptionKey(t.Name)
	}
	return keys
}

// optionRead is one table's gating option: its value (nil when unset) and last_updated.
type optionRead struct {
	value   *int64
	updated time.Time
}

// readReplicationOptions reads each table's gating option from the options table Sentry
// reads for the table's silo here (options.OptionTableFor). A database error is returned
// as err; a malformed value leaves its table's option unknown and is returned as bad,
// after every other table's option is read.
func readReplicationOptions(ctx context.Context, tx pgx.Tx, schema string, sch query.Schema, tables []backfill.Table) (out map[string]optionRead, bad, err error) {
	type stored struct {
		raw     string
		updated time.Time
	}
	found := map[string]map[string]stored{} // options table -> key -> value
	for _, ot := range []string{query.OptionTable, query.ControlOptionTable} {
		if !sch.Table(ot).Present {
			continue
		}
		res, err := query.Run(ctx, tx, query.OptionValues(schema, ot, optionKeys(tables)))
		if err != nil {
			return nil, nil, db.Classify(err, "option-values")
		}
		found[ot] = map[string]stored{}
		for _, r := range res.Rows {
			k, _ := r[0].(string)
			v, _ := r[1].(string)
			at, _ := r[2].(time.Time)
			found[ot][k] = stored{v, at}
		}
	}
	out = map[string]optionRead{}
	for _, t := range tables {
		key := backfill.OptionKey(t.Name)
		st, ok := found[options.OptionTableFor(query.Silo(t.Silo), sch)][key]
		if !ok {
			continue
		}
		n, err := options.DecodeInt(key, st.raw)
		if err != nil {
			if bad == nil {
				bad = err
			}
			continue
		}
		out[t.Name] = optionRead{value: &n, updated: st.updated}
	}
	return out, bad, nil
}

// storesText says which options table Sentry reads for each outbox here, and why.
func storesText(sch query.Schema) string {
	cell, control := options.OptionTableFor(query.SiloCell, sch), options.OptionTableFor(query.SiloControl, sch)
	if cell == control {
		return fmt.Sprintf("%s for both outboxes (%s)", orNone(cell), sch.DeploymentWhy)
	}
	return fmt.Sprintf("%s for the cell outbox, %s for the control outbox (%s)", orNone(cell), orNone(control), sch.DeploymentWhy)
}

func orNone(table string) string {
	if table == "" {
		return "no options table"
	}
	return table
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// readWatermarks reads the cursors from the watermark tables, the table's silo first.
func readWatermarks(ctx context.Context, conn *db.Conn, schema string, sch query.Schema, tables []backfill.Table) (map[string]cursorRead, error) {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	byTable := map[string]map[string]cursorRead{}
	err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		for _, wt := range []string{query.CellWatermark, query.ControlWatermark} {
			if !sch.Table(wt).Present {
				continue
			}
			res, err := query.Run(ctx, tx, query.Watermarks(schema, wt, names))
			if err != nil {
				return db.Classify(err, "backfill-watermarks")
			}
			byTable[wt] = map[string]cursorRead{}
			for _, r := range res.Rows {
				n, _ := r[0].(string)
				low, _ := r[1].(int64)
				ver, _ := r[2].(int64)
				updated, _ := r[3].(time.Time)
				byTable[wt][n] = cursorRead{store: storeLabel(wt), cursor: &backfill.Cursor{Low: low, Version: ver}, at: time.Now(), updated: updated}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]cursorRead{}
	for _, t := range tables {
		order := []string{query.CellWatermark, query.ControlWatermark}
		if t.Silo == backfill.Control {
			order = []string{query.ControlWatermark, query.CellWatermark}
		}
		cr := cursorRead{store: storeLabel(order[0]), at: time.Now()}
		for _, wt := range order {
			if c, ok := byTable[wt][t.Name]; ok {
				cr = c
				break
			}
		}
		out[t.Name] = cr
	}
	return out, nil
}

// storeLabel names a watermark table briefly: postgres:cell or postgres:control.
func storeLabel(watermarkTable string) string {
	if watermarkTable == query.ControlWatermark {
		return "postgres:control"
	}
	return "postgres:cell"
}

func readRedisCursor(ctx context.Context, rc redis.UniversalClient, key string) cursorRead {
	cr := cursorRead{store: "redis", at: time.Now()}
	raw, err := rc.Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return cr
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		// A key that is not a string is a malformed cursor, like a string that is not JSON.
		cr.err = fmt.Errorf("key %s holds a %s, not the JSON string [low, version]", query.RedisArg(key), redisType(ctx, rc, key))
		return cr
	case err != nil:
		cr.err = &db.Error{Kind: db.KindUnreachable, Msg: "reading Redis key " + query.RedisArg(key) + ": " + db.RedactDSN(err.Error()), Err: err}
		return cr
	}
	c, perr := backfill.ParseRedisCursor(raw)
	if perr != nil {
		start := raw
		if len(start) > 40 {
			start = start[:40] + "…"
		}
		cr.err = fmt.Errorf("key %s holds %q: %w", query.RedisArg(key), start, perr)
		return cr
	}
	cr.cursor = &c
	return cr
}

// redisType names a key's Redis type, for an error.
func redisType(ctx context.Context, rc redis.UniversalClient, key string) string {
	if t, err := rc.Type(ctx, key).Result(); err == nil {
		return t
	}
	return "value of another type"
}

func countBelow(ctx context.Context, conn *db.Conn, schema, table string, low int64) (int64, error) {
	var n int64
	err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		res, err := query.Run(ctx, tx, query.RowsBelow(schema, table, low))
		if err != nil {
			return db.Classify(err, "backfill-rows-below")
		}
		n, _ = res.Rows[0][0].(int64)
		return nil
	})
	return n, err
}

func styledBackfillState(st backfill.Status, unreachable bool, text string) render.Styled {
	switch {
	case unreachable:
		return render.Styled{Text: text, Tone: render.ToneBad}
	case st.Complete:
		return render.Styled{Text: text, Tone: render.ToneGood}
	case st.State == backfill.StateInProgress || st.State == backfill.StateNotStarted:
		return render.Styled{Text: text, Tone: render.ToneNone}
	case st.State == backfill.StateGated:
		return render.Styled{Text: text, Tone: render.ToneMuted}
	}
	return render.Styled{Text: text, Tone: render.ToneWarn}
}

func ptrVal(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func ptrIf(ok bool, v int64) *int64 {
	if !ok {
		return nil
	}
	return &v
}

func nilIfZero(n int64, present bool) any {
	if !present {
		return nil
	}
	return n
}

func clamp01(f float64) float64 { return max(0, min(1, float64(int(f*1000))/1000)) }

func round1(f float64) float64 { return float64(int(f*10)) / 10 }

// osUser names who ran a command, for audit lines.
func osUser() string {
	for _, k := range []string{"SUDO_USER", "USER", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}
