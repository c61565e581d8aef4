package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

type drainOptions struct {
	Handler          string
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
}

func newDrainCmd(a *app) *cobra.Command {
	var o drainOptions
	c := &cobra.Command{
		Use:   "drain SCOPE ID",
		Short: "Drain one shard by hand, the way Sentry's workers do, delivering through a handler",
		Long: strings.TrimSpace(`
Drain one shard like Sentry's task path: claim it (lock its lowest row without waiting and
push its schedule forward, so Sentry's own workers back off meanwhile), then message by
message deliver the newest row of the head's coalesce group through --handler and delete
the group. A failed delivery rolls that message back, leaves the shard in backoff and stops
(head-of-line, like Sentry); everything delivered before it stays deleted.

Handlers (Sentry's contract is at-least-once: make them idempotent):
  exec:COMMAND   runs COMMAND (through sh -c) per message with a JSON document on stdin;
                 exit 0 means delivered, stderr becomes the error
  http(s)://URL  POSTs the document; a 2xx answer means delivered
  discard        deletes without delivering (skipping a poison message); every row is
                 archived first

The plan (messages by category, rows to delete, backoff and kill-switch state) is shown
first and needs confirmation (--yes without a terminal); --dry-run prints it and stops.
Rows above the shard's highest id at planning time are never touched unless --follow. A
kill-switched shard is refused unless --ignore-killswitch. It refuses a connection inside a
transaction block and a read replica. Ctrl-C finishes the current message, prints a
summary and exits 130. --print-sql prints one drain iteration as a psql script for a DBA.`),
		Example: examples(`
  outboxctl drain organization 42 --handler 'exec:./replicate.sh' --dry-run
  outboxctl drain organization 42 --handler https://relay.internal/outbox --reason 'INC-7' --yes
  outboxctl drain organization 42 --handler discard --max-messages 1 --reason 'INC-7: skip poison' --yes
  outboxctl drain organization 42 --print-sql > drain-42.sql`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE:              func(c *cobra.Command, args []string) error { return a.drain(c.Context(), o, args) },
	}
	f := c.Flags()
	f.StringVar(&o.Handler, "handler", "", "where messages go: exec:COMMAND, http(s)://URL or discard")
	f.DurationVar(&o.HandlerTimeout, "handler-timeout", 30*time.Second, "give up on one delivery after this long")
	f.StringVar(&o.Mode, "mode", "batch", "batch (set-based, fast) or exact (Sentry's statements one for one)")
	f.BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the plan and stop")
	f.IntVar(&o.MaxMessages, "max-messages", 0, "stop after this many deliveries (0: all)")
	f.Float64Var(&o.Rate, "rate", 0, "at most this many messages per second (0: no limit)")
	f.BoolVar(&o.Follow, "follow", false, "also drain rows inserted while draining")
	f.BoolVar(&o.IgnoreKillswitch, "ignore-killswitch", false, "drain a shard its kill switch disables")
	f.StringVar(&o.Archive, "archive", "", "JSONL file for rows deleted without delivery (default: $XDG_STATE_HOME/outboxctl/archive-DATE.jsonl)")
	f.StringVar(&o.Reason, "reason", "", "why: written into the SQL as a comment and into the audit line")
	f.BoolVar(&o.CoalescedIDs, "coalesced-ids", false, "list in each handler document the first 100 ids its delivery stands for (reads every row of the group)")
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion("batch", "exact"))
	return c
}

// throttle delivers at most rate messages per second.
type throttle struct {
	next drain.Handler
	gap  time.Duration
	last time.Time
}

func (t *throttle) Deliver(ctx context.Context, m drain.Message) error {
	if wait := t.gap - time.Since(t.last); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t.last = time.Now()
	return t.next.Deliver(ctx, m)
}

func (a *app) drain(ctx context.Context, o drainOptions, args []string) error {
	k, err := a.shardArg(args[0], args[1])
	if err != nil {
		return err
	}
	scope, id := &k.Scope, k.ID
	mode := drain.Mode(o.Mode)
	if mode != drain.ModeBatch && mode != drain.ModeExact {
		return usageErrorf("outboxctl drain organization 42 --mode batch", "invalid `--mode` %q: valid values are batch and exact", o.Mode)
	}
	if o.MaxMessages < 0 || o.Rate < 0 {
		return usageErrorf("", "`--max-messages` and `--rate` must not be negative")
	}
	t, err := a.target()
	if err != nil {
		return err
	}
	if err := requireCell(t, "outboxctl drain"); err != nil {
		return err
	}
	if a.g.PrintSQL {
		script, err := query.DrainScript(t, k, 0)
		if err != nil {
			return err
		}
		return a.printer().SQL(script)
	}
	if err := a.requireDatabase("outboxctl drain"); err != nil {
		return err
	}
	var handler drain.Handler
	if !o.DryRun {
		if o.Handler == "" {
			return usageErrorf("outboxctl drain "+args[0]+" "+args[1]+" --handler 'exec:./deliver.sh'",
				"`--handler` is required: exec:COMMAND, http(s)://URL or discard (or --dry-run to see the plan)")
		}
		if handler, err = drain.ParseHandler(o.Handler, o.HandlerTimeout); err != nil {
			return usageErrorf("", "%s", err.Error())
		}
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	conn, err := a.connect(ctx, "drain")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := drain.Guard(ctx, conn.Conn); err != nil {
		if errors.Is(err, drain.ErrInTransaction) {
			return usageErrorf("", "%s", err.Error())
		}
		return err
	}

	// The plan: the same reads whether or not it runs.
	var watermark int64
	var stateRes, catRes *query.Result
	var killed *bool
	err = a.readSession(ctx, "drain", func(s *session) error {
		t = s.target
		if stateRes, err = s.run(query.ShardState(t, k)); err != nil {
			return err
		}
		if catRes, err = s.run(query.ShardCategories(t, k)); err != nil {
			return err
		}
		max, err := s.run(query.ShardMaxID(t, k))
		if err != nil {
			return err
		}
		if len(max.Rows) > 0 {
			watermark, _ = max.Rows[0][0].(int64)
		}
		ks, err := options.ReadKillswitches(s.ctx, s.tx, t.Schema, s.schema, t.Silo)
		if err != nil {
			return err
		}
		killed = ks.IsDisabled(scope.Value, id)
		return nil
	})
	if err != nil {
		return err
	}
	if len(stateRes.Rows) == 0 {
		a.printer().Notef("shard %s/%d is empty in %s: nothing to drain", scope.Name, id, t.Describe())
		return nil
	}
	var rows, groups int64
	var byCategory []string
	for _, r := range catRes.Rows {
		cat := int(query.AsInt64(r[catRes.Col("category")]))
		d, _ := r[catRes.Col("depth")].(int64)
		g, _ := r[catRes.Col("coalesce_groups")].(int64)
		rows += d
		groups += g
		byCategory = append(byCategory, fmt.Sprintf("%s: %d message(s) from %d row(s)", reg.CategoryName(cat), g, d))
	}
	bound := fmt.Sprintf("rows up to id %d (rows inserted later stay; --follow drains them too)", watermark)
	if o.Follow {
		bound, watermark = "every row, including rows inserted while draining (--follow)", 0
	}
	plan := []string{
		fmt.Sprintf("drain shard %s/%d of %s in %s mode through %s (%s)", scope.Name, id, t.Describe(), mode, handlerName(o.Handler), reasonText(o.Reason)),
		fmt.Sprintf("deliver about %d message(s) (coalesce groups) and delete %d row(s); %s", groups, rows, bound),
	}
	for _, c := range byCategory {
		plan = append(plan, "  "+c)
	}
	if o.MaxMessages > 0 {
		plan = append(plan, fmt.Sprintf("stop after %d message(s)", o.MaxMessages))
	}
	switch {
	case killed == nil:
		plan = append(plan, "kill switch: unknown (no options table)")
	case *killed && !o.IgnoreKillswitch:
		a.printPlan(plan)
		return usageErrorf("outboxctl drain "+args[0]+" "+args[1]+" --ignore-killswitch …",
			"shard %s/%d is kill-switched: Sentry itself would only trim its head coalesce group (older duplicates deleted undelivered) at most hourly and deliver nothing; pass --ignore-killswitch to deliver it anyway, or remove it from the kill switch first", scope.Name, id)
	case *killed:
		plan = append(plan, "kill switch: the shard is disabled; --ignore-killswitch delivers it anyway")
	}
	if _, discard := handler.(drain.Discard); discard || o.Handler == "discard" {
		plan = append(plan, "discard: nothing is delivered; every deleted row is archived first")
	}
	if o.DryRun {
		a.printPlan(plan)
		return nil
	}
	if err := a.confirm("outboxctl drain "+args[0]+" "+args[1], plan, o.Yes); err != nil {
		return err
	}
	var archive *drain.Archive
	if o.Handler == "discard" {
		path := o.Archive
		if path == "" {
			if path, err = drain.DefaultArchivePath(time.Now()); err != nil {
				return err
			}
		}
		if archive, err = drain.OpenArchive(path); err != nil {
			return err
		}
		defer archive.Close()
		fmt.Fprintf(a.io.Err, "archiving to %s\n", path)
	}
	if o.Rate > 0 {
		handler = &throttle{next: handler, gap: time.Duration(float64(time.Second) / o.Rate)}
	}

	start := time.Now()
	if _, err := drain.Claim(ctx, conn.Conn, t, k); err != nil {
		if errors.Is(err, drain.ErrShardLocked) {
			return &exitError{code: ExitError, msg: err.Error()}
		}
		return db.Classify(err, "drain-claim")
	}
	progress := 0
	res, runErr := drain.Run(ctx, conn.Conn, drain.Options{
		Target: t, Shard: k, Mode: mode, Handler: handler, Watermark: watermark, MaxMessages: o.MaxMessages,
		Archive: archive, Command: "drain", Reason: o.Reason, CoalescedIDs: o.CoalescedIDs,
		Killswitched: false, CategoryName: reg.CategoryName, ScopeName: reg.ScopeName,
		OnDelivered: func(drain.Message) {
			progress++
			if a.io.ErrTTY && progress%10 == 0 {
				fmt.Fprintf(a.io.Err, "\rdelivered %d / ~%d", progress, groups)
			}
		},
	})
	if a.io.ErrTTY && progress >= 10 {
		fmt.Fprintln(a.io.Err)
	}
	left, _ := a.shardSummary(context.WithoutCancel(ctx), conn, t, k)
	summary := []render.Field{
		{Key: "shard", Value: fmt.Sprintf("%s/%d", scope.Name, id)},
		{Key: "delivered", Value: int64(res.Delivered)},
		{Key: "deleted", Value: res.Deleted},
		{Key: "left", Value: left},
		{Key: "seconds", Value: float64(time.Since(start).Milliseconds()) / 1000},
	}
	if res.Contended {
		summary = append(summary, render.Field{Key: "stopped", Value: "another drainer holds the shard"})
	}
	if res.Failed != nil {
		summary = append(summary, render.Field{Key: "failed_message", Value: res.Failed.ID},
			render.Field{Key: "failed_category", Value: res.Failed.CategoryName})
	}
	a.audit("drain", map[string]any{"shard_scope": scope.Name, "shard": id, "mode": string(mode), "handler": handlerName(o.Handler),
		"delivered": res.Delivered, "deleted": res.Deleted, "left": left, "reason": o.Reason})
	if err := a.printer().Print(render.Doc{{Name: "drain", Title: "Drain summary", Card: summary}}); err != nil {
		return err
	}
	switch {
	case errors.Is(runErr, context.Canceled):
		return &exitError{code: ExitInterrupted, msg: fmt.Sprintf("interrupted after %d delivered message(s); the shard keeps its backoff", res.Delivered)}
	case runErr != nil:
		return db.Classify(runErr, "drain")
	case res.Failed != nil:
		return &exitError{code: ExitError, msg: fmt.Sprintf("delivery of message %d (%s, object %d) failed: %v; the shard stays in backoff with the message at its head",
			res.Failed.ID, res.Failed.CategoryName, res.Failed.Object, res.FailedErr)}
	}
	return nil
}

func (a *app) printPlan(plan []string) {
	fmt.Fprintln(a.io.Err, "Plan:")
	for _, p := range plan {
		fmt.Fprintf(a.io.Err, "  - %s\n", p)
	}
}

func handlerName(spec string) string {
	if spec == "" {
		return "(no handler: dry run)"
	}
	return drain.RedactURL(spec)
}
