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
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// maxParallel caps --parallel: each worker holds a connection (and a handler process).
const maxParallel = 64

// addBulkDrainFlags registers drain SELECTORS' flags: the selector and --parallel, --fail-fast.
func addBulkDrainFlags(a *app, c *cobra.Command, o *drainOptions) {
	a.addSelectorFlags(c, &o.Sel, selectorUse{categoryHelp: "only shards holding a row of this category (name or integer)"})
	c.Flags().IntVar(&o.Parallel, "parallel", 1, fmt.Sprintf("with selector flags: drain this many shards at once, each on its own connection and handler process: N connections, N handlers (at most %d)", maxParallel))
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
// Its Try: line is the invocation's single-shard form.
func (o *drainOptions) noBulkFlags(a *app, c *cobra.Command) error {
	for _, name := range bulkFlags {
		if c.Flags().Changed(name) {
			return usageErrorf(a.withoutSelectors("outboxctl drain SCOPE ID"),
				"`--%s` selects shards: drain SCOPE ID drains one shard, drain SELECTORS (no SCOPE ID) the selected ones", name)
		}
	}
	return nil
}

// validateBulk checks drain SELECTORS' flags before anything connects. A Try: line is the
// invocation with the flag mended, runnable as printed.
func (o *drainOptions) validateBulk(a *app) error {
	const command = "outboxctl drain"
	if err := o.Sel.validate(command, true); err != nil {
		return err
	}
	if o.Parallel < 1 || o.Parallel > maxParallel {
		try := textsafe.Command(append(a.argsWithout(map[string]bool{"dsn": true, "parallel": true}), "--parallel", "4")...)
		if len(a.args) == 0 {
			try = command + " --stuck --parallel 4 --dry-run"
		}
		return usageErrorf(try, "`--parallel` must be between 1 and %d (got %d)", maxParallel, o.Parallel)
	}
	o.ID = "0" // the per-shard checks of Validate, with no shard of its own
	return o.Validate()
}

// runDrainSelected is drain SELECTORS: it validates, resolves the selector and the target,
// and drains the selected shards.
func (a *app) runDrainSelected(c *cobra.Command, o *drainOptions) error {
	if err := o.validateBulk(a); err != nil {
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
// the selecting statement). --handler discard archives each shard's rows in an operation of
// its own, every operation in one file (restore FILE --all --include-skipped puts them back).
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
		return usageErrorf(d.again(command+" --stuck", "--dry-run"),
			"`--handler` is required: exec:COMMAND, stream:COMMAND, http(s)://URL or discard (or --dry-run to see the plan)")
	}
	discard := o.Handler == "discard"
	var newHandler func() (drain.Handler, error)
	var first drain.Handler
	if !discard {
		newHandler = func() (drain.Handler, error) { return drainHandler(o, d.getenv, d.stderr) }
		var err error
		if first, err = newHandler(); err != nil {
			return err
		}
		defer closeHandler(first) // only checked (Preflight): it delivers nothing
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	req := drain.BulkRequest{Request: o.request(), Selector: sel, Workers: o.Parallel, FailFast: o.FailFast, IgnoreKillswitch: o.IgnoreKillswitch}
	t, plan, payloadType, err := readBulkPlan(ctx, d, t, req, reg)
	if err != nil {
		return err
	}
	mp := repair.Plan{Target: fmt.Sprintf("target: %s, %s", d.where(), t.Describe()), Lines: plan.Lines(), Shards: plan.Draining()}
	switch {
	case plan.Draining() == 0:
		d.printer.Notef("no selected shard to drain (%d selected, %d kill-switched): nothing was claimed", len(plan.Jobs), plan.Skipped)
		return nil
	case o.DryRun:
		printPlan(d.stderr, append([]string{mp.Target}, mp.Lines...))
		if discard {
			return nil
		}
		return dryRunPreflight(ctx, d.printer, first)
	}
	if err := d.confirm(command, mp, o.Yes); err != nil {
		return err
	}
	if _, err := preflight(ctx, first, "; nothing was claimed or changed"); err != nil {
		return err
	}
	var archive *bulkDrainArchive
	if discard {
		d.repairEnv().SettleArchive(ctx, nil, o.Archive, t)
		if archive, err = newBulkDrainArchive(d, o, t, payloadType); err != nil {
			return err
		}
	}
	progress := d.progress(ctx, map[bool]string{false: "delivered", true: "discarded"}[discard], plan.Groups, true)
	res, err := drain.RunParallel(ctx, drain.ParallelOptions{
		Base: drain.Options{Target: t, Mode: drain.Mode(o.Mode), MaxMessages: o.MaxMessages, Rate: o.Rate, HandlerTimeout: o.HandlerTimeout, Discard: discard,
			Warnf: d.printer.Warnf, Command: "drain", Reason: o.Reason, CoalescedIDs: o.CoalescedIDs,
			CategoryName: reg.CategoryName, ScopeName: reg.ScopeName, Abandon: abandonContext(ctx), OnWaiting: waitingNote(d.printer.Err(), o.HandlerTimeout)}, // one stderr under the printer's lock, every worker's note and warning
		Jobs: plan.Jobs, Workers: o.Parallel, FailFast: o.FailFast, Follow: o.Follow,
		Connect:    func(ctx context.Context) (*db.Conn, error) { return d.connect(ctx, "drain") },
		NewHandler: newHandler, OnDelivered: func(query.ShardKey, drain.Message) { progress.Add(1) }, OpenArchive: archive.opener(),
	})
	progress.Done()
	if err != nil {
		return err
	}
	return bulkSummary(ctx, d, o, sel, plan, res, archive)
}

// bulkDrainArchive is the one file a parallel discard archives to: an operation per shard.
type bulkDrainArchive struct {
	d           factory
	t           query.Target
	path        string
	payloadType string
	reason      string
}

// newBulkDrainArchive names the run's archive file (--archive, else one under the user's
// state directory named after the run) and says where it is.
func newBulkDrainArchive(d factory, o drainOptions, t query.Target, payloadType string) (*bulkDrainArchive, error) {
	path := o.Archive
	if path == "" {
		var err error
		if path, err = drain.OperationArchivePath(drain.NewOperationID(drain.CommandDrainDiscard, d.now())); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(d.printer.Err(), "archiving to %s (an operation per shard)\n", render.Escape(path))
	return &bulkDrainArchive{d: d, t: t, path: path, payloadType: payloadType, reason: o.Reason}, nil
}

// opener opens a shard's operation (called from its worker, once the shard is claimed); nil
// without an archive (nothing is discarded).
func (a *bulkDrainArchive) opener() func(query.ShardKey) (*drain.Operation, error) {
	if a == nil {
		return nil
	}
	return func(k query.ShardKey) (*drain.Operation, error) {
		return drain.OpenArchive(a.path, archiveMeta(a.t, k, a.payloadType, drain.CommandDrainDiscard, a.reason), a.d.now())
	}
}

// closeHandler ends a handler's co-process, if it has one.
func closeHandler(h drain.Handler) {
	if c, ok := h.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// readBulkPlan reads the selected shards and their kill switches in one read-only snapshot
// on a connection of its own (the workers open theirs), and returns the adapted target and
// the payload column's type (a discard's archive records it).
func readBulkPlan(ctx context.Context, d factory, t query.Target, req drain.BulkRequest, reg *enums.Registry) (query.Target, drain.BulkPlan, string, error) {
	conn, err := d.connect(ctx, "drain")
	if err != nil {
		return t, drain.BulkPlan{}, "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := drain.Guard(ctx, conn); err != nil {
		if errors.Is(err, drain.ErrInTransaction) {
			return t, drain.BulkPlan{}, "", usageErrorf("", "%s", err.Error())
		}
		return t, drain.BulkPlan{}, "", err
	}
	var p drain.BulkPlan
	var unread int
	var payloadType string
	err = d.session(ctx, conn, func(s *session) error {
		t = s.target
		payloadType = s.schema.Table(s.target.TableName()).PayloadType
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
		if req.Selector.NotKillswitched { // left out of the selection, not listed as skipped
			req.Selector.Excluded = sw.Read.Refs()
		}
		p, err = drain.ReadBulkPlan(s.ctx, s.tx, s.target, req, disabled, reg.ScopeName, reg.CategoryName)
		return err
	})
	if err == nil && unread > 0 {
		d.printer.Warnf("%d selected shard(s) are listed in the options table Sentry does not read here: they are not disabled, and are drained (killswitch list shows them)", unread)
	}
	return t, p, payloadType, err
}

// bulkSummary prints a row per shard and the totals, writes the audit line, and says how
// the run ended: interrupted (130), some shards failed (partial, 6), all failed (1).
func bulkSummary(ctx context.Context, d factory, o drainOptions, sel query.ShardSelector, plan drain.BulkPlan, res drain.ParallelResult, archive *bulkDrainArchive) error {
	doc, tot := parallelDrainDoc(plan, res, archive)
	fields := map[string]any{"selector": sel.Describe(), "shards": plan.Draining(), "parallel": o.Parallel, "mode": o.Mode, "handler": drain.HandlerName(o.Handler),
		"done": tot.done, "failed": tot.failed, "being_drained": tot.locked, "kill_switched": plan.Skipped, "not_started": tot.notStarted,
		"delivered": tot.delivered, "discarded": tot.discarded, "deleted": tot.deleted, "reason": o.Reason}
	if archive != nil {
		fields["archive"], fields["operations"] = archive.path, tot.operations
	}
	d.audit("drain", fields)
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
	delivered, discarded, operations                     int
	deleted, left                                        int64
}

// parallelDrainDoc is the parallel drain's document, shaped as the bulk repairs' (summary,
// then a row per shard: scope, shard, outcome, delivered, deleted, left, error). A shard whose turn never came is left
// with the rows the plan counted.
func parallelDrainDoc(plan drain.BulkPlan, res drain.ParallelResult, archive *bulkDrainArchive) (render.Doc, parallelTotals) {
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
		delivered, discarded := sh.Result.Delivered, 0
		if archive != nil { // nothing reached a handler: each group's rows were archived and deleted
			delivered, discarded = 0, sh.Result.Delivered
		}
		tot.delivered += delivered
		tot.discarded += discarded
		tot.deleted += sh.Result.Deleted
		var op *string
		if sh.Operation != "" {
			op = &sh.Operation
			tot.operations++
		}
		rows = append(rows, drain.ParallelShardRow{Scope: sh.Shard.Scope.Value, ScopeName: sh.Shard.Scope.Name, ID: sh.Shard.ID, Outcome: string(sh.Status),
			Delivered: delivered, Discarded: discarded, Deleted: sh.Result.Deleted, Left: left, Error: errText, Operation: op})
	}
	card := drain.ParallelCard{Selected: len(res.Shards), Done: tot.done, Empty: tot.empty, Failed: tot.failed, BeingDrained: tot.locked,
		KillSwitched: plan.Skipped, Interrupted: tot.interrupted, NotStarted: tot.notStarted, Delivered: tot.delivered, Discarded: tot.discarded, Deleted: tot.deleted, Left: tot.left}
	if archive != nil && tot.operations > 0 {
		card.Archive, card.Operations = archive.path, tot.operations
		// restore counts a discard with the skips (poison messages): --all alone leaves it out.
		card.Restore = archive.d.next(&archive.t, "restore", archive.path, "--all", "--include-skipped")
	}
	return render.Doc{{Name: "summary", Title: "Drain summary", Card: render.FieldsOf(card)}, {Name: "shards", Title: "Shards", Table: render.TableOf(rows)}}, tot
}
