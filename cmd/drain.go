package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/live"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
)

type drainOptions struct {
	shardArgs
	Handler          string
	HandlerHeaders   []string
	HandlerTimeout   time.Duration
	Mode             string
	Yes, DryRun      bool
	MaxMessages      int
	Rate             float64
	Follow           bool
	IgnoreKillswitch bool
	Archive          string
	Reason           string
	CoalescedIDs     bool
	// Sel, Parallel and FailFast are drain SELECTORS --parallel N (drain_bulk.go).
	Sel      selectorOptions
	Parallel int
	FailFast bool
}

// Validate checks the shard id and the flags before anything connects.
func (o *drainOptions) Validate() error {
	if err := o.validate("outboxctl drain"); err != nil {
		return err
	}
	return tried(o.flags().Check())
}

// drainLong is drain's help: the handlers, what is delivered, the plan, interrupts, many shards.
var drainLong = strings.TrimSpace(`
Drain one shard like Sentry's task path: claim it (lock its lowest row without waiting and
push its schedule forward, so Sentry's own workers back off meanwhile), then message by
message deliver the newest row of the head's coalesce group through --handler and delete
the group up to that row. A failed delivery leaves that message and everything after it in
place, the shard in backoff, and stops (head-of-line, like Sentry); everything delivered
before it stays deleted.

Handlers (Sentry's contract is at-least-once: make them idempotent):
  exec:COMMAND   runs COMMAND (through sh -c, in its own process group) per message with a
                 JSON document on stdin; exit 0 means delivered, stderr becomes the error
  stream:COMMAND starts COMMAND once and writes one document per line to its stdin; it
                 answers one line per document, {"id": ID, "token": TOKEN, "ok": true}
                 when delivered, TOKEN echoed from the document (stream protocol 2;
                 docs/handlers: the protocol, a handler that runs Sentry's receivers)
  http(s)://URL  POSTs the document; a 2xx answer means delivered; --handler-header adds
                 headers, their values read from the environment ('Authorization: Bearer $TOKEN')
  discard        deletes without delivering (skipping a poison message); every row is
                 archived first, with its schedule from before the drain

The handler is checked before the shard is claimed (the command exists; the receiver
accepts a connection). If the first delivery fails because the handler itself is
unavailable (exit 126/127, connection refused, DNS or TLS failure), the shard's schedule is
put back exactly as it was, so a typo never escalates its backoff.

Which groups are delivered: those with a row at or below the shard's highest id at planning
time (--follow: every row, including rows inserted while draining). Which row of a group:
always its newest, as in Sentry, even when it arrived after planning.

The plan is shown first and needs confirmation (--yes without a terminal); --dry-run prints
it and stops. A kill-switched shard is refused unless --ignore-killswitch. It refuses a
connection inside a transaction block and a read replica. Ctrl-C or SIGTERM finishes the
message being delivered (saying so, with how long it may still take), commits what was
delivered, prints the summary and exits 130; a second one abandons that delivery (the
handler is stopped, its process group killed, and nothing of the message is deleted),
commits what was delivered before it, prints the summary and exits 130.
--rate waits happen outside any transaction. --print-sql prints a psql script for a DBA
that reads only, unless run again with -v delivered=ID.

Many shards: drain SELECTORS --parallel N (the selector flags of shards: --stuck, --at-cap,
--scope, --category, --head-category, --added-after, --added-before, --min-depth,
--shards-from, --limit) drains every selected shard, N at once, each with the semantics
above on its own connection and its own handler (a stream: handler runs one co-process per
worker). The plan comes first (more than 100 shards on a terminal need their count typed
back). A shard another drainer holds is skipped as "being drained", a kill-switched one is
skipped (unless --ignore-killswitch), and a failing shard stops at its message while the
others carry on (--fail-fast stops them all). Ctrl-C lets every worker finish its delivery
in flight, then prints a row per shard and exits 130; the same command again continues.
Exit 6 when some shards failed and others were drained, 1 when every drained shard failed.

What --parallel N costs: N database connections at once (one per worker; one more reads
the plan and what is left), out of PostgreSQL's max_connections (100 by default), which
Sentry's own processes share; N handler processes (a stream: handler is one co-process per
worker: --parallel 8 starts the receivers' runtime 8 times); and N times one drain's
delivery rate against the receivers (--rate limits each worker). Meanwhile Sentry's own
workers skip the shards being drained: the claim pushed each one's schedule forward, so
their scheduler does not pick it, and a worker that tries takes its head lock with NOWAIT,
finds it held and moves on to the next shard. Every other shard they drain as usual.
--handler discard archives each shard's rows in an operation of its own, all in one file.`)

func newDrainCmd(a *app) *cobra.Command {
	var o drainOptions
	c := &cobra.Command{
		Use:   "drain SCOPE ID | drain SELECTORS --parallel N",
		Short: "Drain shards by hand, the way Sentry's workers do, delivering through a handler",
		Long:  drainLong,
		Example: examples(`
  outboxctl drain organization 42 --dry-run
  outboxctl drain organization 42 --handler 'exec:./replicate.sh' --dry-run
  outboxctl drain organization 42 --handler https://relay.internal/outbox --handler-header 'Authorization: Bearer $RELAY_TOKEN' --reason 'INC-7' --yes
  outboxctl drain organization 42 --handler 'stream:sentry exec docs/handlers/sentry_deliver.py' --reason 'INC-7' --yes
  outboxctl drain organization 42 --handler discard --max-messages 1 --reason 'INC-7: skip poison' --yes
  outboxctl drain organization 42 --print-sql > drain-42.sql && psql -f drain-42.sql
  outboxctl drain --stuck --parallel 4 --handler 'stream:sentry exec docs/handlers/sentry_deliver.py' --reason 'INC-7' --yes`),
		Args:              o.args,
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.runDrainSelected(c, &o)
			}
			if err := o.noBulkFlags(a, c); err != nil {
				return err
			}
			return a.runOnShard(&o.shardArgs, o.Validate, func(ctx context.Context, t query.Target, k query.ShardKey) error {
				return runDrain(ctx, a.factory(), o, t, k)
			})(c, args)
		},
	}
	addBulkDrainFlags(a, c, &o)
	addDrainFlags(c, &o)
	return c
}

// addDrainFlags registers the flags of every drain, of one shard or of selected ones.
func addDrainFlags(c *cobra.Command, o *drainOptions) {
	f := c.Flags()
	f.StringVar(&o.Handler, "handler", "", "where messages go: exec:COMMAND, stream:COMMAND, http(s)://URL or discard")
	f.StringArrayVar(&o.HandlerHeaders, "handler-header", nil, "extra HTTP header 'Name: value'; $VARS in the value come from the environment (repeatable; values never printed)")
	addDurationFlag(f, &o.HandlerTimeout, "handler-timeout", 30*time.Second, "30s", "give up on one delivery after this long")
	addEnumFlag(c, f, &o.Mode, string(drain.ModeBatch), enumFlag{name: "mode", help: "batch (several messages per transaction, fast) or exact (Sentry's statements one for one)",
		example: "--mode batch", words: []string{string(drain.ModeBatch), string(drain.ModeExact)}})
	addYesFlag(f, &o.Yes)
	addDryRunFlag(f, &o.DryRun)
	f.IntVar(&o.MaxMessages, "max-messages", 0, "stop after this many deliveries (0: all)")
	f.Float64Var(&o.Rate, "rate", 0, "at most this many messages per second (0: no limit)")
	f.BoolVar(&o.Follow, "follow", false, "also drain rows inserted while draining")
	f.BoolVar(&o.IgnoreKillswitch, "ignore-killswitch", false, "drain a shard its kill switch disables")
	addArchiveFlag(f, &o.Archive)
	addReasonFlag(f, &o.Reason)
	f.BoolVar(&o.CoalescedIDs, "coalesced-ids", false, "list in each handler document the first 100 ids its delivery stands for (reads every row of the group)")
}

// runDrain drains shard k of t through o's handler after the plan is confirmed (--dry-run:
// the plan and the handler check only; --print-sql: the psql script): repair.Drain on the
// runner. The Try: lines name the shard, as the plan's prompt always has.
func runDrain(ctx context.Context, d factory, o drainOptions, t query.Target, k query.ShardKey) error {
	if err := requireCell(t, d.suggest.again("outboxctl drain", "--cell", "us")); err != nil {
		return err
	}
	command := "outboxctl drain " + o.Scope + " " + o.ID
	if !d.sql.printSQL {
		if err := d.db.requireDB("outboxctl drain"); err != nil {
			return err
		}
		if err := o.flags().NeedHandler(command + " --dry-run"); err != nil {
			return tried(err)
		}
	}
	return runMutation(ctx, d, command, &repair.Drain{Env: d.repairEnv(), DrainRun: o.run(ctx, d), Target: t, Shard: k}, o.Yes)
}

// flags are the drain's flags, as internal/repair takes them.
func (o drainOptions) flags() repair.DrainFlags {
	return repair.DrainFlags{Handler: o.Handler, HandlerHeaders: o.HandlerHeaders, HandlerTimeout: o.HandlerTimeout,
		Mode: o.Mode, DryRun: o.DryRun, MaxMessages: o.MaxMessages, Rate: o.Rate, Follow: o.Follow, IgnoreKillswitch: o.IgnoreKillswitch,
		Archive: o.Archive, Reason: o.Reason, CoalescedIDs: o.CoalescedIDs}
}

// run is what a drain takes from the flags and the invocation.
func (o drainOptions) run(ctx context.Context, d factory) repair.DrainRun {
	return repair.DrainRun{Flags: o.flags(), Getenv: d.getenv, Registry: d.registry, User: osUser(), Abandon: abandonContext(ctx), Stderr: d.term.stderr, ErrTTY: d.term.errTTY}
}

// workProgress is a live progress line for long work (live.Work): done/total, rate and ETA
// on a terminal's stderr, nothing on a pipe.
type workProgress = live.Work

// progress starts a progress line of total units (approx marks an estimate "~").
func (a *app) progress(ctx context.Context, label string, total int64, approx bool) *workProgress {
	return live.StartWork(ctx, a.io.Err, a.io.ErrTTY, label, total, approx)
}
