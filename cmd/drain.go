package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/live"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
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
	if o.MaxMessages < 0 {
		return usageErrorf("", "`--max-messages` must not be negative (0 means all)")
	}
	if math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate < 0 {
		return usageErrorf("outboxctl drain … --rate 50", "`--rate` must be a finite number of messages per second, 0 for no limit (got %v)", o.Rate)
	}
	if o.HandlerTimeout <= 0 {
		return usageErrorf("outboxctl drain … --handler-timeout 30s", "`--handler-timeout` must be positive")
	}
	return nil
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
// the plan and the handler check only; --print-sql: the psql script).
func runDrain(ctx context.Context, d factory, o drainOptions, t query.Target, k query.ShardKey) error {
	if err := requireCell(t, d.again("outboxctl drain", "--cell", "us")); err != nil {
		return err
	}
	if d.printSQL {
		script, err := query.DrainScript(t, k, d.preamble("drain"))
		if err != nil {
			return err
		}
		return d.printer.SQL(script)
	}
	if err := d.requireDB("outboxctl drain"); err != nil {
		return err
	}
	handler, err := drainHandler(o, d.getenv, d.stderr)
	if err != nil {
		return err
	}
	if c, ok := handler.(io.Closer); ok {
		defer c.Close() // a stream: co-process ends on every exit path
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	conn, err := d.connect(ctx, "drain")
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }()
	if err := drain.Guard(ctx, conn); err != nil {
		if errors.Is(err, drain.ErrInTransaction) {
			return usageErrorf("", "%s", err.Error())
		}
		return err
	}
	t, plan, err := readDrainPlan(ctx, d, conn, o, t, k, reg)
	if err != nil {
		return err
	}
	command := "outboxctl drain " + o.Scope + " " + o.ID
	switch {
	case plan.Empty:
		d.printer.Notef("shard %s/%d is empty in %s: nothing to drain", k.Scope.Name, k.ID, t.Describe())
		return nil
	case plan.Disabled() && !o.IgnoreKillswitch:
		printPlan(d.stderr, plan.Lines())
		return usageErrorf(d.again(command, "--ignore-killswitch"),
			"shard %s/%d is kill-switched: Sentry itself only trims its head coalesce group (older duplicates deleted undelivered) each time its backoff (2 s doubling to 1 h) comes round, and delivers nothing; pass --ignore-killswitch to deliver it anyway, or remove it from the kill switch first", k.Scope.Name, k.ID)
	case o.DryRun:
		printPlan(d.stderr, plan.Lines())
		return dryRunPreflight(ctx, d.printer, handler)
	}
	if err := d.confirm(command, repair.Plan{Lines: plan.Lines()}, o.Yes); err != nil {
		return err
	}
	return drainShard(ctx, d, conn, o, t, plan, k, reg, handler)
}

// drainHandler parses --handler (none is needed for --dry-run).
// A handler's stderr (an exec command's warnings, a stream co-process's relayed lines) goes
// to the command's stderr, shared with its progress line and notes.
func drainHandler(o drainOptions, getenv func(string) string, stderr io.Writer) (drain.Handler, error) {
	if o.DryRun && o.Handler == "" {
		return nil, nil // a dry run without a handler: the plan only
	}
	if o.Handler == "" {
		return nil, usageErrorf("outboxctl drain "+o.Scope+" "+o.ID+" --dry-run",
			"`--handler` is required: exec:COMMAND, stream:COMMAND, http(s)://URL or discard (or --dry-run to see the plan)")
	}
	handler, err := drain.ParseHandler(drain.HandlerConfig{Spec: o.Handler, Timeout: o.HandlerTimeout, Headers: o.HandlerHeaders, Getenv: getenv, Stderr: stderr})
	if err != nil {
		return nil, usageErrorf("", "%s", err.Error())
	}
	return handler, nil
}

// preflight checks handler (when it can be checked) before anything is claimed: a typo
// must not push the shard's backoff, and a clean dry run means the handler can be reached.
// A failure is a usage error ending in after; checked says a check ran.
func preflight(ctx context.Context, handler drain.Handler, after string) (checked bool, err error) {
	p, ok := handler.(drain.Preflighter)
	if !ok {
		return false, nil
	}
	if err := p.Preflight(ctx); err != nil {
		return true, usageErrorf("", "%s%s", err.Error(), after)
	}
	return true, nil
}

// dryRunPreflight checks a dry run's handler as a real run would before its claim.
func dryRunPreflight(ctx context.Context, printer *render.Printer, handler drain.Handler) error {
	checked, err := preflight(ctx, handler, " (dry run: nothing was claimed or changed)")
	if checked && err == nil {
		printer.Notef("handler check: ok (the command resolves, or the receiver accepts a connection)")
	}
	return err
}

// drainShard checks the handler, claims the shard, drains it and prints the summary.
func drainShard(ctx context.Context, d factory, conn *db.Conn, o drainOptions, t query.Target, plan drain.Plan, k query.ShardKey, reg *enums.Registry, handler drain.Handler) error {
	var err error
	if _, err := preflight(ctx, handler, "; nothing was claimed or changed"); err != nil {
		return err
	}
	var archive *drain.Operation
	if o.Handler == "discard" {
		meta := archiveMeta(t, k, plan.PayloadType, drain.CommandDrainDiscard, o.Reason)
		d.repairEnv().SettleArchive(ctx, conn, o.Archive, t)
		if archive, err = d.openArchive(o.Archive, meta); err != nil {
			return err
		}
		defer archive.Close()
	}
	start := d.now()
	line := claimLine(ctx, d, k, plan)
	claimed, err := drain.Claim(ctx, conn, t, k)
	line.end(err)
	if err != nil {
		if errors.Is(err, drain.ErrShardLocked) {
			return failuref("%s", err.Error())
		}
		return db.Classify(err, "drain-claim")
	}
	total := plan.Messages
	if plan.MessagesAtLeast {
		total = 0 // a lower bound is no total to count towards: unknown
	}
	progress := d.progress(ctx, "delivered", total, true)
	res, runErr := drain.Run(ctx, conn, drain.Options{
		Target: t, Shard: k, Mode: drain.Mode(o.Mode), Handler: handler, Discard: o.Handler == "discard",
		Watermark: plan.Watermark, MaxMessages: o.MaxMessages, Rate: o.Rate, HandlerTimeout: o.HandlerTimeout,
		Archive: archive, Warnf: d.printer.Warnf, Claimed: claimed, Command: "drain", Reason: o.Reason, CoalescedIDs: o.CoalescedIDs,
		CategoryName: reg.CategoryName, ScopeName: reg.ScopeName, OnDelivered: func(drain.Message) { progress.Add(1) },
		Abandon: abandonContext(ctx), OnWaiting: waitingNote(d.stderr, o.HandlerTimeout),
		Reconnect: func(ctx context.Context) (*db.Conn, error) { return d.connect(ctx, "drain") },
	})
	progress.Done()
	restored, uerr := drain.UnclaimIfUnavailable(ctx, conn, t, k, claimed, res)
	if uerr != nil {
		d.printer.Notef("could not put the shard's schedule back: %v", uerr)
	}
	return drainSummary(ctx, d, o, t, k, res, runErr, restored, start)
}

// waitingNote is what the first Ctrl-C during a delivery prints: what the drain waits for,
// for how long at most, and how to stop waiting.
func waitingNote(w io.Writer, timeout time.Duration) func(drain.Message, time.Duration) {
	return func(m drain.Message, left time.Duration) {
		fmt.Fprintf(w, "interrupted: waiting for the handler to finish message %d (%s, object %d), at most %s more (--handler-timeout %s), then committing and stopping; press Ctrl-C again or send SIGTERM to abandon it: the handler is stopped and nothing of the message is deleted\n",
			m.ID, render.Escape(m.CategoryName), m.Object, max(left, 0).Round(time.Second), timeout)
	}
}

// readDrainPlan reads, in one read-only snapshot on the drain's connection, what the plan shows (drain.ReadPlan), with
// the kill switch's verdict, and returns the target as the catalog adapted it.
func readDrainPlan(ctx context.Context, d factory, conn *db.Conn, o drainOptions, t query.Target, k query.ShardKey, reg *enums.Registry) (query.Target, drain.Plan, error) {
	var p drain.Plan
	var unread string
	err := d.session(ctx, conn, func(s *session) error {
		t = s.target
		sw, err := killswitch.ReadSwitches(s.ctx, s.tx, s.target, s.schema)
		if err != nil {
			return db.Classify(err, "reading the kill switches")
		}
		v := sw.Verdict(k.Scope, k.ID)
		unread = v.Warning
		if p, err = drain.ReadPlan(s.ctx, s.tx, s.target, k, o.request(), v.Disabled, reg.CategoryName); err != nil {
			return err
		}
		p.PayloadType = s.schema.Table(s.target.TableName()).PayloadType
		return nil
	})
	if err == nil && unread != "" {
		d.printer.Warnf("%s", unread)
	}
	return t, p, err
}

// request is what the plan describes of the flags.
func (o drainOptions) request() drain.Request {
	names := make([]string, 0, len(o.HandlerHeaders))
	for _, h := range o.HandlerHeaders {
		n, _, _ := strings.Cut(h, ":")
		names = append(names, strings.TrimSpace(n))
	}
	return drain.Request{Mode: drain.Mode(o.Mode), Handler: o.Handler, Reason: o.Reason, Follow: o.Follow,
		HeaderNames: names, MaxMessages: o.MaxMessages, Rate: o.Rate}
}

// openArchive opens the archive operation a discard writes to, and says where it is.
func (d factory) openArchive(path string, meta drain.OperationMeta) (*drain.Operation, error) {
	op, err := drain.OpenArchive(path, meta, d.now())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(d.stderr, "archiving to %s (operation %s)\n", render.Escape(op.Path), render.Escape(op.Meta.ID))
	return op, nil
}

// workProgress is a live progress line for long work (drain, compact, restore, demo seed):
// done/total, percentage, rate and ETA on a terminal's stderr, redrawn several times a second
// (so it moves while a statement runs), then a one-line summary; on a pipe nothing at all.
type workProgress struct {
	*live.Progress
	stop func()
}

// progress starts a progress line of total units (approx marks an estimate "~").
func (a *app) progress(ctx context.Context, label string, total int64, approx bool) *workProgress {
	p := live.NewProgress(a.io.Err, a.io.ErrTTY, time.Now, label, total, approx)
	p.Tick() // draw at once: the first unit may take a while
	return &workProgress{Progress: p, stop: p.Run(ctx)}
}

// claimProgress is the line drawn while Sentry's claim runs: one UPDATE that rewrites the
// schedule of every row of the shard (tens of seconds on a shard of millions of rows), with
// nothing to count, so it shows the elapsed time from the first instant.
type claimProgress struct {
	*live.Progress
	stop func()
	tty  bool
	err  io.Writer
}

// claimLine starts the claim's line on a terminal's stderr (nothing on a pipe).
func claimLine(ctx context.Context, d factory, k query.ShardKey, plan drain.Plan) *claimProgress {
	label := fmt.Sprintf("drain: claiming %s/%d (one UPDATE of its %s rows)", k.Scope.Name, k.ID, drain.PlanCount(plan.Rows, plan.RowsAtLeast, "~"))
	p := live.NewElapsed(d.stderr, d.errTTY, time.Now, label, 0)
	p.Tick() // draw at once: the claim is one statement
	return &claimProgress{Progress: p, stop: p.Run(ctx), tty: d.errTTY, err: d.stderr}
}

// end stops the redraws: a summary line when the claim succeeded, else the line left as it
// was with the error printed below it.
func (c *claimProgress) end(err error) {
	c.stop()
	if err == nil {
		c.Finish()
	} else if c.tty {
		fmt.Fprintln(c.err)
	}
}

// Done stops the redraws and replaces the line with its summary.
func (w *workProgress) Done() {
	w.stop()
	w.Finish()
}

// drainSummary prints what the drain did and what is left, from a fresh connection when the
// drain's own connection died, and maps the outcome to the exit code.
func drainSummary(ctx context.Context, d factory, o drainOptions, t query.Target, k query.ShardKey, res drain.Result, runErr error, restored bool, start time.Time) error {
	after, afterErr := d.shardAfter(context.WithoutCancel(ctx), t, k)
	summary := drain.Summarize(k, res, after, restored, d.now().Sub(start))
	fields := map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "mode": o.Mode, "handler": drain.HandlerName(o.Handler),
		"delivered": res.Delivered, "deleted": auditDeleted(res), "left": after.Left, "reason": o.Reason}
	if res.InDoubt != nil {
		fields = repair.WithInDoubt(fields, res.InDoubt.Outcome)
	}
	d.audit("drain", fields)
	summary.Next = drainNext(d, t, k, after)
	card := summary.Card()
	if err := d.printer.Print(render.Doc{{Name: "drain", Title: "Drain summary", Card: card}}); err != nil {
		return err
	}
	switch {
	case errors.Is(runErr, context.Canceled) && res.Abandoned != nil:
		return interruptedf("interrupted after %d delivered message(s): the delivery of message %d was abandoned (its handler stopped); it stays at the shard's head, nothing of it deleted, and %s",
			res.Delivered, res.Abandoned.ID, scheduleAfter(after))
	case errors.Is(runErr, context.Canceled):
		return interruptedf("interrupted after %d delivered message(s); %s", res.Delivered, scheduleAfter(after))
	case res.InDoubt != nil:
		return &cmdError{means: interruptedOr(ctx, meansRuntime), msg: drainInDoubt(runErr, res, k)}
	case runErr != nil && res.Uncommitted > 0:
		return &cmdError{means: interruptedOr(ctx, meansRuntime), msg: fmt.Sprintf("%v; %d delivered message(s) were not committed and will be delivered again", db.Classify(runErr, "drain"), res.Uncommitted)}
	case runErr != nil:
		return db.Classify(runErr, "drain")
	case res.Contended:
		return failuref("stopped after %d delivered message(s): %v", res.Delivered, drain.ErrShardLocked)
	case res.Failed != nil:
		return failuref("delivery of message %d (%s, object %d) failed: %v; %s",
			res.Failed.ID, res.Failed.CategoryName, res.Failed.Object, res.FailedErr, failedSchedule(restored))
	case afterErr != nil:
		return unreadAfter("drain", fmt.Sprintf("%d message(s) delivered, %d row(s) deleted", res.Delivered, res.Deleted), afterErr)
	}
	return nil
}

// scheduleAfter says what an interrupted drain left of the shard's schedule, as the
// summary's delay shows it: due now, empty, or a backoff still to wait out.
func scheduleAfter(after drain.After) string {
	switch after.Delay {
	case "due now":
		return "the shard is due now"
	case "none (empty)":
		return "the shard is empty"
	case "unknown":
		return "the shard's schedule after it could not be read"
	}
	return fmt.Sprintf("the shard keeps its backoff (next attempt in %v)", after.Delay)
}

// drainNext is a drain summary's next step: the shard again while rows are left, else the
// doctor's stuck check (what else is blocked).
func drainNext(d factory, t query.Target, k query.ShardKey, after drain.After) render.Commands {
	if n, ok := after.Left.(int64); ok && n == 0 {
		return render.Commands{d.next(nil, "doctor", "--check", "stuck")}
	}
	return render.Commands{d.next(&t, "inspect", "shard", k.Scope.ScopeWord(), fmt.Sprint(k.ID))}
}

// unreadAfter is the error of a change that committed but whose resulting state could not
// be read: the summary said "unknown", and the exit is 1, not a success that reports a state
// nobody read.
func unreadAfter(command, done string, err error) error {
	return failuref("%s committed (%s), but the shard's state after it could not be read: %v",
		command, done, oneLine(db.RedactDSN(err.Error())))
}

// interruptedOr is the interrupt once Ctrl-C or SIGTERM came, whatever failed after it (a
// commit the signal let finish, stalled until its deadline), else m.
func interruptedOr(ctx context.Context, m meaning) meaning {
	if errors.Is(ctx.Err(), context.Canceled) {
		return meansInterrupted
	}
	return m
}

func failedSchedule(restored bool) string {
	if restored {
		return "the shard's schedule is back as it was before the claim"
	}
	return "the shard stays in backoff with the message at its head"
}

// shardAfter reads the shard's depth and next attempt on a fresh connection: the drain's
// own may be the one that died. A failed read is "unknown" in the summary and its error.
func (d factory) shardAfter(ctx context.Context, t query.Target, k query.ShardKey) (drain.After, error) {
	conn, err := d.connect(ctx, "drain")
	if err != nil {
		return drain.UnknownAfter(), err
	}
	defer conn.Close(ctx)
	depth, next, err := drain.ShardState(ctx, conn, t, k)
	if err != nil {
		return drain.UnknownAfter(), err
	}
	return drain.AfterState(depth, next, time.Now()), nil
}

// auditDeleted is the audit line's deleted: the count, or "in doubt" while a COMMIT that
// got no answer could not be settled.
func auditDeleted(res drain.Result) any {
	if res.InDoubt != nil && res.InDoubt.Outcome == drain.Unsettled {
		return "in doubt"
	}
	return res.Deleted
}

// drainInDoubt is the error of a drain whose COMMIT got no answer, saying what its settle
// found.
func drainInDoubt(runErr error, res drain.Result, k query.ShardKey) string {
	d := res.InDoubt
	switch d.Outcome {
	case drain.Committed:
		return db.SettledMessage(runErr, fmt.Sprintf("committed, %d message(s) delivered and %d row(s) deleted in it; the drain stopped there", d.Messages, d.Deleted+d.Trimmed))
	case drain.NotCommitted:
		return db.SettledMessage(runErr, fmt.Sprintf("not committed, %d delivered message(s) are still in the table and will be delivered again", res.Uncommitted))
	}
	return fmt.Sprintf("%v; it could not be settled (%v): %d message(s) may or may not have been deleted; see what is left with outboxctl inspect shard %s %d",
		runErr, oneLine(db.RedactDSN(d.SettleErr.Error())), d.Messages, k.Scope.Name, k.ID)
}
