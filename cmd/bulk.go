package cmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/selector"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// The bulk forms of the repairs: reschedule, compact and skip --category given selector
// flags instead of one shard. The selection is read once (query.SelectedShards, what
// `outboxctl shards` lists with the same flags), planned and confirmed, then worked through
// by drain.Bulk a batch of shards per transaction.

// bulkOptions are the flags of a repair's bulk form.
type bulkOptions struct {
	selectorOptions
	BatchShards int
	BatchRows   int64
	// Resume is --resume OPERATION; resume its journal, read by bulkRun.
	Resume string
	resume *drain.BulkResume
}

// addBulkFlags registers the selector flags and --batch-shards/--batch-rows on c (--dry-run
// is the mutation's own, addMutationFlags: confirmPlan obeys it).
func (a *app) addBulkFlags(c *cobra.Command, o *bulkOptions, categoryHelp string) {
	a.addSelectorFlags(c, &o.selectorOptions, selectorUse{categoryHelp: categoryHelp})
	c.Flags().IntVar(&o.BatchShards, "batch-shards", drain.DefaultBatchShards, "bulk form: at most this many shards per transaction")
	c.Flags().Int64Var(&o.BatchRows, "batch-rows", drain.DefaultBatchRows, "bulk form: at most this many rows (the shards' depths) per transaction, so no batch holds locks for long; a deeper shard is a batch of its own")
	c.Flags().StringVar(&o.Resume, "resume", "", "bulk form: go on with bulk run `OPERATION` (its audit line's and summary's operation id): exactly the shards it selected and did not finish, in its archive; selector flags, if given, must be the run's")
}

// validate checks the bulk form's flags: a selector with a criterion, a positive batch.
func (o bulkOptions) validate(command string) error {
	if err := o.selectorOptions.validate(command, o.Resume == ""); err != nil {
		return err
	}
	if o.BatchShards < 1 || o.BatchRows < 1 {
		return usageErrorf(command+" --stuck --batch-shards 100 --batch-rows 5000", "`--batch-shards` and `--batch-rows` must be at least 1")
	}
	return nil
}

// shardOrSelectors accepts a repair's SCOPE ID, or no argument (its bulk form).
func shardOrSelectors(single int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > single {
			return nil // skip's MESSAGE_ID..., reschedule's SCOPE ID...: several, one plan
		}
		if len(args) != 0 && len(args) != single {
			return usageErrorf(fmt.Sprintf("%s %s", c.CommandPath(), names),
				"%s takes %s, or selector flags (--stuck, --at-cap, --scope, …) and no argument; got %d argument(s)", c.CommandPath(), names, len(args))
		}
		return nil
	}
}

// bulkRepair is which bulk repair runs: its command, and a reschedule's mode (every row, or
// --group-heads; "" for skip and compact). internal/repair.Bulk holds what differs.
type bulkRepair struct {
	command string
	mode    query.RescheduleMode
}

// runBulk is a bulk repair through the one runner: printed (--print-sql), or read, planned,
// confirmed and run (repair.Bulk).
func runBulk(ctx context.Context, d factory, o bulkOptions, r repairOptions, t query.Target, sel query.ShardSelector, job bulkRepair) error {
	m, err := bulkMutation(d, o, &r, t, sel, job)
	if err != nil {
		return err
	}
	return runMutation(ctx, d, "outboxctl "+job.command, m, r.Yes)
}

// bulkMutation checks a bulk repair's flags against its resumed run and its target (a
// control table names its cell), and describes it for internal/repair.
func bulkMutation(d factory, o bulkOptions, r *repairOptions, t query.Target, sel query.ShardSelector, job bulkRepair) (*repair.Bulk, error) {
	command := "outboxctl " + job.command
	flags, _ := json.Marshal(o.selectorOptions)
	b := &repair.Bulk{Env: d.repairEnv(), Command: job.command, Target: t, Selector: sel, Mode: job.mode,
		BatchShards: o.BatchShards, BatchRows: o.BatchRows, Reason: r.Reason, Archive: r.Archive, KeepBackoff: r.KeepBackoff,
		Resume: o.resume, Flags: flags, Where: d.change.where(), Registry: d.registry, User: osUser(),
		ResumeCommand: func(id string) string { return d.suggest.resumeCommand(command, id) },
		Structured:    d.printer.Structured()}
	if err := b.CheckResume(func(drop map[string]bool) string { return d.suggest.againWithout(drop) }); err != nil {
		return nil, tried(err)
	}
	if d.sql.printSQL {
		return b, requireCell(t, command)
	}
	if err := requireCell(t, d.suggest.again(command, "--cell", "us")); err != nil {
		return nil, err
	}
	if err := d.db.requireDB(command); err != nil {
		return nil, err
	}
	return b, tried(b.CheckResumeTarget())
}

// withoutSelectors is this invocation's command line without its selector flags (and without
// --dsn): what a repair given both arguments and selectors would run as its single form;
// fallback when there is no command line (a run function called by a test).
func (a *app) withoutSelectors(fallback string) string {
	if len(a.args) == 0 {
		return fallback
	}
	return textsafe.Command(a.argsWithout(selector.Without(map[string]bool{"dsn": true}))...)
}
