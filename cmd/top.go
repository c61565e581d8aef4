package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
	"github.com/outboxctl/outboxctl/internal/textsafe"
	"github.com/outboxctl/outboxctl/internal/top"
)

// topCheapChecks are the doctor checks top's cheap tier runs every --interval: the ones of
// the shards (the scheduler's oldest rows, the shards at the cap, the kill switches). r runs
// every check.
var topCheapChecks = []string{doctor.CheckScheduler, doctor.CheckStuck, doctor.CheckKillswitch} //nolint:gochecknoglobals // constant list

type topOptions struct {
	Interval, FindingsEvery time.Duration
	Limit                   int
	// Once prints the first frame (Width × Height) and exits.
	Once          bool
	Width, Height int
	// History is the window of the sparklines of a context with a prometheus-url.
	History time.Duration
}

func (o topOptions) Validate() error {
	if o.Interval < time.Second {
		return usageErrorf("outboxctl top --once --interval 5s", "`--interval` must be at least 1s (got %s): every poll reads the database", o.Interval)
	}
	if o.FindingsEvery < o.Interval {
		return usageErrorf("outboxctl top --interval 15s --findings-interval 5m", "`--findings-interval` must be at least `--interval` (%s, got %s)", o.Interval, o.FindingsEvery)
	}
	if o.Limit < 1 {
		return usageErrorf("outboxctl top --once --limit 100", "`--limit` must be at least 1")
	}
	if o.History < time.Minute {
		return usageErrorf("outboxctl top --once --history 3h", "`--history` must be at least 1m (got %s)", o.History)
	}
	if o.Width < 20 || o.Height < 6 {
		return usageErrorf("outboxctl top --once --width 80 --height 24", "`--width` must be at least 20 and `--height` at least 6")
	}
	return nil
}

func newTopCmd(a *app) *cobra.Command {
	o := topOptions{Width: 80, Height: 24}
	c := &cobra.Command{
		Use:   "top",
		Short: "The on-call cockpit: doctor's findings by cause and the stuck shards, live",
		Long: strings.TrimSpace(`
One live screen of one context or several: doctor's findings grouped by cause (the scheduler, stuck
and killswitch checks, read every --findings-interval and when the stuck shards change; r
runs every check) and the shards in backoff (shards --stuck, read every --interval). enter drills down: finding → its shards → a shard (inspect shard) → a
message's payload, pretty-printed with its secrets redacted. esc goes back, tab switches
pane, o sorts by the next column, / filters the shards (at-cap scope:NAME category:NAME),
p pauses, ? lists the keys, q quits.

Every read is a read-only snapshot on one connection under --statement-timeout, on the
catalog read once; at the defaults top sends about as many statements a minute as the
exporter's cheap tier. The footer says how old the data is and how many statements per
minute the poller sends.

On a finding, R S C K D run its printed reschedule, skip, compact, killswitch or drain
command (on a shard: R C K run reschedule, compact, killswitch add of it) as in a shell:
the command prints its plan and asks for its confirmation (y, or the count typed back above
100 shards), which is typed in top; esc answers no, v shows its SQL. It checks the context
(readonly, allow: exit 10), writes its audit line and archive, and prints its summary and
undo command; its context's findings are read again after it. Tab and 1-6 show the
panes of the kill switches, backfills, replicas (verify) and webhook mailboxes, each its
command's output.

Several contexts (--context a,b, --all-contexts) are read each by a poller of its own on
its own connection, at the same cadences; the findings and shards panes merge them with a
context column, and an action runs on its row's context (its printed --context). A context
that cannot be read is a line of the findings pane with its error, and the others go on.
Panes 3-6 run their command on each context (its --context) and show the outputs one after
another, each under a heading naming its context, with its own exit status or error. --once
over several contexts exits 6 when one could not be read (a "context gone" line on stderr
for it), 1 when none could, as the fan-out reads do; over one context, 1 when it could not
be read.

The first frame shows the stuck shards as soon as they are read; the findings pane says it
is reading doctor's findings until they come.

A context with a prometheus-url (the Prometheus scraping its exporter) gets sparklines of
its depth and oldest row's age over the last --history on the shards and mailboxes panes,
read from the exporter's series at most once a minute; nothing new is stored.

--once prints the first frame with the findings (--width × --height) on stdout and exits,
for a script or a screenshot. Without --once top needs a terminal.`),
		Example: examples(`
  outboxctl top
  outboxctl --context us top --interval 5s --findings-interval 1m
  outboxctl --context us,de top
  outboxctl --all-contexts top --once --width 120 --height 40
  outboxctl top --once --width 120 --height 40`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runTop(c.Context(), o)
		},
	}
	f := c.Flags()
	addDurationFlag(f, &o.Interval, "interval", top.DefaultInterval, "30s", "how often the cheap tier (the stuck shards) is read")
	addDurationFlag(f, &o.FindingsEvery, "findings-interval", top.DefaultFindingsEvery, "1m", "the longest doctor's findings of the shards go unread (sooner when the stuck shards change, at most once a minute)")
	f.IntVar(&o.Limit, "limit", query.DefaultLimit, "list at most this many stuck shards")
	addDurationFlag(f, &o.History, "history", history.DefaultWindow, "6h", "the window of the depth and oldest-age sparklines, read from a context's prometheus-url")
	f.BoolVar(&o.Once, "once", false, "print the first frame on stdout and exit")
	f.IntVar(&o.Width, "width", 80, "--once: the frame's width in columns")
	f.IntVar(&o.Height, "height", 24, "--once: the frame's height in lines")
	return c
}

// runTop shows top (or prints its first frame) on the invocation's database.
func (a *app) runTop(ctx context.Context, o topOptions) error {
	if a.g.PrintSQL {
		return usageErrorf("outboxctl doctor --print-sql", "top reads live and prints no SQL: doctor --print-sql and shards --stuck --print-sql print what it reads")
	}
	if len(a.fan) == 0 {
		if err := a.requireDatabase("outboxctl top"); err != nil {
			return err
		}
	}
	if !o.Once && (!a.io.InTTY || !a.io.OutTTY) {
		return usageErrorf("outboxctl top --once", "top needs a terminal: for a script, use --once, doctor -o json or shards --stuck -o json")
	}
	cs := a.topContexts(o.Limit)
	defer func() {
		for _, c := range cs {
			c.Source.(*topSource).close(ctx)
		}
	}()
	opt := top.Options{Interval: o.Interval, FindingsEvery: o.FindingsEvery, Context: a.contextName,
		History: a.topHistory(o), ASCII: !render.UnicodeOK(a.env)}
	if o.Once {
		printer := a.factory().printer
		frame, failed := top.Frame(ctx, cs, opt, o.Width, o.Height)
		for _, l := range strings.Split(frame, "\n") {
			if err := printer.Linef("%s", l); err != nil {
				return err
			}
		}
		return onceOutcome(a.io.Err, len(cs), failed)
	}
	opt.Width, opt.Height = a.io.ScreenSize()
	return top.Run(ctx, cs, opt, a.io.In, a.io.Out)
}

// onceOutcome is top --once's exit after its frame, by the fan-out reads' rule: with one
// context, its error (exit 1, as any read of an unreachable database); with several, one
// "context gone" line on stderr per context that could not be read, and exit 6 (partial)
// when others were read, 1 when none was. A frame alone would leave a script's exit 0
// with a context unread.
func onceOutcome(w io.Writer, contexts int, failed []top.Failed) error {
	switch {
	case len(failed) == 0:
		return nil
	case contexts == 1:
		return failed[0].Err
	}
	gone := make([]goneContext, 0, len(failed))
	for _, f := range failed {
		gone = append(gone, goneContext{name: f.Context, err: f.Err})
	}
	printGone(w, gone)
	if len(failed) == contexts {
		return silent(meansRuntime)
	}
	return silent(meansPartial)
}

// topContexts are top's contexts: the invocation's, or each context selected
// (--context a,b, --all-contexts) with its settings under the flags, each its own poller on
// its own connection. A context whose settings name no database, or do not resolve, is a
// source whose every read fails with why: it shows in the findings pane and stops no other.
func (a *app) topContexts(limit int) []top.Context {
	if len(a.fan) == 0 {
		return []top.Context{{Name: a.contextName, Source: &topSource{a: a, d: a.factory(), limit: limit}}}
	}
	cs := make([]top.Context, 0, len(a.fan))
	for _, one := range a.fan {
		sub := a.fork(a.io)
		sub.fan = nil
		src := &topSource{a: sub, limit: limit}
		if err := sub.useContext(a.cmd, one); err != nil {
			src.broken = err
		} else if err := sub.requireDatabase("outboxctl --context " + one.Name + " top"); err != nil {
			src.broken = fmt.Errorf("it names no database (set dsn, dsn-env or service in the context)")
		}
		src.d = sub.factory()
		cs = append(cs, top.Context{Name: one.Name, Source: src})
	}
	return cs
}

// topSource is top's one poller on the context: one connection, held between polls and
// opened again after an error, each read a read-only snapshot under the session's
// timeouts (sessionOn). A shard's or a message's read waits for a poll in progress; the
// statement count never waits (top's loop reads it, and a key must not wait for a read).
type topSource struct {
	a     *app
	d     factory
	limit int
	// broken is why this context cannot be read at all (its settings): every read fails
	// with it.
	broken error
	mu     sync.Mutex // held by a read: one at a time on the connection
	conn   atomic.Pointer[db.Conn]
	sent   atomic.Int64 // the statements of connections closed
	// catalog is what the connection's first snapshot read of the catalog (the tables,
	// their columns, the deployment applied): later snapshots reuse it, so that a poll
	// costs its reads alone. It goes with the connection, and r reads it again.
	catalog *query.Schema
}

// drop closes the connection (s.mu held), keeping its statement count.
func (s *topSource) drop(ctx context.Context) {
	if c := s.conn.Swap(nil); c != nil {
		s.sent.Add(c.Statements())
		c.Close(context.WithoutCancel(ctx))
	}
	s.catalog = nil
}

func (s *topSource) close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(ctx)
}

// Statements is what the poller has sent: top's footer divides it by the time.
func (s *topSource) Statements() int64 {
	n := s.sent.Load()
	if c := s.conn.Load(); c != nil {
		n += c.Statements()
	}
	return n
}

// with runs fn in a read-only snapshot on the poller's connection, on the catalog read
// once (fresh: read again); a failure drops the connection and the catalog, so a broken
// one is never reused.
func (s *topSource) with(ctx context.Context, fresh bool, fn func(*outbox.Snapshot) error) error {
	if s.broken != nil {
		return s.broken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.d.target()
	if err != nil {
		return err
	}
	// The connection runs under the catalog read's budget when --statement-timeout is
	// lower, and its statements are lowered after the catalog read (outbox.Open's rule).
	connectTimeout, lower := outbox.CatalogBudget(s.a.g.StatementTimeout)
	conn := s.conn.Load()
	if conn == nil {
		cfg := s.a.dbConfig("top")
		cfg.StatementTimeout = connectTimeout
		if conn, err = db.Connect(ctx, cfg); err != nil {
			return err
		}
		s.conn.Store(conn)
	}
	o := outbox.Options{Deployment: s.a.deployment(), Lower: lower}
	if !fresh {
		o.Known = s.catalog
	}
	err = outbox.On(ctx, conn, t, o, func(ses *outbox.Snapshot) error {
		s.catalog = ses.KnownCatalog()
		return fn(ses)
	})
	if err != nil {
		s.drop(ctx)
	}
	return err
}

// Poll reads the stuck shards narrowed by f and, from top.TierFindings on, the findings
// (the cheap checks, or every one), in one snapshot.
func (s *topSource) Poll(ctx context.Context, f top.Filter, tier top.Tier) top.Snapshot {
	snap := top.Snapshot{At: s.d.now(), Tier: tier}
	names := topCheapChecks
	if tier == top.TierFull {
		names = doctor.Names
	}
	reg, err := s.d.registry()
	if err != nil {
		snap.Err = err
		return snap
	}
	filter, ferr := s.shardFilter(f)
	snap.Err = s.with(ctx, tier == top.TierFull, func(ses *outbox.Snapshot) error {
		if tier == top.TierShards {
			if ferr != nil {
				return ferr
			}
			var err error
			snap.Shards, err = stuckTable(ses, s.d, reg, filter)
			return err
		}
		o := doctorOptions{Config: doctor.Config{Unclaimed: doctor.DefaultUnclaimed, XminWarn: doctor.DefaultXminWarn, XminCrit: doctor.DefaultXminCrit,
			XminWarnXids: doctor.DefaultXminWarnXids, XminCritXids: doctor.DefaultXminCritXids, Sample: doctor.DefaultSample, Limit: doctor.DefaultLimit,
			LockTimeout: min(doctor.DefaultLockTimeout, s.a.g.StatementTimeout), Deployment: s.a.deployment()}}
		fs, _, err := doctorIn(ctx, s.d, ses, o, names, reg)
		if err != nil {
			return err
		}
		snap.Findings = fs
		if ferr != nil {
			return ferr
		}
		snap.Shards, err = stuckTable(ses, s.d, reg, filter)
		return err
	})
	return snap
}

// shardFilter is f as the shards command's flags say it (--stuck, --at-cap, --scope,
// --category, --limit).
func (s *topSource) shardFilter(f top.Filter) (query.ShardFilter, error) {
	o := shardsOptions{selectorOptions: selectorOptions{Stuck: true, AtCap: f.AtCap, Scope: f.Scope, Category: f.Category, Limit: s.limit}}
	return s.a.shardFilter(o, s.d.now())
}

// stuckTable is shards --stuck's table of the shards of filter, in the snapshot ses.
func stuckTable(ses *outbox.Snapshot, d factory, reg *enums.Registry, filter query.ShardFilter) (*render.Table, error) {
	if err := ses.Schema.CheckOutbox(ses.Target); err != nil {
		return nil, err
	}
	res, err := ses.Run(query.StuckShards(ses.Target, filter))
	if err != nil {
		return nil, err
	}
	ks, _, err := ses.Killswitches(d.statementTimeout)
	if err != nil {
		return nil, err
	}
	doc, err := report.Shards(reg, res, ks, d.now(), true)
	if err != nil {
		return nil, err
	}
	return doc[0].Table, nil
}

// shardTarget is the session's table narrowed to shard k's cell (the control silo).
func shardTarget(ses *outbox.Snapshot, k top.ShardRef) {
	if k.Cell != "" && ses.Target.Control() {
		ses.Target.Cell = k.Cell
	}
}

// Shard is inspect shard's document of k: its state card with its next steps, its
// categories and its first messages (the head, then the newest).
func (s *topSource) Shard(ctx context.Context, k top.ShardRef) (render.Doc, error) {
	env, err := s.d.inspectEnv()
	if err != nil {
		return nil, err
	}
	env.Printer = render.NewPrinter(&render.Streams{Out: io.Discard, Err: io.Discard}, render.FormatTable, true)
	key := query.ShardKey{Scope: query.Enum{Value: int(k.Scope), Name: env.Registry.ScopeName(int(k.Scope))}, ID: k.ID}
	var doc render.Doc
	err = s.with(ctx, false, func(ses *outbox.Snapshot) (err error) {
		shardTarget(ses, k)
		doc, err = env.ShardDoc(ses, key)
		return err
	})
	if err == nil && doc == nil {
		err = failuref("shard %s/%d is empty: it drained since the listing", key.Scope.Name, k.ID)
	}
	return doc, err
}

// Message is inspect message's card of message id (its payload in full: top's viewer
// redacts it).
func (s *topSource) Message(ctx context.Context, k top.ShardRef, id int64) (render.Doc, error) {
	env, err := s.d.inspectEnv()
	if err != nil {
		return nil, err
	}
	var doc render.Doc
	err = s.with(ctx, false, func(ses *outbox.Snapshot) error {
		shardTarget(ses, k)
		res, err := ses.Run(query.Message(ses.Target, id))
		if err != nil {
			return err
		}
		if len(res.Rows) == 0 {
			return failuref("no outbox row with id %d: delivered or removed since", id)
		}
		card, err := env.MessageCard(ses.Target, res)
		doc = render.Doc{{Name: "message", Title: fmt.Sprintf("Message %d", id), Card: card}}
		return err
	})
	return doc, err
}

// Run runs command (a printed outboxctl command line, extra appended) through Main, in
// process, on the invocation's --dsn and environment, as on a terminal width columns wide
// with colour off: a repair prints its plan and reads its confirmation from what the
// operator types in top, and checks the context (readonly, allow), writes its audit line
// and its archive, as it does in a shell. A line that is not an outboxctl command is
// refused without running anything.
func (s *topSource) Run(ctx context.Context, command string, width int, extra ...string) *top.Exec {
	return top.NewExec(func(in io.Reader, out io.Writer) int {
		words, err := textsafe.Words(command)
		if err != nil || len(words) < 2 || words[0] != "outboxctl" {
			err := usageErrorf("outboxctl doctor", "not an outboxctl command: %s", command)
			fmt.Fprintln(out, err)
			return exitCode(ctx, err)
		}
		args := append(words[1:], extra...)
		if s.a.g.DSN != "" {
			args = append([]string{"--dsn", s.a.g.DSN}, args...)
		}
		env := func(name string) string {
			if name == "NO_COLOR" {
				return "1"
			}
			return s.a.env(name)
		}
		return Main(ctx, args, &render.Streams{In: in, Out: out, Err: out, InTTY: true, OutTTY: true, ErrTTY: true, Width: width, Getenv: env})
	})
}

// Command is args as a printed next command on this invocation's context and schema.
func (s *topSource) Command(args ...string) string { return s.a.nextCommand(nil, args...) }

// Permits is the context's answer to command writing (checkWritable's rule): nil for a
// read, or a context that allows it.
func (s *topSource) Permits(command string) error {
	words, err := textsafe.Words(command)
	if err != nil || len(words) < 2 {
		return nil
	}
	if path := top.CommandPath(words[1:]); s.a.usedContext != nil && slices.Contains(config.WriteCommands, path) {
		return s.a.usedContext.Permits(path)
	}
	return nil
}
