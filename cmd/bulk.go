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
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/shardstate"
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

// doneShards are the shards a bulk run finished.
func doneShards(sum drain.BulkSummary) []query.ShardRef {
	var done []query.ShardRef
	for _, sh := range sum.Shards {
		if sh.Outcome == drain.BulkDone {
			done = append(done, query.ShardRef{Scope: sh.Scope, ID: sh.ID})
		}
	}
	return done
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
	// mode is a reschedule's (every row, or --group-heads), "" for skip and compact.
	mode query.RescheduleMode
	// count, when set, is the plan's count of the rows the repair changes in a batch's
	// shards (a bulk-count over them), named counted on the plan's line; a skip or compact
	// counts the rows rowsOf lists.
	count   func(t query.Target) func(shards query.Statement) query.Statement
	counted string
	// printSQL prints the set-based statements over every selected shard.
	printSQL func(d factory, t query.Target, selected query.Statement, why query.Why) error
}

// runBulk is a bulk repair: printed (--print-sql), or read, planned, confirmed and run.
func runBulk(ctx context.Context, d factory, o bulkOptions, r repairOptions, t query.Target, sel query.ShardSelector, job bulkRepair) error {
	command := "outboxctl " + job.command
	if err := resumeKeepBackoff(d, command, o, &r, job); err != nil {
		return err
	}
	if err := resumeArchive(d, command, o, r); err != nil {
		return err
	}
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
	if err := checkResumeTarget(command, o.resume, d.where()+", "+t.Describe()); err != nil {
		return err
	}
	d.beforeBulk(ctx, conn, o, r, t, job)
	var count func(query.Statement) query.Statement
	if job.count != nil {
		count = job.count(t)
	}
	shards, counts, err := d.selectShards(ctx, conn, &sel, count)
	if err != nil {
		return err
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	if len(shards) == 0 {
		return nothingSelected(d, o, t, sel, job, reg)
	}
	plan := bulkPlan(d, job, t, sel, shards, reg, o.BatchShards, o.BatchRows, r.Reason)
	if job.count != nil {
		plan.Lines = append(plan.Lines[:1], append([]string{countLine(job.counted, counts, reg)}, plan.Lines[1:]...)...)
	}
	if job.rowsOf != nil {
		plan.Lines = append(plan.Lines, repair.BackoffPlan(r.KeepBackoff))
	}
	if o.resume != nil {
		plan.Lines = append([]string{resumeLine(o.resume, len(shards))}, plan.Lines...)
	}
	// --dry-run prints the plan and "dry run: nothing was changed", as every mutation's does.
	if err := d.confirm(command, plan, r.Yes); err != nil {
		return err
	}
	sum, archive, err := d.runBulkBatches(ctx, conn, o, r, t, sel, shards, job, payloadType, why)
	if archive == nil { // the archive could not be set up: nothing ran
		return err
	}
	sum.Mode = string(job.mode)
	if job.command == "reschedule" {
		d.repairEnv().RecordMadeDue(ctx, conn, t, ledger.ViaReschedule, archive.ID, doneShards(sum))
	}
	d.auditBulk(job.command, sel, sum, archive, r.Reason)
	if perr := d.printer.Print(bulkDoc(d, job.command, t, sum, archive, reg)); perr != nil {
		return perr
	}
	return bulkVerdict(ctx, job.command, d.resumeCommand(command, archive.ID), bulkRestore(d, job.command, t, archive), sum, err)
}

// beforeBulk says a resume's journal lost its cut last line, and settles the archive a skip or
// compact appends to (the run's, on a resume), even when nothing is left to do.
func (d factory) beforeBulk(ctx context.Context, conn *db.Conn, o bulkOptions, r repairOptions, t query.Target, job bulkRepair) {
	if o.resume != nil && o.resume.Truncated {
		d.printer.Warnf("%s: the last line was cut short (a write a kill interrupted): ignored; that batch's shards are worked on again (those it did are found done)", render.Escape(o.resume.Path))
	}
	if job.rowsOf != nil {
		archive := r.Archive
		if o.resume != nil {
			archive = o.resume.Archive
		}
		d.repairEnv().SettleArchive(ctx, conn, archive, t)
	}
}

// nothingSelected is a bulk repair that selected no shard: a note, and for a script the
// summary document it always reads (every count 0, no shard).
func nothingSelected(d factory, o bulkOptions, t query.Target, sel query.ShardSelector, job bulkRepair, reg *enums.Registry) error {
	if o.resume != nil {
		d.printer.Notef("nothing left of operation %s: every shard it selected is finished or empty", o.resume.Op)
	} else {
		d.printer.Notef("no shards matched (%s): nothing to %s", sel.Describe(), job.command)
	}
	if d.printer.Structured() {
		return d.printer.Print(bulkDoc(d, job.command, t, drain.BulkSummary{Mode: string(job.mode), Shards: []drain.BulkShard{}}, nil, reg))
	}
	return nil
}

// resumeKeepBackoff gives a resumed skip or compact its run's --keep-backoff (the journal's),
// refusing --keep-backoff on the resume of a run without it: its shards would end up with
// two policies.
func resumeKeepBackoff(d factory, command string, o bulkOptions, r *repairOptions, job bulkRepair) error {
	if o.resume == nil || job.rowsOf == nil {
		return nil
	}
	// Only adding the flag contradicts the run: without it a resume takes the run's.
	var err error
	r.KeepBackoff, err = resumeFlag(d.againWithout, command, o.resume.Op, "keep-backoff", r.KeepBackoff, r.KeepBackoff, o.resume.KeepBackoff,
		"without --keep-backoff (its shards whose head row it removed were made due now): resume it without --keep-backoff")
	return err
}

// resumeArchive refuses --archive on a resume when it names another file than the run's: a
// resume writes to the run's archive (its operations are numbered on from it, and restore
// --all of that file puts the whole run back), never to another.
func resumeArchive(d factory, command string, o bulkOptions, r repairOptions) error {
	if o.resume == nil || r.Archive == "" || r.Archive == o.resume.Archive {
		return nil
	}
	try := d.againWithout(map[string]bool{"archive": true})
	if try == "" {
		try = textsafe.Command(append(strings.Fields(command), "--resume", o.resume.Op)...)
	}
	return usageErrorf(try, "operation %s archives to %s, its own file: a resume goes on writing there, so it takes no other --archive (%s)",
		o.resume.Op, textsafe.Clean(o.resume.Archive), textsafe.Clean(r.Archive))
}

// resumeFlag is a boolean flag a bulk run recorded in its journal (--keep-backoff,
// --group-heads): a resume goes on with the run's value (recorded); one that gave the flag
// (given) with another value is refused, its Try this command line without the flag (or
// command --resume OP), ran saying how the run went and what to do.
func resumeFlag(againWithout func(map[string]bool, ...string) string, command, op, flag string, given, value, recorded bool, ran string) (bool, error) {
	if given && value != recorded {
		try := againWithout(map[string]bool{flag: false})
		if try == "" {
			try = textsafe.Command(append(strings.Fields(command), "--resume", op)...)
		}
		return recorded, usageErrorf(try, "operation %s ran %s", op, ran)
	}
	return recorded, nil
}

// selectShards reads the selection, and when count is set (a skip's or compact's plan) the
// counts of its statement over the shards just selected, in one read-only snapshot on conn:
// the selection runs once (counting over it again cost 4.5 of 16 s at 100k rows).
func (d factory) selectShards(ctx context.Context, conn *db.Conn, sel *query.ShardSelector, count func(shards query.Statement) query.Statement) ([]query.SelectedShard, []query.BulkCountRow, error) {
	var shards []query.SelectedShard
	var counts []query.BulkCountRow
	err := d.session(ctx, conn, func(s *session) error {
		// The plan describes sel as resolved: its kill-switched shards counted.
		if err := killswitch.Excluded(ctx, s.tx, s.target, s.schema, sel); err != nil {
			return err
		}
		res, err := s.run(query.SelectedShards(s.target, *sel, nil))
		if err != nil {
			return err
		}
		if shards, err = query.Rows[query.SelectedShard](res); err != nil || count == nil || len(shards) == 0 {
			return err
		}
		refs := make([]query.ShardRef, len(shards))
		for i, sh := range shards {
			refs[i] = sh.Ref()
		}
		if res, err = s.run(count(query.ShardBatch(refs))); err != nil {
			return err
		}
		counts, err = query.Rows[query.BulkCountRow](res)
		return err
	})
	return shards, counts, err
}

// countLine is the plan's line of the rows a repair changes (counted: what they are), and
// their groups, per scope and category.
func countLine(counted string, counts []query.BulkCountRow, reg *enums.Registry) string {
	var rows, groups int64
	parts := make([]string, 0, len(counts))
	for _, c := range counts {
		rows, groups = rows+c.Rows, groups+c.Groups
		parts = append(parts, fmt.Sprintf("%s %s: %d row(s), %d group(s) in %d shard(s)", reg.ScopeName(c.Scope), reg.CategoryName(c.Category), c.Rows, c.Groups, c.Shards))
	}
	if len(parts) == 0 {
		return counted + ": none now (the shards may change before their batch)"
	}
	return fmt.Sprintf("%s: %d in %d coalesce group(s); per scope and category: %s", counted, rows, groups, strings.Join(parts, "; "))
}

// bulkPlan is what the operator confirms: the target, the selection, its shards and rows per
// scope and head category, the first shards, and how the work is batched.
func bulkPlan(d factory, job bulkRepair, t query.Target, sel query.ShardSelector, shards []query.SelectedShard, reg *enums.Registry, batch int, batchRows int64, reason string) repair.Plan {
	var rows int64
	perScope, perHead := map[string][2]int64{}, map[string][2]int64{}
	for _, s := range shards {
		rows += s.Depth
		for m, key := range map[*map[string][2]int64]string{&perScope: reg.ScopeName(s.Scope), &perHead: reg.CategoryName(s.HeadCategory)} {
			v := (*m)[key]
			(*m)[key] = [2]int64{v[0] + 1, v[1] + s.Depth}
		}
	}
	lines := []string{
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
	lines = append(lines, "first shards: "+strings.Join(first, "; ")+more,
		fmt.Sprintf("in batches of at most %d shard(s) and %d row(s), one short transaction each; a shard whose head row a drainer holds is skipped as being drained, never waited for (%s)", batch, batchRows, reasonText(reason)))
	return repair.Plan{Target: fmt.Sprintf("target: %s, %s", d.where(), t.Describe()), Lines: lines, Shards: len(shards)}
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

// bulkArchiveRun is a bulk run's operation id and, for a skip or compact, where it archived:
// the file and the operations written there.
type bulkArchiveRun struct {
	ID         string
	Path       string
	Operations []string
	// MadeDue counts the shards made due now, their head row removed.
	MadeDue int
}

// bulkRunID is the run's operation id: a resumed run's own, else a new one.
func (d factory) bulkRunID(o bulkOptions, command string) string {
	if o.resume != nil {
		return o.resume.Op
	}
	return drain.NewOperationID(command, d.now())
}

// bulkArchive is a skip's or compact's archive: the run's file (--archive, else one of its
// own in the state directory; a resumed run's, whatever --archive says) and its shards'
// operations, numbered on from a resumed run's (its journal's count, or the archive's highest
// ID.N when a killed batch staged more).
func (d factory) bulkArchive(o bulkOptions, r repairOptions, t query.Target, job bulkRepair, payloadType string, why query.Why, run *bulkArchiveRun) (*drain.BulkArchive, error) {
	path, prior := r.Archive, 0
	if o.resume != nil {
		path, prior = o.resume.Archive, o.resume.Operations
	}
	if path == "" {
		var err error
		if path, err = drain.OperationArchivePath(run.ID); err != nil {
			return nil, err
		}
	}
	run.Path = path
	return &drain.BulkArchive{Path: path, ID: run.ID, Prior: prior, Resumed: o.resume != nil, KeepBackoff: r.KeepBackoff, Target: t, Why: why, Warnf: d.printer.Warnf, Meta: func(ref query.ShardRef) drain.OperationMeta {
		m := archiveMeta(t, query.ShardKey{Scope: query.Enum{Value: ref.Scope}, ID: ref.ID}, payloadType, job.command, r.Reason)
		m.Started = d.now().UTC()
		return m
	}}, nil
}

// runBulkBatches works through the shards, a batch per transaction, with the progress line
// and the run's journal (what --resume continues from); a skip or compact archives each
// shard's rows in its own operation, all in one file.
func (d factory) runBulkBatches(ctx context.Context, conn *db.Conn, o bulkOptions, r repairOptions, t query.Target, sel query.ShardSelector, shards []query.SelectedShard, job bulkRepair, payloadType string, why query.Why) (drain.BulkSummary, *bulkArchiveRun, error) {
	bulk := &drain.Bulk{BatchShards: o.BatchShards, BatchRows: o.BatchRows}
	for _, s := range shards {
		bulk.Shards, bulk.Depths = append(bulk.Shards, s.Ref()), append(bulk.Depths, s.Depth)
	}
	run := &bulkArchiveRun{ID: d.bulkRunID(o, job.command)}
	var ba *drain.BulkArchive
	batch := job.batch
	if job.rowsOf != nil {
		var err error
		if ba, err = d.bulkArchive(o, r, t, job, payloadType, why, run); err != nil {
			return drain.BulkSummary{}, nil, err
		}
		bulk.After = ba.Finish
		rowsOf := job.rowsOf(t, why)
		batch = func(query.Target, query.Why) drain.BatchFunc { return ba.Batch(rowsOf) }
	}
	if j := d.bulkJournal(o, job, run.ID, run.Path, r.KeepBackoff, t, sel, bulk.Shards); j != nil {
		defer j.Close()
		bulk.OnBatch = func(lines []drain.BulkShard) {
			if err := j.Record(lines, operationsOf(ba)); err != nil {
				d.printer.Warnf("cannot write the run's journal %s (%v): --resume %s may redo this batch's shards", j.Path, err, run.ID)
			}
		}
	}
	bulk.Settle = d.bulkSettle(job.command, job.mode, t, shards, ba)
	// The progress line starts once nothing can fail before the run (an archive that cannot
	// be opened returns above): every line started is stopped, its ticker joined.
	progress := d.progress(ctx, job.command+" shards", int64(len(bulk.Shards)), false)
	bulk.Progress = func(n int, _ int64) { progress.Set(int64(n)) }
	// The Ctrl-C note, once begun, is waited for: it never prints after the summary.
	said := make(chan struct{})
	stopNote := context.AfterFunc(ctx, func() {
		defer close(said)
		d.printer.Notef("interrupted: stopping after the batch in flight (Ctrl-C again does not cut it short)")
	})
	defer func() {
		if !stopNote() {
			<-said
		}
	}()
	sum, err := bulk.Run(ctx, conn, batch(t, why))
	progress.Set(int64(sum.Selected - sum.Left))
	progress.Done()
	if ba != nil {
		run.Operations, run.MadeDue = ba.Operations, ba.MadeDue
		if cerr := ba.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return sum, run, err
}

// operationsOf is the number of archive operations a run has written (a resumed run's before
// it included).
func operationsOf(ba *drain.BulkArchive) int {
	if ba == nil {
		return 0
	}
	return ba.Prior + len(ba.Operations)
}

// bulkSettle settles a batch whose COMMIT got no answer on a fresh connection, as the
// single-shard repairs do: a skip's or compact's by its archive's deleted ids (marking its
// operations), a reschedule's by its shards that had a row off THE_PAST when selected (in
// mode group-heads, reading only each coalesce group's lowest row: those it rewrote).
func (d factory) bulkSettle(command string, mode query.RescheduleMode, t query.Target, shards []query.SelectedShard, ba *drain.BulkArchive) func(context.Context, []query.ShardRef, []query.BulkShardRow) (drain.Settlement, error) {
	tells := map[query.ShardRef]bool{}
	for _, s := range shards {
		tells[s.Ref()] = !s.NextAttempt.Equal(shardstate.ThePast)
	}
	return func(ctx context.Context, _ []query.ShardRef, rows []query.BulkShardRow) (drain.Settlement, error) {
		ctx = context.WithoutCancel(ctx)
		conn, err := d.connect(ctx, command)
		if err != nil {
			return drain.Unsettled, err
		}
		defer conn.Close(ctx)
		if ba != nil {
			return ba.Settle(ctx, conn)
		}
		return drain.SettleRescheduledBatch(ctx, conn, t, mode, rows, func(r query.ShardRef) bool { return tells[r] })
	}
}

// auditBulk writes the one audit line of a bulk operation.
func (d factory) auditBulk(command string, sel query.ShardSelector, sum drain.BulkSummary, archive *bulkArchiveRun, reason string) {
	fields := map[string]any{"bulk": true, "selector": sel.Describe(), "selected": sum.Selected, "done": sum.Done, "being_drained": sum.BeingDrained,
		"empty": sum.Empty, "failed": sum.Failed, "in_doubt": sum.InDoubt, "left": sum.Left, "rows_changed": sum.Rows, "reason": reason}
	if sum.Settled != "" {
		fields["commit_settled"] = string(sum.Settled)
	}
	if sum.Mode != "" {
		fields["mode"] = sum.Mode
	}
	if archive != nil {
		fields["operation"] = archive.ID
		if archive.Path != "" {
			fields["archive"], fields["operations"], fields["made_due"] = archive.Path, len(archive.Operations), archive.MadeDue
		}
	}
	d.audit(command, fields)
}

// bulkDoc is the summary: a card of the counts, and a table of the shards (on a terminal
// only those not done: being drained, empty, failed, in doubt).
func bulkDoc(d factory, command string, t query.Target, sum drain.BulkSummary, archive *bulkArchiveRun, reg *enums.Registry) render.Doc {
	card := sum.Card()
	if archive != nil {
		card.Operation = archive.ID
	}
	if archive != nil && archive.Path != "" {
		card.Archive, card.Operations, card.MadeDue = archive.Path, len(archive.Operations), archive.MadeDue
		card.Restore = bulkRestore(d, command, t, archive)
	}
	// Every run ends with the command that checks it; one that left shards, with the command
	// that retries exactly those (its --resume), on one line for every shard being drained.
	card.Next = render.Commands{d.next(&t, "doctor", "--check", "stuck")}
	if left := sum.Selected - sum.Done - sum.Empty; left > 0 && archive != nil && archive.ID != "" {
		card.Retry = d.resumeCommand("outboxctl "+command, archive.ID)
		if sum.BeingDrained > 0 {
			d.printer.Notef("%d shard(s) were being drained (a drainer held their head row), left for the next run: %s retries exactly the %d shard(s) the run left", sum.BeingDrained, card.Retry, left)
		}
	}
	rows := []drain.BulkShardRow{}
	for _, s := range sum.Shards {
		// On a terminal, the shards done and those being drained (the line above) are not listed.
		if (s.Outcome == drain.BulkDone || s.Outcome == drain.BulkBeingDrained) && !d.printer.Structured() {
			continue
		}
		rows = append(rows, drain.BulkShardRow{Scope: s.Scope, ScopeName: reg.ScopeName(s.Scope), ID: s.ID, Outcome: string(s.Outcome), Rows: s.Rows, Error: s.Error})
	}
	tbl := render.TableOf(rows)
	doc := render.Doc{{Name: "summary", Title: command, Card: render.FieldsOf(card)}}
	if len(tbl.Rows) > 0 || d.printer.Structured() {
		doc = append(doc, render.Section{Name: "shards", Title: "shards not done", Table: tbl})
	}
	return doc
}

// bulkRestore is the restore that puts a skip's or compact's run back ("" when it archived
// nothing: the file was never written).
func bulkRestore(d factory, command string, t query.Target, archive *bulkArchiveRun) string {
	if archive == nil || archive.Path == "" || len(archive.Operations) == 0 {
		return ""
	}
	restore := []string{"restore", archive.Path, "--all"}
	if command == "skip" { // restore --all leaves a skip's operations out unless asked
		restore = append(restore, "--include-skipped")
	}
	return d.next(&t, restore...)
}

// bulkVerdict is how a bulk repair ends: interrupted (130), a COMMIT in doubt (settled or
// not: 1, as the single-shard repairs) or every batch failed (1), some shards failed (the partial exit, 6), else done (0; being drained is no
// failure: the next run takes those shards).
func bulkVerdict(ctx context.Context, command, resume, restore string, sum drain.BulkSummary, err error) error {
	switch {
	case sum.MarkerError() != nil:
		// The database committed: those shards are done and counted so; only the archive's
		// record of it failed, and restore settles that against the table.
		return failuref("%s: %d shard(s) done (%d row(s) changed), but the archive's commit markers of the last batch's %d shard(s) could not be written (%v): their rows are deleted and archived, and %s puts them back (it settles batches with no marker against the table); %d shard(s) not reached: free room, then continue with %s",
			command, sum.Done, sum.Rows, sum.Unmarked, oneLine(sum.MarkerError().Err.Error()), restore, sum.Left, resume)
	case sum.Settled == drain.Committed || sum.Settled == drain.NotCommitted:
		found := "committed, its shards are done"
		if sum.Settled == drain.NotCommitted {
			found = "not committed, its shards are unchanged"
		}
		return failuref("%s: %s; %d shard(s) done, %d failed, %d left: run the same command again to continue, what is done no longer matches",
			command, db.SettledMessage(err, found), sum.Done, sum.Failed, sum.Left)
	case sum.InDoubt > 0:
		why := "no answer"
		if serr := sum.SettleError(); serr != nil {
			why = oneLine(db.RedactDSN(serr.Error()))
		}
		return failuref("%s: the COMMIT of a batch got no answer (%v), and it could not be settled (%s): its %d shard(s) are in doubt (done or not); %d shard(s) done, %d left: run the same command again, what is done no longer matches",
			command, err, why, sum.InDoubt, sum.Done, sum.Left)
	case sum.Interrupted || ctx.Err() != nil:
		return interruptedf("%s interrupted: %d shard(s) done, %d being drained, %d failed, %d left: run the same command again to continue, or go on with exactly the rest with %s",
			command, sum.Done, sum.BeingDrained, sum.Failed, sum.Left, resume)
	case sum.Failed > 0 && sum.Done+sum.BeingDrained+sum.Empty == 0:
		return failuref("%s: every batch failed: %v", command, err)
	case sum.Failed > 0:
		return partialf("%s: %d shard(s) done, %d failed (%v)%s: run the same command again for the failed ones", command, sum.Done, sum.Failed, err, leftText(sum.Left))
	}
	return err // nil, or what stopped the run before its first batch (the replica check)
}

func leftText(left int) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf(", %d not reached", left)
}

// withoutSelectors is this invocation's command line without its selector flags (and without
// --dsn): what a repair given both arguments and selectors would run as its single form;
// fallback when there is no command line (a run function called by a test).
func (a *app) withoutSelectors(fallback string) string {
	if len(a.args) == 0 {
		return fallback
	}
	drop := map[string]bool{"dsn": true}
	for _, name := range bulkFlags {
		drop[name] = name != "stuck" && name != "at-cap" && name != "fail-fast" // the boolean ones take no value
	}
	return textsafe.Command(a.argsWithout(drop)...)
}
