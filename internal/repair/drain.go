package repair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/live"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// DrainFlags are what a drain's flags ask, of one shard or of selected ones.
type DrainFlags struct {
	Handler          string
	HandlerHeaders   []string
	HandlerTimeout   time.Duration
	Mode             string
	DryRun           bool
	MaxMessages      int
	Rate             float64
	Follow           bool
	IgnoreKillswitch bool
	Archive          string
	Reason           string
	CoalescedIDs     bool
}

// request is what the plan describes of the flags (the headers by name: their values may
// be secrets).
func (f DrainFlags) request() drain.Request {
	names := make([]string, 0, len(f.HandlerHeaders))
	for _, h := range f.HandlerHeaders {
		n, _, _ := strings.Cut(h, ":")
		names = append(names, strings.TrimSpace(n))
	}
	return drain.Request{Mode: drain.Mode(f.Mode), Handler: f.Handler, Reason: f.Reason, Follow: f.Follow,
		HeaderNames: names, MaxMessages: f.MaxMessages, Rate: f.Rate}
}

// discard says the rows are archived and deleted, never delivered.
func (f DrainFlags) discard() bool { return f.Handler == "discard" }

// DrainRun is what a drain takes from its invocation beyond Env: the flags, the handler's
// environment, the registry, the context a second signal cancels, and the stderr its notes
// and live lines go to.
type DrainRun struct {
	Flags DrainFlags
	// Getenv expands a --handler-header's $VARS; a handler's own stderr goes to Stderr.
	Getenv   func(string) string
	Registry func() (*enums.Registry, error)
	User     string // the archive's user
	// Abandon is cancelled by a second signal: the delivery in flight is abandoned (its
	// handler stopped, nothing of its message deleted).
	Abandon context.Context
	Stderr  io.Writer
	ErrTTY  bool // a live claim line shows
}

// handler parses --handler (none for a dry run without one: the plan only).
func (r DrainRun) handler() (drain.Handler, error) {
	if r.Flags.DryRun && r.Flags.Handler == "" {
		return nil, nil
	}
	h, err := drain.ParseHandler(drain.HandlerConfig{Spec: r.Flags.Handler, Timeout: r.Flags.HandlerTimeout,
		Headers: r.Flags.HandlerHeaders, Getenv: r.Getenv, Stderr: r.Stderr})
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	return h, nil
}

// options are the drain loop's options every drain shares.
// A first Ctrl-C's note goes to notes; warnings to warnf.
func (r DrainRun) options(t query.Target, reg *enums.Registry, notes io.Writer, warnf func(string, ...any)) drain.Options {
	f := r.Flags
	return drain.Options{Target: t, Mode: drain.Mode(f.Mode), MaxMessages: f.MaxMessages, Rate: f.Rate, HandlerTimeout: f.HandlerTimeout,
		Discard: f.discard(), Warnf: warnf, Command: "drain", Reason: f.Reason, CoalescedIDs: f.CoalescedIDs,
		CategoryName: reg.CategoryName, ScopeName: reg.ScopeName, Abandon: r.Abandon, OnWaiting: waitingNote(notes, f.HandlerTimeout)}
}

// Drain is drain SCOPE ID: the shard claimed as Sentry's task path claims it, then message
// by message delivered through the handler and deleted (internal/drain's loop). The
// handler lives for the whole run (Hold); a kill-switched shard is refused once its plan
// is shown; --dry-run shows the plan and checks the handler (Plan.Stop).
type Drain struct {
	Env
	DrainRun
	Target query.Target
	Shard  query.ShardKey

	h   drain.Handler
	reg *enums.Registry
}

// drainPlan is what Drain's Plan read for its Apply.
type drainPlan struct {
	t    query.Target
	plan drain.Plan
}

// Hold parses the handler (a stream: co-process starts here) and reads the registry; end
// closes the handler on every path out of the run.
func (m *Drain) Hold(context.Context) (func(), error) {
	h, err := m.handler()
	if err != nil {
		return nil, err
	}
	end := func() { closeHandler(h) }
	if m.reg, err = m.Registry(); err != nil {
		end()
		return nil, err
	}
	m.h = h
	return end, nil
}

// Script is the drain's psql script: it reads only, unless run again with -v delivered=ID.
func (m *Drain) Script(preamble []string) ([]string, error) {
	text, err := query.DrainScript(m.Target, m.Shard, preamble)
	return []string{text}, err
}

// Plan refuses a connection inside a transaction block, then reads in one snapshot the
// kill switch's verdict and what the drain would deliver.
func (m *Drain) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	if err := guard(ctx, conn); err != nil {
		return Plan{}, err
	}
	var d drainPlan
	var unread string
	k := m.Shard
	err := outbox.On(ctx, conn, m.Target, m.snapshotOptions(), func(s *outbox.Snapshot) error {
		d.t = s.Target
		sw, err := killswitch.ReadSwitches(s.Context(), s.Tx(), s.Target, s.Schema)
		if err != nil {
			return db.Classify(err, "reading the kill switches")
		}
		v := sw.Verdict(k.Scope, k.ID)
		unread = v.Warning
		if d.plan, err = drain.ReadPlan(s.Context(), s.Tx(), s.Target, k, m.Flags.request(), v.Disabled, m.reg.CategoryName); err != nil {
			return err
		}
		d.plan.PayloadType = s.Schema.Table(s.Target.TableName()).PayloadType
		return nil
	})
	if err != nil {
		return Plan{}, err
	}
	if unread != "" {
		m.Warnf("%s", unread)
	}
	switch {
	case d.plan.Empty:
		return Plan{Nothing: fmt.Sprintf("shard %s/%d is empty in %s: nothing to drain", k.Scope.Name, k.ID, d.t.Describe())}, nil
	case d.plan.Disabled() && !m.Flags.IgnoreKillswitch:
		return Plan{Lines: d.plan.Lines(), Refused: &Refusal{Add: []string{"--ignore-killswitch"}, Msg: fmt.Sprintf(
			"shard %s/%d is kill-switched: Sentry itself only trims its head coalesce group (older duplicates deleted undelivered) each time its backoff (2 s doubling to 1 h) comes round, and delivers nothing; pass --ignore-killswitch to deliver it anyway, or remove it from the kill switch first", k.Scope.Name, k.ID)}}, nil
	case m.Flags.DryRun:
		return Plan{Lines: d.plan.Lines(), Stop: func(ctx context.Context) error { return dryRunPreflight(ctx, m.Notef, m.h) }}, nil
	}
	return Plan{Lines: d.plan.Lines(), detail: d}, nil
}

// snapshotOptions is the plan's snapshot: --deployment applied, the target an outbox table.
func (e Env) snapshotOptions() outbox.Options {
	return outbox.Options{Deployment: e.Deployment, Check: outbox.CheckOutbox}
}

// Apply checks the handler, claims the shard, drains it, and summarises what it did and
// what is left.
func (m *Drain) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d, k, f := p.detail.(drainPlan), m.Shard, m.Flags
	t := d.t
	if _, err := preflight(ctx, m.h, "; nothing was claimed or changed"); err != nil {
		return Summary{}, err
	}
	var archive *drain.Operation
	if f.discard() {
		m.SettleArchive(ctx, conn, f.Archive, t)
		var err error
		if archive, err = m.openArchive(ArchiveMeta(t, k, d.plan.PayloadType, drain.CommandDrainDiscard, f.Reason, m.User)); err != nil {
			return Summary{}, err
		}
		defer archive.Close()
	}
	start := m.Now()
	line := m.claimLine(ctx, d.plan)
	claimed, err := drain.Claim(ctx, conn, t, k)
	line.end(err)
	if err != nil {
		if errors.Is(err, drain.ErrShardLocked) {
			return Summary{}, failuref("%s", err.Error())
		}
		return Summary{}, db.Classify(err, "drain-claim")
	}
	total := d.plan.Messages
	if d.plan.MessagesAtLeast {
		total = 0 // a lower bound is no total to count towards: unknown
	}
	progress := m.progress(ctx, "delivered", total)
	o := m.options(t, m.reg, m.Stderr, m.Warnf)
	o.Shard, o.Handler, o.Watermark, o.Archive, o.Claimed = k, m.h, d.plan.Watermark, archive, claimed
	o.OnDelivered = func(drain.Message) { progress.add() }
	o.Reconnect = func(ctx context.Context) (*db.Conn, error) { return m.Connect(ctx, "drain") }
	res, runErr := drain.Run(ctx, conn, o)
	progress.Done()
	restored, uerr := drain.UnclaimIfUnavailable(ctx, conn, t, k, claimed, res)
	if uerr != nil {
		m.Notef("could not put the shard's schedule back: %v", uerr)
	}
	return m.summary(ctx, t, res, runErr, restored, start), nil
}

// openArchive opens the archive operation a discard writes to, and says where it is.
func (m *Drain) openArchive(meta drain.OperationMeta) (*drain.Operation, error) {
	op, err := drain.OpenArchive(m.Flags.Archive, meta, m.Now())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(m.Stderr, "archiving to %s (operation %s)\n", render.Escape(op.Path), render.Escape(op.Meta.ID))
	return op, nil
}

// summary is what the drain did and what is left, read on a fresh connection (the drain's
// own may be the one that died), the audit line, and the outcome as the run's error.
func (m *Drain) summary(ctx context.Context, t query.Target, res drain.Result, runErr error, restored bool, start time.Time) Summary {
	k, f := m.Shard, m.Flags
	after, afterErr := m.shardAfter(context.WithoutCancel(ctx), t, k)
	summary := drain.Summarize(k, res, after, restored, m.Now().Sub(start))
	fields := map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "mode": f.Mode, "handler": drain.HandlerName(f.Handler),
		"delivered": res.Delivered, "deleted": auditDeleted(res), "left": after.Left, "reason": f.Reason}
	if res.InDoubt != nil {
		fields = WithInDoubt(fields, res.InDoubt.Outcome)
	}
	summary.Next = m.drainNext(t, after)
	return Summary{Doc: render.Doc{{Name: "drain", Title: "Drain summary", Card: summary.Card()}},
		Audit: []Audit{{"drain", fields}}, Err: drainOutcome(ctx, k, res, runErr, restored, after, afterErr)}
}

// drainOutcome is how a drain ended, as the run's error: interrupted (and whether the
// delivery in flight was abandoned), a COMMIT in doubt and what its settle found,
// deliveries not committed, a failed delivery, the state after not read; nil when done.
// After a signal every failure is the interrupt's (exit 130), said in its own account.
func drainOutcome(ctx context.Context, k query.ShardKey, res drain.Result, runErr error, restored bool, after drain.After, afterErr error) error {
	switch {
	case errors.Is(runErr, context.Canceled) && res.Abandoned != nil:
		return interruptedf("interrupted after %d delivered message(s): the delivery of message %d was abandoned (its handler stopped); it stays at the shard's head, nothing of it deleted, and %s",
			res.Delivered, res.Abandoned.ID, scheduleAfter(after))
	case errors.Is(runErr, context.Canceled):
		return interruptedf("interrupted after %d delivered message(s); %s", res.Delivered, scheduleAfter(after))
	case res.InDoubt != nil:
		return failureOrInterrupt(ctx, drainInDoubt(runErr, res, k))
	case runErr != nil && res.Uncommitted > 0:
		return failureOrInterrupt(ctx, fmt.Sprintf("%v; %d delivered message(s) were not committed and will be delivered again", db.Classify(runErr, "drain"), res.Uncommitted))
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

// failureOrInterrupt is an account of a failure, the interrupt's once Ctrl-C or SIGTERM came
// (a commit the signal let finish, stalled until its deadline).
func failureOrInterrupt(ctx context.Context, msg string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return interruptedf("%s", msg)
	}
	return failuref("%s", msg)
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
func (m *Drain) drainNext(t query.Target, after drain.After) render.Commands {
	if n, ok := after.Left.(int64); ok && n == 0 {
		return render.Commands{m.Next(nil, "doctor", "--check", "stuck")}
	}
	return render.Commands{m.Next(&t, "inspect", "shard", m.Shard.Scope.ScopeWord(), fmt.Sprint(m.Shard.ID))}
}

func failedSchedule(restored bool) string {
	if restored {
		return "the shard's schedule is back as it was before the claim"
	}
	return "the shard stays in backoff with the message at its head"
}

// shardAfter reads the shard's depth and next attempt on a fresh connection: the drain's
// own may be the one that died. A failed read is "unknown" in the summary and its error.
func (e Env) shardAfter(ctx context.Context, t query.Target, k query.ShardKey) (drain.After, error) {
	conn, err := e.Connect(ctx, "drain")
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

// usageError is the operator's input refused (a handler that cannot run, a connection
// inside a transaction block): exit 2, as cmd's usage errors (cmd/exit.go's usage).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// UsageError marks the error as the operator's input.
func (e *usageError) UsageError() bool { return true }

// guard refuses a connection inside a transaction block (the operator's) and a replica.
func guard(ctx context.Context, conn *db.Conn) error {
	err := drain.Guard(ctx, conn)
	if errors.Is(err, drain.ErrInTransaction) {
		return &usageError{err.Error()}
	}
	return err
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
		return true, &usageError{err.Error() + after}
	}
	return true, nil
}

// dryRunPreflight checks a dry run's handler as a real run would before its claim.
func dryRunPreflight(ctx context.Context, notef func(string, ...any), handler drain.Handler) error {
	checked, err := preflight(ctx, handler, " (dry run: nothing was claimed or changed)")
	if checked && err == nil {
		notef("handler check: ok (the command resolves, or the receiver accepts a connection)")
	}
	return err
}

// closeHandler ends a handler's co-process, if it has one.
func closeHandler(h drain.Handler) {
	if c, ok := h.(io.Closer); ok {
		_ = c.Close()
	}
}

// waitingNote is what the first Ctrl-C during a delivery prints: what the drain waits for,
// for how long at most, and how to stop waiting.
func waitingNote(w io.Writer, timeout time.Duration) func(drain.Message, time.Duration) {
	return func(m drain.Message, left time.Duration) {
		fmt.Fprintf(w, "interrupted: waiting for the handler to finish message %d (%s, object %d), at most %s more (--handler-timeout %s), then committing and stopping; press Ctrl-C again or send SIGTERM to abandon it: the handler is stopped and nothing of the message is deleted\n",
			m.ID, render.Escape(m.CategoryName), m.Object, max(left, 0).Round(time.Second), timeout)
	}
}

// counted is a progress line moved by one per delivery, from one worker or several at once.
type counted struct {
	Progress
	mu sync.Mutex
	n  int64
}

func (c *counted) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.Set(c.n)
}

// progress starts the deliveries' line (none without Env.Progress).
func (e Env) progress(ctx context.Context, label string, total int64) *counted {
	var p Progress = noProgress{}
	if e.Progress != nil {
		p = e.Progress(ctx, label, total, true)
	}
	return &counted{Progress: p}
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
func (m *Drain) claimLine(ctx context.Context, plan drain.Plan) *claimProgress {
	k := m.Shard
	label := fmt.Sprintf("drain: claiming %s/%d (one UPDATE of its %s rows)", k.Scope.Name, k.ID, drain.PlanCount(plan.Rows, plan.RowsAtLeast, "~"))
	p := live.NewElapsed(m.Stderr, m.ErrTTY, time.Now, label, 0)
	p.Tick() // draw at once: the claim is one statement
	return &claimProgress{Progress: p, stop: p.Run(ctx), tty: m.ErrTTY, err: m.Stderr}
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
