package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/selector"
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
	for _, name := range selector.BulkFlags {
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
// the selecting statement): repair.DrainBulk on the runner.
func runDrainBulk(ctx context.Context, d factory, o drainOptions, t query.Target, sel query.ShardSelector) error {
	const command = "outboxctl drain"
	if err := requireCell(t, command); err != nil {
		return err
	}
	if d.sql.printSQL {
		d.printer.Notef("note: the statement that selects the shards; each shard's drain is printed by outboxctl drain SCOPE ID --print-sql (nothing is claimed or changed)")
	} else {
		if err := d.db.requireDB(command); err != nil {
			return err
		}
		if err := o.flags().NeedHandler(d.suggest.again(command+" --stuck", "--dry-run")); err != nil {
			return tried(err)
		}
	}
	return runMutation(ctx, d, command, &repair.DrainBulk{Env: d.repairEnv(), DrainRun: o.run(ctx, d), Target: t, Selector: sel,
		Workers: o.Parallel, FailFast: o.FailFast, Where: d.change.where(), Notes: d.printer.Err()}, o.Yes)
}
