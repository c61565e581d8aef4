package cmd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The bulk forms of the repairs: reschedule, compact and skip --category given selector
// flags instead of one shard. The selection is read once (query.SelectedShards, what
// `outboxctl shards` lists with the same flags), planned and confirmed, then worked through
// by drain.Bulk a batch of shards per transaction.

// bulkOptions are the flags of a repair's bulk form.
type bulkOptions struct {
	selectorOptions
	DryRun      bool
	BatchShards int
}

// addBulkFlags registers the selector flags, --dry-run and --batch-shards on c.
func (a *app) addBulkFlags(c *cobra.Command, o *bulkOptions, categoryHelp string) {
	a.addSelectorFlags(c, &o.selectorOptions, selectorUse{categoryHelp: categoryHelp})
	if c.Flags().Lookup("dry-run") == nil { // a repair's --dry-run serves both forms (bulkRun)
		addDryRunFlag(c.Flags(), &o.DryRun)
	}
	c.Flags().IntVar(&o.BatchShards, "batch-shards", drain.DefaultBatchShards, "bulk form: shards per transaction (each batch locks at most these shards' rows, briefly)")
}

// validate checks the bulk form's flags: a selector with a criterion, a positive batch.
func (o bulkOptions) validate(command string) error {
	if err := o.selectorOptions.validate(command, true); err != nil {
		return err
	}
	if o.BatchShards < 1 {
		return usageErrorf(command+" --stuck --batch-shards 100", "`--batch-shards` must be at least 1")
	}
	return nil
}

// shardOrSelectors accepts a repair's SCOPE ID, or no argument (its bulk form).
func shardOrSelectors(single int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != 0 && len(args) != single {
			return usageErrorf(fmt.Sprintf("%s %s", c.CommandPath(), names),
				"%s takes %s, or selector flags (--stuck, --at-cap, --scope, …) and no argument; got %d argument(s)", c.CommandPath(), names, len(args))
		}
		return nil
	}
}

// bulkRepair is what differs between the bulk repairs.
type bulkRepair struct {
	command string // reschedule, compact, skip
	// what is the plan's verb phrase: "make due now with a fresh backoff".
	what string
	// batch is a reschedule's batch; rowsOf, a skip's or compact's rows of a batch's shards
	// (archived then deleted, drain.BulkArchive).
	batch  func(t query.Target, why query.Why) drain.BatchFunc
	rowsOf func(t query.Target, why query.Why) func(shards query.Statement) query.Statement
	// printSQL prints the set-based statements over every selected shard.
	printSQL func(d factory, t query.Target, selected query.Statement, why query.Why) error
}

// runBulk is a bulk repair: printed (--print-sql), or read, planned, confirmed and run.
func runBulk(ctx context.Context, d factory, o bulkOptions, r repairOptions, t query.Target, sel query.ShardSelector, job bulkRepair) error {
	command := "outboxctl " + job.command
	why := query.Why{Command: job.command, Reason: r.Reason}
	if d.printSQL {
		if err := requireCell(t, command); err != nil {
			return err
		}
		return job.printSQL(d, t, query.SelectedShards(t, sel, nil), why)
	}
	t, conn, payloadType, err := d.open(ctx, command, t)
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }()
	shards, err := d.selectShards(ctx, conn, sel)
	if err != nil {
		return err
	}
	if len(shards) == 0 {
		d.printer.Notef("no shards matched (%s): nothing to %s", sel.Describe(), job.command)
		return nil
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	plan := bulkPlan(d, job, t, sel, shards, reg, o.BatchShards, r.Reason)
	if o.DryRun {
		printPlan(d.stderr, plan)
		return nil
	}
	if err := d.confirmCount(command, plan, r.Yes, len(shards)); err != nil {
		return err
	}
	refs := make([]query.ShardRef, len(shards))
	for i, s := range shards {
		refs[i] = s.Ref()
	}
	sum, archive, err := d.runBulkBatches(ctx, conn, o, r, t, refs, job, payloadType, why)
	d.auditBulk(job.command, sel, sum, archive, r.Reason)
	if perr := d.printer.Print(bulkDoc(d, job.command, sum, archive, reg)); perr != nil {
		return perr
	}
	return bulkVerdict(ctx, job.command, sum, err)
}

// selectShards reads the selection in one read-only snapshot on conn.
func (d factory) selectShards(ctx context.Context, conn *db.Conn, sel query.ShardSelector) ([]query.SelectedShard, error) {
	var shards []query.SelectedShard
	err := d.session(ctx, conn, func(s *session) error {
		res, err := s.run(query.SelectedShards(s.target, sel, nil))
		if err != nil {
			return err
		}
		shards, err = query.Rows[query.SelectedShard](res)
		return err
	})
	return shards, err
}

// bulkPlan is what the operator confirms: the target, the selection, its shards and rows per
// scope and head category, the first shards, and how the work is batched.
func bulkPlan(d factory, job bulkRepair, t query.Target, sel query.ShardSelector, shards []query.SelectedShard, reg *enums.Registry, batch int, reason string) []string {
	var rows int64
	perScope, perHead := map[string][2]int64{}, map[string][2]int64{}
	for _, s := range shards {
		rows += s.Depth
		for m, key := range map[*map[string][2]int64]string{&perScope: reg.ScopeName(s.Scope), &perHead: reg.CategoryName(s.HeadCategory)} {
			v := (*m)[key]
			(*m)[key] = [2]int64{v[0] + 1, v[1] + s.Depth}
		}
	}
	plan := []string{
		fmt.Sprintf("target: %s, %s", d.where(), t.Describe()),
		fmt.Sprintf("%s: %d shard(s) holding %d row(s), selected by: %s", job.what, len(shards), rows, sel.Describe()),
		"per scope: " + counts(perScope),
		"per head category: " + counts(perHead),
	}
	var first []string
	for _, s := range shards[:min(5, len(shards))] {
		first = append(first, fmt.Sprintf("%s/%d (%d rows, head %s, next attempt %s)", reg.ScopeName(s.Scope), s.ID, s.Depth, reg.CategoryName(s.HeadCategory), schedule(d.printer, s.NextAttempt)))
	}
	more := ""
	if len(shards) > len(first) {
		more = fmt.Sprintf(", and %d more (outboxctl shards with the same flags lists them)", len(shards)-len(first))
	}
	return append(plan, "first shards: "+strings.Join(first, "; ")+more,
		fmt.Sprintf("in batches of %d shard(s), one short transaction each; a shard whose head row a drainer holds is skipped as being drained, never waited for (%s)", batch, reasonText(reason)))
}

// counts is "organization: 1200 shard(s), 143000 row(s); user: …", largest first.
func counts(m map[string][2]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]][0] != m[keys[j]][0] {
			return m[keys[i]][0] > m[keys[j]][0]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d shard(s), %d row(s)", k, m[k][0], m[k][1])
	}
	return strings.Join(parts, "; ")
}

// bulkArchiveRun is where a bulk skip or compact archived: the file and the bulk id.
type bulkArchiveRun struct {
	Path       string
	ID         string
	Operations []string
}

// runBulkBatches works through refs, a batch per transaction, with the progress line; a skip
// or compact archives each shard's rows in its own operation, all in one file.
func (d factory) runBulkBatches(ctx context.Context, conn *db.Conn, o bulkOptions, r repairOptions, t query.Target, refs []query.ShardRef, job bulkRepair, payloadType string, why query.Why) (drain.BulkSummary, *bulkArchiveRun, error) {
	bulk := &drain.Bulk{Shards: refs, BatchShards: o.BatchShards}
	progress := d.progress(ctx, job.command+" shards", int64(len(refs)), false)
	bulk.Progress = func(n int, _ int64) { progress.Set(int64(n)) }
	var archive *bulkArchiveRun
	var ba *drain.BulkArchive
	batch := job.batch
	if job.rowsOf != nil {
		id := drain.NewOperationID(job.command, d.now())
		path := r.Archive
		if path == "" {
			var err error
			if path, err = drain.OperationArchivePath(id); err != nil {
				return drain.BulkSummary{}, nil, err
			}
		}
		archive = &bulkArchiveRun{Path: path, ID: id}
		ba = &drain.BulkArchive{Path: path, Target: t, Why: why, Warnf: d.printer.Warnf, Meta: func(ref query.ShardRef) drain.OperationMeta {
			m := archiveMeta(t, query.ShardKey{Scope: query.Enum{Value: ref.Scope}, ID: ref.ID}, payloadType, job.command, r.Reason)
			m.Started = d.now().UTC()
			return m
		}}
		bulk.After = ba.Finish
		rowsOf := job.rowsOf(t, why)
		batch = func(query.Target, query.Why) drain.BatchFunc { return ba.Batch(rowsOf) }
	}
	stopNote := context.AfterFunc(ctx, func() {
		d.printer.Notef("interrupted: stopping after the batch in flight (Ctrl-C again does not cut it short)")
	})
	defer stopNote()
	sum, err := bulk.Run(ctx, conn, batch(t, why))
	progress.Set(int64(sum.Selected - sum.Left))
	progress.done()
	if ba != nil {
		archive.Operations = ba.Operations
	}
	return sum, archive, err
}

// auditBulk writes the one audit line of a bulk operation.
func (d factory) auditBulk(command string, sel query.ShardSelector, sum drain.BulkSummary, archive *bulkArchiveRun, reason string) {
	fields := map[string]any{"bulk": true, "selector": sel.Describe(), "selected": sum.Selected, "done": sum.Done, "being_drained": sum.BeingDrained,
		"empty": sum.Empty, "failed": sum.Failed, "in_doubt": sum.InDoubt, "left": sum.Left, "rows_changed": sum.Rows, "reason": reason}
	if archive != nil {
		fields["archive"], fields["operation"], fields["operations"] = archive.Path, archive.ID, len(archive.Operations)
	}
	d.audit(command, fields)
}

// bulkDoc is the summary: a card of the counts, and a table of the shards (on a terminal
// only those not done: being drained, empty, failed, in doubt).
func bulkDoc(d factory, command string, sum drain.BulkSummary, archive *bulkArchiveRun, reg *enums.Registry) render.Doc {
	card := []render.Field{{Key: "selected", Value: sum.Selected}, {Key: "done", Value: sum.Done}, {Key: "being_drained", Value: sum.BeingDrained},
		{Key: "empty", Value: sum.Empty}, {Key: "failed", Value: sum.Failed}, {Key: "in_doubt", Value: sum.InDoubt}, {Key: "left", Value: sum.Left},
		{Key: "rows_changed", Value: sum.Rows}, {Key: "batches", Value: sum.Batches}, {Key: "interrupted", Value: sum.Interrupted}}
	if archive != nil {
		restore := fmt.Sprintf("outboxctl restore %s --all", archive.Path)
		if command == "skip" {
			restore += " --include-skipped"
		}
		card = append(card, render.Field{Key: "archive", Value: archive.Path}, render.Field{Key: "operation", Value: archive.ID},
			render.Field{Key: "operations", Value: len(archive.Operations)}, render.Field{Key: "restore", Value: restore, HumanOnly: true})
	}
	tbl := &render.Table{Columns: []string{"shard_scope", "scope", "shard_identifier", "outcome", "rows", "error"}, MachineOnly: map[string]bool{"shard_scope": true}}
	for _, s := range sum.Shards {
		if s.Outcome == drain.BulkDone && !d.printer.Structured() {
			continue
		}
		tbl.Rows = append(tbl.Rows, []any{s.Scope, reg.ScopeName(s.Scope), s.ID, string(s.Outcome), s.Rows, s.Error})
	}
	doc := render.Doc{{Name: "summary", Title: command, Card: card}}
	if len(tbl.Rows) > 0 || d.printer.Structured() {
		doc = append(doc, render.Section{Name: "shards", Title: "shards not done", Table: tbl})
	}
	return doc
}

// bulkVerdict is how a bulk repair ends: interrupted (130), a COMMIT in doubt or every batch
// failed (1), some shards failed (the partial exit, 6), else done (0; being drained is no
// failure: the next run takes those shards).
func bulkVerdict(ctx context.Context, command string, sum drain.BulkSummary, err error) error {
	switch {
	case sum.InDoubt > 0:
		return failuref("%s: the COMMIT of a batch got no answer (%v): its %d shard(s) are in doubt (done or not); %d shard(s) done, %d left: run the same command again, what is done no longer matches",
			command, err, sum.InDoubt, sum.Done, sum.Left)
	case sum.Interrupted || ctx.Err() != nil:
		return interruptedf("%s interrupted: %d shard(s) done, %d being drained, %d failed, %d left: run the same command again to continue", command, sum.Done, sum.BeingDrained, sum.Failed, sum.Left)
	case sum.Failed > 0 && sum.Done+sum.BeingDrained+sum.Empty == 0:
		return failuref("%s: every batch failed: %v", command, err)
	case sum.Failed > 0:
		return partialf("%s: %d shard(s) done, %d failed (%v)%s: run the same command again for the failed ones", command, sum.Done, sum.Failed, err, leftText(sum.Left))
	}
	return nil
}

func leftText(left int) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf(", %d not reached", left)
}
