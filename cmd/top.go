package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/top"
	"github.com/outboxctl/outboxctl/internal/top/source"
)

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
			c.Source.(*source.Source).Close(ctx)
		}
	}()
	opt := top.Options{Interval: o.Interval, FindingsEvery: o.FindingsEvery, Context: a.contextName,
		History: a.topHistory(o), ASCII: !render.UnicodeOK(a.env)}
	if o.Once {
		frame, failed := top.Frame(ctx, cs, opt, o.Width, o.Height)
		if err := a.factory().printer.Lines(strings.Split(frame, "\n")); err != nil {
			return err
		}
		return top.OnceOutcome(a.io.Err, len(cs), failed)
	}
	opt.Width, opt.Height = a.io.ScreenSize()
	return top.Run(ctx, cs, opt, a.io.In, a.io.Out)
}

// topContexts are top's contexts: the invocation's, or each context selected
// (--context a,b, --all-contexts) with its settings under the flags, each its own poller on
// its own connection. A context whose settings name no database, or do not resolve, is a
// source whose every read fails with why: it shows in the findings pane and stops no other.
func (a *app) topContexts(limit int) []top.Context {
	if len(a.fan) == 0 {
		return []top.Context{{Name: a.contextName, Source: source.New(a.topSource(limit, nil))}}
	}
	cs := make([]top.Context, 0, len(a.fan))
	for _, one := range a.fan {
		sub, broken := a.on(one, a.io)
		if broken == nil && sub.requireDatabase("outboxctl --context "+one.Name+" top") != nil {
			broken = fmt.Errorf("it names no database (set dsn, dsn-env or service in the context)")
		}
		cs = append(cs, top.Context{Name: one.Name, Source: source.New(sub.topSource(limit, broken))})
	}
	return cs
}

// topSource is what top's source of a's context takes (source.Env): a's settings, the
// shards filter of its / words, and the CLI to run a printed command through.
func (a *app) topSource(limit int, broken error) source.Env {
	d := a.factory()
	return source.Env{Target: d.db.target, Config: a.dbConfig, StatementTimeout: a.g.StatementTimeout, Deployment: a.deployment(),
		Registry: d.registry, Now: d.clock.now, Next: d.suggest.next, SchemaName: d.db.schema, LedgerPath: ledgerPath(),
		ShardFilter: func(f top.Filter) (query.ShardFilter, error) {
			o := shardsOptions{selectorOptions: selectorOptions{Stuck: true, AtCap: f.AtCap, Scope: f.Scope, Category: f.Category, Limit: limit}}
			return a.shardFilter(o, d.clock.now())
		},
		Exec: a.topExec, Context: a.usedContext, Broken: broken}
}

// topExec runs command (a printed outboxctl command line, extra appended) through Main, in
// process, on the invocation's --dsn and environment, as on a terminal width columns wide
// with colour off: a repair prints its plan and reads its confirmation from what the
// operator types in top, and checks the context (readonly, allow), writes its audit line
// and its archive, as it does in a shell. A line that is not an outboxctl command is
// refused without running anything.
func (a *app) topExec(ctx context.Context, command string, width int, extra ...string) *top.Exec {
	return top.NewExec(func(in io.Reader, out io.Writer) int {
		args, ok := top.ExecArgs(command, a.g.DSN, extra)
		if !ok {
			err := usageErrorf("outboxctl doctor", "not an outboxctl command: %s", command)
			fmt.Fprintln(out, err)
			return exitCode(ctx, err)
		}
		return Main(ctx, args, &render.Streams{In: in, Out: out, Err: out, InTTY: true, OutTTY: true, ErrTTY: true, Width: width, Getenv: top.ExecEnv(a.env)})
	})
}
