package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// maxParallel caps --parallel: each worker holds a connection (and a handler process).
const maxParallel = 64

// addBulkDrainFlags registers drain SELECTORS' flags: the selector and --parallel, --fail-fast.
func addBulkDrainFlags(a *app, c *cobra.Command, o *drainOptions) {
	a.addSelectorFlags(c, &o.Sel, selectorUse{categoryHelp: "only shards holding a row of this category (name or integer)"})
	c.Flags().IntVar(&o.Parallel, "parallel", 1, fmt.Sprintf("with selector flags: drain this many shards at once, each on its own connection and handler (at most %d)", maxParallel))
	c.Flags().BoolVar(&o.FailFast, "fail-fast", false, "with selector flags: stop every worker after the first failing shard")
}

// bulkFlags are the flags that only drain SELECTORS takes.
var bulkFlags = []string{"parallel", "fail-fast", "stuck", "at-cap", "scope", "category", "head-category", "added-after", "added-before", "min-depth", "shards-from", "limit"}

// args takes SCOPE ID, or no argument with selector flags.
func (o *drainOptions) args(c *cobra.Command, args []string) error {
	if len(args) == 0 && (o.Sel.hasCriterion() || c.Flags().Changed("parallel") || c.Flags().Changed("fail-fast") || c.Flags().Changed("limit")) {
		return nil
	}
	return exactArgs(2, "SCOPE ID")(c, args)
}

// noBulkFlags refuses a selector flag with SCOPE ID: one shard or a selection, not both.
func (o *drainOptions) noBulkFlags(c *cobra.Command) error {
	for _, name := range bulkFlags {
		if c.Flags().Changed(name) {
			return usageErrorf("outboxctl drain --stuck --parallel 4 --handler …",
				"`--%s` selects shards: drain SCOPE ID drains one shard, drain SELECTORS (no SCOPE ID) the selected ones", name)
		}
	}
	return nil
}

// validateBulk checks drain SELECTORS' flags before anything connects.
func (o *drainOptions) validateBulk() error {
	const command = "outboxctl drain"
	if err := o.Sel.validate(command, true); err != nil {
		return err
	}
	if o.Parallel < 1 || o.Parallel > maxParallel {
		return usageErrorf(command+" --stuck --parallel 4 …", "`--parallel` must be between 1 and %d (got %d)", maxParallel, o.Parallel)
	}
	if o.Handler == "discard" {
		return usageErrorf("outboxctl skip --category C --stuck …", "%s", drain.ErrParallelDiscard.Error())
	}
	o.ID = "0" // the per-shard checks of Validate, with no shard of its own
	return o.Validate()
}

// runDrainSelected is drain SELECTORS: it validates, resolves the selector and the target,
// and drains the selected shards.
func (a *app) runDrainSelected(c *cobra.Command, o *drainOptions) error {
	if err := o.validateBulk(); err != nil {
		return err
	}
	sel, err := a.shardSelector(o.Sel, "outboxctl drain", time.Now())
	if err != nil {
		return err
	}
	t, err := a.target()
	if err != nil {
		return err
	}
	return runDrainBulk(c.Context(), a.factory(), *o, t, sel)
}

// runDrainBulk plans the drain of the shards sel selects, asks, drains them o.Parallel at a
// time and prints a row per shard (--dry-run: the plan and the handler check; --print-sql:
// the selecting statement).
func runDrainBulk(ctx context.Context, d factory, o drainOptions, t query.Target, sel query.ShardSelector) error {
	const command = "outboxctl drain"
	if err := requireCell(t, command); err != nil {
		return err
	}
	if d.printSQL {
		d.printer.Notef("note: the statement that selects the shards; each shard's drain is printed by outboxctl drain SCOPE ID --print-sql (nothing is claimed or changed)")
		return d.printScript(query.Script{query.SelectedShards(t, sel, nil)})
	}
	if err := d.requireDB(command); err != nil {
		return err
	}
	if o.Handler == "" && !o.DryRun {
		return usageErrorf(command+" --stuck --parallel 4 --handler 'exec:./deliver.sh'",
			"`--handler` is required: exec:COMMAND, stream:COMMAND or http(s)://URL (or --dry-run to see the plan)")
	}
	newHandler := func() (drain.Handler, error) { return drainHandler(o, d.getenv) }
	first, err := newHandler()
	if err != nil {
		return err
	}
	defer closeHandler(first) // only checked (Preflight): it delivers nothing
	reg, err := d.registry()
	if err != nil {
		return err
	}
	req := drain.BulkRequest{Request: o.request(), Selector: sel, Workers: o.Parallel, FailFast: o.FailFast, IgnoreKillswitch: o.IgnoreKillswitch}
	t, plan, err := readBulkPlan(ctx, d, t, req, reg)
	if err != nil {
		return err
	}
	lines := append([]string{fmt.Sprintf("target: %s, %s", d.where(), t.Describe())}, plan.Lines()...)
	switch {
	case plan.Draining() == 0:
		d.printer.Notef("no selected shard to drain (%d selected, %d kill-switched): nothing was claimed", len(plan.Jobs), plan.Skipped)
		return nil
	case o.DryRun:
		printPlan(d.stderr, lines)
		return dryRunPreflight(ctx, d.printer, first)
	}
	if err := d.confirmShards(command, lines, o.Yes, plan.Draining()); err != nil {
		return err
	}
	if _, err := preflight(ctx, first, "; nothing was claimed or changed"); err != nil {
		return err
	}
	progress := d.progress(ctx, "delivered", plan.Rows, true)
	res, err := drain.RunParallel(ctx, drain.ParallelOptions{
		Base: drain.Options{Target: t, Mode: drain.Mode(o.Mode), MaxMessages: o.MaxMessages, Rate: o.Rate, HandlerTimeout: o.HandlerTimeout,
			Warnf: d.printer.Warnf, Command: "drain", Reason: o.Reason, CoalescedIDs: o.CoalescedIDs,
			CategoryName: reg.CategoryName, ScopeName: reg.ScopeName, Abandon: abandonContext(ctx), OnWaiting: waitingNote(d.printer.Err(), o.HandlerTimeout)}, // one stderr under the printer's lock, every worker's note and warning
		Jobs: plan.Jobs, Workers: o.Parallel, FailFast: o.FailFast, Follow: o.Follow,
		Connect:    func(ctx context.Context) (*db.Conn, error) { return d.connect(ctx, "drain") },
		NewHandler: newHandler, OnDelivered: func(query.ShardKey, drain.Message) { progress.Add(1) },
	})
	progress.done()
	if err != nil {
		return err
	}
	return bulkSummary(ctx, d, o, sel, plan, res)
}

// closeHandler ends a handler's co-process, if it has one.
func closeHandler(h drain.Handler) {
	if c, ok := h.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// readBulkPlan reads the selected shards and their kill switches in one read-only snapshot
// on a connection of its own (the workers open theirs), and returns the adapted target.
func readBulkPlan(ctx context.Context, d factory, t query.Target, req drain.BulkRequest, reg *enums.Registry) (query.Target, drain.BulkPlan, error) {
	conn, err := d.connect(ctx, "drain")
	if err != nil {
		return t, drain.BulkPlan{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := drain.Guard(ctx, conn); err != nil {
		if errors.Is(err, drain.ErrInTransaction) {
			return t, drain.BulkPlan{}, usageErrorf("", "%s", err.Error())
		}
		return t, drain.BulkPlan{}, err
	}
	var p drain.BulkPlan
	var unread int
	err = d.session(ctx, conn, func(s *session) error {
		t = s.target
		sw, err := killswitch.ReadSwitches(s.ctx, s.tx, s.target, s.schema)
		if err != nil {
			return db.Classify(err, "reading the kill switches")
		}
		disabled := func(k query.ShardKey) bool {
			v := sw.Verdict(k.Scope, k.ID)
			if v.Warning != "" {
				unread++
			}
			return v.Disabled != nil && *v.Disabled
		}
		p, err = drain.ReadBulkPlan(s.ctx, s.tx, s.target, req, disabled, reg.ScopeName, reg.CategoryName)
		return err
	})
	if err == nil && unread > 0 {
		d.printer.Warnf("%d selected shard(s) are listed in the options table Sentry does not read here: they are not disabled, and are drained (killswitch list shows them)", unread)
	}
	return t, p, err
}

// bulkSummary prints a row per shard and the totals, writes the audit line, and says how
// the run ended: interrupted (130), some shards failed (partial, 6), all failed (1).
func bulkSummary(ctx context.Context, d factory, o drainOptions, sel query.ShardSelector, plan drain.BulkPlan, res drain.ParallelResult) error {
	doc, tot := parallelDrainDoc(plan, res)
	d.audit("drain", map[string]any{"selector": sel.Describe(), "shards": plan.Draining(), "parallel": o.Parallel, "mode": o.Mode, "handler": drain.HandlerName(o.Handler),
		"done": tot.done, "failed": tot.failed, "being_drained": tot.locked, "kill_switched": plan.Skipped, "not_started": tot.notStarted,
		"delivered": tot.delivered, "deleted": tot.deleted, "reason": o.Reason})
	if err := d.printer.Print(doc); err != nil {
		return err
	}
	left := tot.left
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return interruptedf("interrupted: %d shard(s) drained, %d stopped mid-drain, %d not started, %d row(s) left in them; run the same command again to continue",
			tot.done, tot.interrupted, tot.notStarted, left)
	case tot.failed > 0 && tot.done+tot.empty == 0:
		return failuref("every drained shard failed (%d; the error column says why): %d message(s) delivered", tot.failed, tot.delivered)
	case tot.failed > 0:
		return partialf("%d of %d shard(s) failed (the error column says why); %d drained, %d message(s) delivered",
			tot.failed, plan.Draining(), tot.done, tot.delivered)
	}
	return nil
}

// parallelTotals adds up a parallel drain's rows.
type parallelTotals struct {
	done, empty, failed, locked, interrupted, notStarted int
	delivered                                            int
	deleted, left                                        int64
}

// parallelDrainDoc is the parallel drain's document, shaped as the bulk repairs' (summary,
// then a row per shard: scope, shard, outcome, delivered, deleted, left, error). A shard whose turn never came is left
// with the rows the plan counted.
func parallelDrainDoc(plan drain.BulkPlan, res drain.ParallelResult) (render.Doc, parallelTotals) {
	var tot parallelTotals
	rows := make([]drain.ParallelShardRow, 0, len(res.Shards))
	for i, sh := range res.Shards {
		var left *int64
		var errText *string
		switch {
		case sh.Left != nil:
			left = sh.Left
			tot.left += *sh.Left
		case sh.Status == drain.StatusNotStarted:
			left = &plan.Shards[i].Depth
			tot.left += plan.Shards[i].Depth
		}
		if sh.Err != nil {
			e := oneLine(db.RedactDSN(sh.Err.Error()))
			errText = &e
		}
		switch sh.Status {
		case drain.StatusDone:
			tot.done++
		case drain.StatusEmpty:
			tot.empty++
		case drain.StatusFailed:
			tot.failed++
		case drain.StatusBeingDrained:
			tot.locked++
		case drain.StatusInterrupted, drain.StatusStopped:
			tot.interrupted++
		case drain.StatusNotStarted:
			tot.notStarted++
		}
		tot.delivered += sh.Result.Delivered
		tot.deleted += sh.Result.Deleted
		rows = append(rows, drain.ParallelShardRow{Scope: sh.Shard.Scope.Value, ScopeName: sh.Shard.Scope.Name, ID: sh.Shard.ID, Outcome: string(sh.Status),
			Delivered: sh.Result.Delivered, Deleted: sh.Result.Deleted, Left: left, Error: errText})
	}
	card := drain.ParallelCard{Selected: len(res.Shards), Done: tot.done, Empty: tot.empty, Failed: tot.failed, BeingDrained: tot.locked,
		KillSwitched: plan.Skipped, Interrupted: tot.interrupted, NotStarted: tot.notStarted, Delivered: tot.delivered, Deleted: tot.deleted, Left: tot.left}
	return render.Doc{{Name: "summary", Title: "Drain summary", Card: render.FieldsOf(card)}, {Name: "shards", Title: "Shards", Table: render.TableOf(rows)}}, tot
}
