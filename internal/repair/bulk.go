package repair

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// Bulk is the bulk form of a repair: reschedule, compact or skip --category over the shards
// a selector picks (query.SelectedShards, what `outboxctl shards` lists with the same flags)
// instead of one shard. Plan reads the selection once; Apply works through it with
// drain.Bulk, a batch of shards per short transaction, keeping the run's journal (what
// --resume continues from) and, for a skip or compact, one archive file with an operation
// per shard.
type Bulk struct {
	Env
	// Command is the repair: "reschedule", "compact" or "skip".
	Command  string
	Target   query.Target
	Selector query.ShardSelector
	// Mode is a reschedule's (every row, or group heads); "" for skip and compact.
	Mode        query.RescheduleMode
	BatchShards int
	BatchRows   int64
	Reason      string
	// Archive is --archive ("" one of the run's own; a resumed run's is its journal's).
	Archive     string
	KeepBackoff bool
	// Resume is the journal of the run --resume goes on with (nil: a fresh run).
	Resume *drain.BulkResume
	// Flags are the selector flags as the journal records them (a resume compares them).
	Flags json.RawMessage
	// Where names the database (context, user@host:port/database): the plan's target and
	// the journal's.
	Where    string
	Registry func() (*enums.Registry, error)
	User     string // who runs it, for the archive
	// ResumeCommand is the command line that goes on with run id (--resume id).
	ResumeCommand func(id string) string
	// Structured is output for a program (-o json, …): the summary lists every shard, and a
	// run that selected nothing still prints its document.
	Structured bool
}

// bulkDetail is what Bulk's plan read for its run.
type bulkDetail struct {
	t           query.Target
	payloadType string
	sel         query.ShardSelector // as resolved: its kill-switched shards counted
	shards      []query.SelectedShard
	reg         *enums.Registry
}

// archivedCounted names the plan's count of a bulk skip or compact.
const archivedCounted = "rows to archive and delete"

func (b *Bulk) why() query.Why { return query.Why{Command: b.Command, Reason: b.Reason} }

// archives says the repair deletes rows (skip, compact), which it archives first.
func (b *Bulk) archives() bool { return b.Command != "reschedule" }

// rowsOf is a skip's or compact's statement of the rows it archives and deletes in the
// shards listed by shards. skip's is a method value of query.BulkSkip: the batch calls the
// statement's builder directly (the path docs/architecture.md draws).
func (b *Bulk) rowsOf(t query.Target, why query.Why) func(shards query.Statement) query.Statement {
	if b.Command == "skip" {
		sel := b.Selector
		return query.BulkSkip{Target: t, Category: *sel.Category, After: sel.AddedAfter, Before: sel.AddedBefore, Why: why}.Rows
	}
	return func(shards query.Statement) query.Statement { return query.BulkSuperseded(t, shards, why) }
}

// what is the plan's verb phrase.
func (b *Bulk) what() string {
	switch {
	case b.Command == "skip":
		return fmt.Sprintf("archive and delete, undelivered, every coalesce group of %s with a matching row, up to its highest matching row", b.Selector.Category.Name)
	case b.Command == "compact":
		return "archive and delete the superseded rows (every coalesce group's rows below its newest id)"
	case b.Mode == query.RescheduleGroupHeads:
		return "make due now with a fresh backoff, group heads only (--group-heads: the lowest row of each coalesce group)"
	}
	return "make due now with a fresh backoff"
}

// counted is what the plan's count line counts, and count its statement over the shards
// listed by shards (nil: no count line; a reschedule of every row changes the depth).
func (b *Bulk) counted(t query.Target) (string, func(shards query.Statement) query.Statement) {
	switch {
	case b.archives():
		rows := b.rowsOf(t, query.Why{})
		return archivedCounted, func(shards query.Statement) query.Statement { return query.BulkCount(rows(shards)) }
	case b.Mode == query.RescheduleGroupHeads:
		return "rows to reschedule (group heads)", func(shards query.Statement) query.Statement {
			return query.BulkCount(query.BulkGroupHeads(t, shards))
		}
	}
	return "", nil
}

// Script is the set-based statements over every selected shard: a reschedule's UPDATE in
// its transaction, a skip's or compact's SELECT of what it would archive with its DELETE
// commented out.
func (b *Bulk) Script(preamble []string) ([]string, error) {
	t, why := b.Target, b.why()
	selected := query.SelectedShards(t, b.Selector, nil)
	var text string
	var err error
	if b.archives() {
		text, err = PrintArchivingDelete(t, preamble, func(why query.Why) query.Statement { return b.rowsOf(t, why)(selected) }, why)
	} else {
		text, err = query.InTransaction(preamble, query.Script{query.BulkReschedule(t, selected, b.Mode, why)}).Render()
	}
	return []string{text}, err
}

// Plan settles the archive a skip or compact appends to, reads the selection and (for a
// count line) its rows in one snapshot, and describes them.
func (b *Bulk) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	var d bulkDetail
	var err error
	if d.t, d.payloadType, err = b.Open(ctx, conn, b.Target); err != nil {
		return Plan{}, err
	}
	b.beforeRun(ctx, conn, d.t)
	label, count := b.counted(d.t)
	d.sel = b.Selector
	shards, counts, err := b.selectShards(ctx, conn, d.t, &d.sel, count)
	if err != nil {
		return Plan{}, err
	}
	if d.reg, err = b.Registry(); err != nil {
		return Plan{}, err
	}
	if len(shards) == 0 {
		return b.nothingSelected(d), nil
	}
	d.shards = shards
	p := b.plan(d)
	if count != nil {
		p.Lines = append(p.Lines[:1], append([]string{countLine(label, counts, d.reg)}, p.Lines[1:]...)...)
	}
	if b.archives() {
		p.Lines = append(p.Lines, BackoffPlan(b.KeepBackoff))
		if p.ArchiveSize, err = b.archiveSize(ctx, conn, d, counts); err != nil {
			return Plan{}, err
		}
	}
	if b.Resume != nil {
		p.Lines = append([]string{resumeLine(b.Resume, len(shards))}, p.Lines...)
	}
	p.detail = d
	return p, nil
}

// sampleDepth bounds the rows a bulk plan reads whole to estimate its archive: the
// shallowest selected shards, until they hold this many rows.
const sampleDepth = 4000

// archiveSize is the plan's line of the archive a skip or compact will write, as single
// compact's plan says it (#40): its estimated size and where it goes, with the free space
// there. The count is the plan's; the line's size and compression are measured on the rows
// the repair would archive in the shallowest selected shards (a bounded read: the plan does
// not read every payload of the selection).
func (b *Bulk) archiveSize(ctx context.Context, conn *db.Conn, d bulkDetail, counts []query.BulkCountRow) (string, error) {
	var total int64
	for _, c := range counts {
		total += c.Rows
	}
	byDepth := append([]query.SelectedShard(nil), d.shards...)
	sort.SliceStable(byDepth, func(i, j int) bool { return byDepth[i].Depth < byDepth[j].Depth })
	var refs []query.ShardRef
	var depth int64
	for _, s := range byDepth {
		if depth >= sampleDepth {
			break
		}
		refs, depth = append(refs, s.Ref()), depth+s.Depth
	}
	var sample drain.Sampler[[]any]
	var cols []string
	err := b.snapshot(ctx, conn, d.t, func(tx pgx.Tx, t query.Target, _ query.Schema) error {
		st := b.rowsOf(t, query.Why{})(query.ShardBatch(refs))
		err := query.Stream(ctx, tx, st, func(c []string) error { cols = c; return nil }, func(row []any) error { sample.Add(row); return nil })
		return db.Classify(err, st.Name)
	})
	if err != nil {
		return "", err
	}
	rows, err := drain.RowsFromResult(&query.Result{Columns: cols, Rows: sample.Rows}, nil)
	if err != nil {
		return "", err
	}
	path := b.Archive
	if b.Resume != nil {
		path = b.Resume.Archive
	}
	var meta drain.OperationMeta
	if len(refs) > 0 {
		meta = ArchiveMeta(d.t, query.ShardKey{Scope: query.Enum{Value: refs[0].Scope}, ID: refs[0].ID}, d.payloadType, b.Command, b.Reason, b.User)
	}
	size, err := drain.EstimateArchive(path, meta, total, rows)
	if err != nil {
		return "", err
	}
	return size.PlanLine(), nil
}

// beforeRun says a resume's journal lost its cut last line, and settles the archive a skip
// or compact appends to (the run's, on a resume), even when nothing is left to do.
func (b *Bulk) beforeRun(ctx context.Context, conn *db.Conn, t query.Target) {
	if b.Resume != nil && b.Resume.Truncated {
		b.Warnf("%s: the last line was cut short (a write a kill interrupted): ignored; that batch's shards are worked on again (those it did are found done)", render.Escape(b.Resume.Path))
	}
	if b.archives() {
		archive := b.Archive
		if b.Resume != nil {
			archive = b.Resume.Archive
		}
		b.SettleArchive(ctx, conn, archive, t)
	}
}

// nothingSelected is a plan that selected no shard: a note, and for a script the summary
// document it always reads (every count 0, no shard).
func (b *Bulk) nothingSelected(d bulkDetail) Plan {
	p := Plan{Nothing: fmt.Sprintf("no shards matched (%s): nothing to %s", d.sel.Describe(), b.Command)}
	if b.Resume != nil {
		p.Nothing = fmt.Sprintf("nothing left of operation %s: every shard it selected is finished or empty", b.Resume.Op)
	}
	if b.Structured {
		p.NothingDoc = b.doc(d, drain.BulkSummary{Mode: string(b.Mode), Shards: []drain.BulkShard{}}, nil)
	}
	return p
}

// selectShards reads the selection, and when count is set the counts of its statement over
// the shards just selected, in one read-only snapshot on conn: the selection runs once
// (counting over it again cost 4.5 of 16 s at 100k rows).
func (b *Bulk) selectShards(ctx context.Context, conn *db.Conn, t query.Target, sel *query.ShardSelector, count func(shards query.Statement) query.Statement) ([]query.SelectedShard, []query.BulkCountRow, error) {
	var shards []query.SelectedShard
	var counts []query.BulkCountRow
	err := b.snapshot(ctx, conn, t, func(tx pgx.Tx, t query.Target, sch query.Schema) error {
		// The plan describes sel as resolved: its kill-switched shards counted.
		if err := killswitch.Excluded(ctx, tx, t, sch, sel); err != nil {
			return err
		}
		res, err := run(ctx, tx, query.SelectedShards(t, *sel, nil))
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
		if res, err = run(ctx, tx, count(query.ShardBatch(refs))); err != nil {
			return err
		}
		counts, err = query.Rows[query.BulkCountRow](res)
		return err
	})
	return shards, counts, err
}

// countLine is the plan's line of the rows a repair changes (counted: what they are), and
// their coalesce groups, per scope and category.
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

// plan is what the operator confirms: the target, the selection, its shards and rows per
// scope and head category, the first shards, and how the work is batched.
func (b *Bulk) plan(d bulkDetail) Plan {
	reg := d.reg
	var rows int64
	perScope, perHead := map[string][2]int64{}, map[string][2]int64{}
	for _, s := range d.shards {
		rows += s.Depth
		for m, key := range map[*map[string][2]int64]string{&perScope: reg.ScopeName(s.Scope), &perHead: reg.CategoryName(s.HeadCategory)} {
			v := (*m)[key]
			(*m)[key] = [2]int64{v[0] + 1, v[1] + s.Depth}
		}
	}
	lines := []string{
		fmt.Sprintf("%s: %d shard(s) holding %d row(s), selected by: %s", b.what(), len(d.shards), rows, d.sel.Describe()),
		"per scope: " + counts(perScope),
		"per head category: " + counts(perHead),
	}
	var first []string
	for _, s := range d.shards[:min(5, len(d.shards))] {
		first = append(first, fmt.Sprintf("%s/%d (%d rows, head %s, next attempt %s)", reg.ScopeName(s.Scope), s.ID, s.Depth, reg.CategoryName(s.HeadCategory), b.schedule(s.NextAttempt)))
	}
	more := ""
	if len(d.shards) > len(first) {
		more = fmt.Sprintf(", and %d more (outboxctl shards with the same flags lists them)", len(d.shards)-len(first))
	}
	lines = append(lines, "first shards: "+strings.Join(first, "; ")+more,
		fmt.Sprintf("in batches of at most %d shard(s) and %d row(s), one short transaction each; a shard whose head row a drainer holds is skipped as being drained, never waited for (%s)", b.BatchShards, b.BatchRows, drain.ReasonText(b.Reason)))
	return Plan{Target: fmt.Sprintf("target: %s, %s", b.Where, d.t.Describe()), Lines: lines, Shards: len(d.shards)}
}

// schedule is a next attempt as the plan shows it, in the printer's one time format.
func (b *Bulk) schedule(t time.Time) string {
	if b.Time == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return b.Time(t)
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

// resumeLine is a resumed plan's first line.
func resumeLine(r *drain.BulkResume, left int) string {
	return fmt.Sprintf("resuming operation %s (started %s): %d of its %d selected shard(s) not finished", r.Op, r.Started.Format(time.RFC3339), left, len(r.Shards))
}

// bulkRun is a bulk run: its operation id and, for a skip or compact, where it archived
// (the file and the operations written there), with the archive and the journal it writes.
type bulkRun struct {
	ID         string
	Path       string
	Operations []string
	// MadeDue counts the shards made due now, their head row removed.
	MadeDue int
	archive *drain.BulkArchive
	journal *drain.BulkJournal
}

// Apply works through the planned shards, a batch per transaction (drain.Bulk), then
// records the shards a reschedule made due, and returns the summary, the audit line and
// the run's verdict. It calls the run itself: skip --category's path to its SQL is short
// (docs/architecture.md).
func (b *Bulk) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d := p.detail.(bulkDetail)
	bulk, batch, run, err := b.setUp(d)
	if err != nil { // the archive could not be set up: nothing ran
		return Summary{}, err
	}
	if run.journal != nil {
		defer run.journal.Close()
	}
	// The progress line starts once nothing can fail before the run (an archive that cannot
	// be opened returned above): every line started is stopped, its ticker joined.
	var progress Progress = noProgress{}
	if b.Progress != nil {
		progress = b.Progress(ctx, b.Command+" shards", int64(len(bulk.Shards)), false)
	}
	bulk.Progress = func(n int, _ int64) { progress.Set(int64(n)) }
	// The Ctrl-C note, once begun, is waited for: it never prints after the summary.
	said := make(chan struct{})
	stopNote := context.AfterFunc(ctx, func() {
		defer close(said)
		b.Notef("interrupted: stopping after the batch in flight (Ctrl-C again does not cut it short)")
	})
	sum, err := bulk.Run(ctx, conn, batch)
	progress.Set(int64(sum.Selected - sum.Left))
	progress.Done()
	if ba := run.archive; ba != nil {
		run.Operations, run.MadeDue = ba.Operations, ba.MadeDue
		if cerr := ba.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if !stopNote() {
		<-said
	}
	sum.Mode = string(b.Mode)
	if b.Command == "reschedule" {
		b.RecordMadeDue(ctx, conn, d.t, ledger.ViaReschedule, run.ID, doneShards(sum))
	}
	return Summary{Audit: []Audit{b.audit(d.sel, sum, run)}, Doc: b.doc(d, sum, run),
		Err: b.verdict(ctx, b.ResumeCommand(run.ID), b.restore(d.t, run), sum, err)}, nil
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

// runID is the run's operation id: a resumed run's own, else a new one.
func (b *Bulk) runID() string {
	if b.Resume != nil {
		return b.Resume.Op
	}
	return drain.NewOperationID(b.Command, b.Now())
}

// archive is a skip's or compact's archive: the run's file (--archive, else one of its own
// in the state directory; a resumed run's, whatever --archive says) and its shards'
// operations, numbered on from a resumed run's (its journal's count, or the archive's
// highest ID.N when a killed batch staged more).
func (b *Bulk) archive(d bulkDetail, run *bulkRun) (*drain.BulkArchive, error) {
	path, prior := b.Archive, 0
	if b.Resume != nil {
		path, prior = b.Resume.Archive, b.Resume.Operations
	}
	if path == "" {
		var err error
		if path, err = drain.OperationArchivePath(run.ID); err != nil {
			return nil, err
		}
	}
	run.Path = path
	t := d.t
	return &drain.BulkArchive{Path: path, ID: run.ID, Prior: prior, Resumed: b.Resume != nil, KeepBackoff: b.KeepBackoff, Target: t, Why: b.why(), Warnf: b.Warnf, Meta: func(ref query.ShardRef) drain.OperationMeta {
		m := ArchiveMeta(t, query.ShardKey{Scope: query.Enum{Value: ref.Scope}, ID: ref.ID}, d.payloadType, b.Command, b.Reason, b.User)
		m.Started = b.Now().UTC()
		return m
	}}, nil
}

// setUp is the run before its first batch: the shards and their depths, the batch (a skip
// or compact archives each shard's rows in its own operation, all in one file), the
// journal that hears each batch, and how a COMMIT in doubt is settled.
func (b *Bulk) setUp(d bulkDetail) (*drain.Bulk, drain.BatchFunc, *bulkRun, error) {
	bulk := &drain.Bulk{BatchShards: b.BatchShards, BatchRows: b.BatchRows}
	for _, s := range d.shards {
		bulk.Shards, bulk.Depths = append(bulk.Shards, s.Ref()), append(bulk.Depths, s.Depth)
	}
	run := &bulkRun{ID: b.runID()}
	batch := drain.RescheduleBatch(d.t, b.Mode, b.why())
	if b.archives() {
		ba, err := b.archive(d, run)
		if err != nil {
			return nil, nil, nil, err
		}
		run.archive, bulk.After = ba, ba.Finish
		batch = ba.Batch(b.rowsOf(d.t, b.why()))
	}
	if run.journal = b.journal(run, d); run.journal != nil {
		bulk.OnBatch = func(lines []drain.BulkShard) {
			if err := run.journal.Record(lines, operationsOf(run.archive)); err != nil {
				b.Warnf("cannot write the run's journal %s (%v): --resume %s may redo this batch's shards", run.journal.Path, err, run.ID)
			}
		}
	}
	bulk.Settle = b.settle(d, run.archive)
	return bulk, batch, run, nil
}

// journal starts the run's journal (a fresh run) or opens it to go on (a resume). A journal
// that cannot be written costs the run nothing but --resume: a warning says so.
func (b *Bulk) journal(run *bulkRun, d bulkDetail) *drain.BulkJournal {
	var j *drain.BulkJournal
	var err error
	if b.Resume != nil {
		j, err = b.Resume.OpenJournal()
	} else {
		h := drain.BulkJournalHeader{Op: run.ID, Command: b.Command, Target: b.Where + ", " + d.t.Describe(), Flags: b.Flags,
			AddedAfter: d.sel.AddedAfter, AddedBefore: d.sel.AddedBefore, Archive: run.Path, KeepBackoff: b.KeepBackoff, Schema: d.t.Schema,
			GroupHeads: b.Mode == query.RescheduleGroupHeads, Started: b.Now().UTC()}
		for _, s := range d.shards {
			h.Shards = append(h.Shards, [2]int64{int64(s.Scope), s.ID})
		}
		j, err = drain.CreateBulkJournal(h)
	}
	if err != nil {
		b.Warnf("cannot keep the run's journal (%v): --resume %s will not know it; running the same command again still continues", err, run.ID)
		return nil
	}
	return j
}

// operationsOf is the number of archive operations a run has written (a resumed run's before
// it included).
func operationsOf(ba *drain.BulkArchive) int {
	if ba == nil {
		return 0
	}
	return ba.Prior + len(ba.Operations)
}

// settle settles a batch whose COMMIT got no answer on a fresh connection, as the
// single-shard repairs do: a skip's or compact's by its archive's deleted ids (marking its
// operations), a reschedule's by its shards that had a row off THE_PAST when selected (in
// mode group-heads, reading only each coalesce group's lowest row: those it rewrote).
func (b *Bulk) settle(d bulkDetail, ba *drain.BulkArchive) func(context.Context, []query.ShardRef, []query.BulkShardRow) (drain.Settlement, error) {
	tells := map[query.ShardRef]bool{}
	for _, s := range d.shards {
		tells[s.Ref()] = !s.NextAttempt.Equal(shardstate.ThePast)
	}
	return func(ctx context.Context, _ []query.ShardRef, rows []query.BulkShardRow) (drain.Settlement, error) {
		ctx = context.WithoutCancel(ctx)
		conn, err := b.Connect(ctx, b.Command)
		if err != nil {
			return drain.Unsettled, err
		}
		defer conn.Close(ctx)
		if ba != nil {
			return ba.Settle(ctx, conn)
		}
		return drain.SettleRescheduledBatch(ctx, conn, d.t, b.Mode, rows, func(r query.ShardRef) bool { return tells[r] })
	}
}

// audit is the one audit line of a bulk operation.
func (b *Bulk) audit(sel query.ShardSelector, sum drain.BulkSummary, run *bulkRun) Audit {
	fields := map[string]any{"bulk": true, "selector": sel.Describe(), "selected": sum.Selected, "done": sum.Done, "being_drained": sum.BeingDrained,
		"empty": sum.Empty, "failed": sum.Failed, "in_doubt": sum.InDoubt, "left": sum.Left, "rows_changed": sum.Rows, "reason": b.Reason}
	if sum.Settled != "" {
		fields["commit_settled"] = string(sum.Settled)
	}
	if sum.Mode != "" {
		fields["mode"] = sum.Mode
	}
	if run != nil {
		fields["operation"] = run.ID
		if run.Path != "" {
			fields["archive"], fields["operations"], fields["made_due"] = run.Path, len(run.Operations), run.MadeDue
		}
	}
	return Audit{Command: b.Command, Fields: fields}
}

// doc is the summary: a card of the counts, and a table of the shards (on a terminal only
// those not done: being drained, empty, failed, in doubt).
func (b *Bulk) doc(d bulkDetail, sum drain.BulkSummary, run *bulkRun) render.Doc {
	t := d.t
	card := sum.Card()
	if run != nil {
		card.Operation = run.ID
	}
	if run != nil && run.Path != "" {
		card.Archive, card.Operations, card.MadeDue = run.Path, len(run.Operations), run.MadeDue
		card.Restore = b.restore(t, run)
	}
	// Every run ends with the command that checks it; one that left shards, with the command
	// that retries exactly those (its --resume), on one line for every shard being drained.
	card.Next = render.Commands{b.Next(&t, "doctor", "--check", "stuck")}
	if left := sum.Selected - sum.Done - sum.Empty; left > 0 && run != nil && run.ID != "" {
		card.Retry = b.ResumeCommand(run.ID)
		if sum.BeingDrained > 0 {
			b.Notef("%d shard(s) were being drained (a drainer held their head row), left for the next run: %s retries exactly the %d shard(s) the run left", sum.BeingDrained, card.Retry, left)
		}
	}
	rows := []drain.BulkShardRow{}
	for _, s := range sum.Shards {
		// On a terminal, the shards done and those being drained (the line above) are not listed.
		if (s.Outcome == drain.BulkDone || s.Outcome == drain.BulkBeingDrained) && !b.Structured {
			continue
		}
		rows = append(rows, drain.BulkShardRow{Scope: s.Scope, ScopeName: d.reg.ScopeName(s.Scope), ID: s.ID, Outcome: string(s.Outcome), Rows: s.Rows, Error: s.Error})
	}
	tbl := render.TableOf(rows)
	doc := render.Doc{{Name: "summary", Title: b.Command, Card: render.FieldsOf(card)}}
	if len(tbl.Rows) > 0 || b.Structured {
		doc = append(doc, render.Section{Name: "shards", Title: "shards not done", Table: tbl})
	}
	return doc
}

// restore is the restore that puts a skip's or compact's run back ("" when it archived
// nothing: the file was never written).
func (b *Bulk) restore(t query.Target, run *bulkRun) string {
	if run == nil || run.Path == "" || len(run.Operations) == 0 {
		return ""
	}
	restore := []string{"restore", run.Path, "--all"}
	if b.Command == "skip" { // restore --all leaves a skip's operations out unless asked
		restore = append(restore, "--include-skipped")
	}
	return b.Next(&t, restore...)
}

// verdict is how a bulk repair ends: interrupted (130), a COMMIT in doubt (settled or not:
// 1, as the single-shard repairs) or every batch failed (1), some shards failed (the
// partial exit, 6), else done (0; being drained is no failure: the next run takes those
// shards).
func (b *Bulk) verdict(ctx context.Context, resume, restore string, sum drain.BulkSummary, err error) error {
	command := b.Command
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
