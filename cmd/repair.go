package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// repairOptions are the flags every repair (reschedule, compact, skip) shares.
type repairOptions struct {
	Yes     bool
	Reason  string
	Archive string
	// KeepBackoff keeps the shard's backoff when compact or skip removes its head row
	// (without it the shard is made due now: its backoff was earned by the row that is gone).
	KeepBackoff bool
}

func addRepairFlags(a *app, c *cobra.Command, o *repairOptions, archives bool) {
	addMutationFlags(a, c.Flags(), &o.Yes)
	addReasonFlag(c.Flags(), &o.Reason)
	if archives {
		addArchiveFlag(c.Flags(), &o.Archive)
		c.Flags().BoolVar(&o.KeepBackoff, "keep-backoff", false, "when the shard's head row is removed, keep its backoff (default: the shard is made due now, as its backoff was earned by the row that is gone)")
	}
}

// shardArgs are a repair's SCOPE ID arguments: Validate checks the id; the scope is a name
// the registry resolves when the command runs (shardKey).
type shardArgs struct {
	Scope, ID string
	id        int64 // parsed ID, set by validate
}

func (s *shardArgs) validate(command string) error {
	id, err := nonNegativeID("shard id", s.ID, command+" organization 42")
	s.id = id
	return err
}

// runOnShard is the run of a command that takes SCOPE ID (inspect shard, drain, reschedule,
// compact): it fills s from the arguments, validates the options, resolves the scope and the
// outbox table, and calls run.
func (a *app) runOnShard(s *shardArgs, validate func() error, run func(context.Context, query.Target, query.ShardKey) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		s.Scope, s.ID = args[0], args[1]
		if err := validate(); err != nil {
			return err
		}
		k, err := a.shardKey(*s)
		if err != nil {
			return err
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return run(c.Context(), t, k)
	}
}

// severalShards runs SCOPE ID ID... as the bulk form over exactly those shards (the
// selector of a --shards-from list), and SCOPE ID as single.
func (a *app) severalShards(single func(*cobra.Command, []string) error, bulk func(context.Context, query.Target, query.ShardSelector) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) <= 2 {
			return single(c, args)
		}
		scope, err := a.scopeArg(args[0])
		if err != nil {
			return err
		}
		seen := map[int64]bool{}
		var refs []query.ShardRef
		for _, arg := range args[1:] {
			id, err := nonNegativeID("shard id", arg, c.CommandPath()+" organization 42 43")
			if err != nil {
				return err
			}
			if !seen[id] {
				seen[id] = true
				refs = append(refs, query.ShardRef{Scope: scope.Value, ID: id})
			}
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return bulk(c.Context(), t, query.ShardSelector{Listed: refs})
	}
}

// shardKey resolves the scope of a validated SCOPE ID.
func (a *app) shardKey(s shardArgs) (query.ShardKey, error) {
	scope, err := a.scopeArg(s.Scope)
	if err != nil {
		return query.ShardKey{}, err
	}
	return query.ShardKey{Scope: *scope, ID: s.id}, nil
}

// open checks that a repair of t can run (a control shard names its cell, a database is
// given), connects, and reads the table's payload type (the archive records it) and its
// cell column, adapting t.
func (d factory) open(ctx context.Context, command string, t query.Target) (query.Target, *db.Conn, string, error) {
	if err := requireCell(t, d.again(command, "--cell", "us")); err != nil {
		return t, nil, "", err
	}
	if err := d.requireDB(command); err != nil {
		return t, nil, "", err
	}
	conn, err := d.connect(ctx, strings.TrimPrefix(command, "outboxctl "))
	if err != nil {
		return t, nil, "", err
	}
	var payloadType string
	err = d.session(ctx, conn, func(s *session) error {
		t, payloadType = s.target, s.schema.Table(s.target.TableName()).PayloadType
		return nil
	})
	if err != nil {
		conn.Close(ctx)
		return t, nil, "", err
	}
	return t, conn, payloadType, nil
}

// rescheduleOptions are reschedule's flags and arguments: SCOPE ID, or the bulk form's
// selector flags.
type rescheduleOptions struct {
	repairOptions
	shardArgs
	bulk bulkOptions
	// GroupHeads is --group-heads: rewrite only each coalesce group's lowest row.
	GroupHeads bool
}

// mode is the reschedule's mode (--group-heads, or every row).
func (o rescheduleOptions) mode() query.RescheduleMode {
	if o.GroupHeads {
		return query.RescheduleGroupHeads
	}
	return query.RescheduleAllRows
}

// groupHeadsHelp is --group-heads' help: what it changes, why Sentry's workers read the
// shard the same, and where they do not.
const groupHeadsHelp = "rewrite only the lowest row of each coalesce group (shard, category, object), not every row: " +
	"far fewer writes, and Sentry's claim reads the shard the same (due, its backoff from the shard's lowest row, always a group's lowest: 2 s); " +
	"but Sentry's scheduler then lists the shard only in the id windows holding a group head (mostly the lowest), so fewer of its five " +
	"tasks share the rescheduled shards (a slower recovery), and a group's lowest row deleted while newer rows of it stay before a claim " +
	"(the 50-row duplicate deletion, a disabled shard's drain, compact or skip --keep-backoff) brings the old backoff back"

// Validate checks the shard id.
func (o *rescheduleOptions) Validate() error { return o.validate("outboxctl reschedule") }

// bulkRun is a repair's RunE: with no argument its bulk form (the selector flags, validated
// and resolved, then run), else single (SCOPE ID or MESSAGE_ID), refusing selector flags beside it.
func (a *app) bulkRun(command string, o *bulkOptions, single func(*cobra.Command, []string) error,
	run func(ctx context.Context, t query.Target, sel query.ShardSelector) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			if o.hasCriterion() || o.Limit > 0 {
				what := map[bool]string{true: "MESSAGE_ID", false: "SCOPE ID"}[len(args) == 1]
				// The Try is this command line without the selector flags: the single form
				// the arguments asked for.
				return usageErrorf(a.withoutSelectors(command), "%s takes %s or selector flags, not both", command, what)
			}
			return single(c, args)
		}
		if err := o.validate(command); err != nil {
			return err
		}
		sel, err := a.shardSelector(o.selectorOptions, command, a.factory().now())
		if o.Resume != "" {
			sel, o.resume, err = a.resumeSelector(*o, command)
			defer o.resume.Unlock() // the journal's lock, held for the run
		}
		if err != nil {
			return err
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return run(c.Context(), t, sel)
	}
}

// rescheduleBulk is reschedule's bulk form in mode: with --group-heads its plan counts the
// coalesce groups, the rows it rewrites.
func rescheduleBulk(mode query.RescheduleMode) bulkRepair {
	job := bulkRepair{
		command: "reschedule", what: "make due now with a fresh backoff", mode: mode,
		batch: func(t query.Target, why query.Why) drain.BatchFunc { return drain.RescheduleBatch(t, mode, why) },
		printSQL: func(d factory, t query.Target, selected query.Statement, why query.Why) error {
			return d.printScript(query.InTransaction(d.preamble("reschedule"), query.Script{query.BulkReschedule(t, selected, mode, why)}))
		},
	}
	if mode == query.RescheduleGroupHeads {
		job.what += ", group heads only (--group-heads: the lowest row of each coalesce group)"
		job.counted = "rows to reschedule (group heads)"
		job.count = func(t query.Target) func(query.Statement) query.Statement {
			return func(shards query.Statement) query.Statement { return query.BulkCount(query.BulkGroupHeads(t, shards)) }
		}
	}
	return job
}

func newRescheduleCmd(a *app) *cobra.Command {
	var o rescheduleOptions
	var c *cobra.Command
	c = &cobra.Command{
		Use:   "reschedule (SCOPE ID | SELECTORS)",
		Short: "Make a shard (or every selected shard) due now and clear its backoff, so Sentry's workers pick it up",
		Long: strings.TrimSpace(`
Give every row of the shard the schedule of a fresh row (scheduled_for = 2016-08-01, as
Sentry's THE_PAST): the shard is due at the scheduler's next run, and its next claim starts
again from a 2 s delay instead of up to an hour. Nothing is delivered or deleted.

--group-heads gives it only to the lowest row of each coalesce group (shard, category,
object), leaving every other row as it is: a tenth of the writes for groups of ten rows.
Sentry's claim reads the shard the same: it is due when any row is; the claim derives the
backoff from the shard's lowest row, always the lowest of its group (so 2 s), then rewrites
every row; a drain deletes whole groups, after which the lowest row is again a group's
lowest. Where it differs: Sentry's scheduler lists a shard in each of its five tasks' id
windows only for due rows inside the window, and group heads are each group's oldest rows,
so the rescheduled shards land mostly in the lowest window's task instead of being shared
by five (the recovery can be slower; the order among due shards changes too); and a group's
lowest row deleted while newer rows of the group stay, before a claim (the 50-row duplicate
deletion left rows behind, a disabled shard's synchronous drain, compact or skip
--keep-backoff) brings the shard's old backoff back (reschedule it without the flag). Use
it when the primary cannot take the rewrite of every row; the default otherwise.

SCOPE ID ID... (what doctor prints for the shards of a finding) reschedules exactly those
shards of the scope, as the bulk form with their list would.

Without SCOPE ID, the selector flags choose the shards (the same flags as outboxctl shards,
which previews them): every selected shard is rescheduled, a batch of --batch-shards per
short transaction; a shard whose head row a drainer holds is skipped (being drained) and
never waited for. Ctrl-C stops after the batch in flight (exit 130); running the same
command again continues. See docs/runbooks.md, "a receiver was down for an hour".`),
		Example: examples(`
  outboxctl reschedule organization 42 --reason 'INC-3: handler fixed' --yes
  outboxctl reschedule organization 42 43 97 --reason 'INC-3: receiver back' --yes
  outboxctl reschedule --stuck --at-cap --scope organization --dry-run
  outboxctl reschedule --at-cap --added-after 2h --reason 'INC-3: receiver back' --yes
  outboxctl reschedule --stuck --group-heads --reason 'INC-3: receiver back' --yes`),
		Args:              shardOrSelectors(2, "SCOPE ID..."),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: a.bulkRun("outboxctl reschedule", &o.bulk, a.severalShards(a.runOnShard(&o.shardArgs, o.Validate, func(ctx context.Context, t query.Target, k query.ShardKey) error {
			return runReschedule(ctx, a.factory(), o, t, k)
		}), func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			mode, err := a.resumeMode(o, c.Flags().Changed("group-heads"))
			if err != nil {
				return err
			}
			return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, rescheduleBulk(mode))
		}), func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			mode, err := a.resumeMode(o, c.Flags().Changed("group-heads"))
			if err != nil {
				return err
			}
			return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, rescheduleBulk(mode))
		}),
	}
	addRepairFlags(a, c, &o.repairOptions, false)
	c.Flags().BoolVar(&o.GroupHeads, "group-heads", false, groupHeadsHelp)
	a.addBulkFlags(c, &o.bulk, "bulk form: only shards holding this category (name or integer)")
	addMailboxReschedule(a, c, &o.repairOptions)
	return c
}

// runReschedule makes shard k of t due now with a fresh backoff, after the plan is confirmed
// (--print-sql: prints the UPDATE).
func runReschedule(ctx context.Context, d factory, o rescheduleOptions, t query.Target, k query.ShardKey) error {
	why, mode := query.Why{Command: "reschedule", Reason: o.Reason}, o.mode()
	if d.printSQL {
		// A group's lowest row is its cell's: printed for every cell, the heads would be
		// the lowest across them.
		if err := requireCell(t, d.again("outboxctl reschedule", "--cell", "us")); o.GroupHeads && err != nil {
			return err
		}
		return d.printScript(query.InTransaction(d.preamble("reschedule"), query.Script{query.Reschedule(t, k, 0, mode, why)}))
	}
	t, conn, _, err := d.open(ctx, "outboxctl reschedule", t)
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }() // reconnect may replace it
	depth, next, err := drain.ShardState(ctx, conn, t, k)
	if err != nil {
		return err
	}
	if depth == 0 {
		d.printer.Notef("shard %s/%d is empty: nothing to reschedule", k.Scope.Name, k.ID)
		return nil
	}
	plan, err := reschedulePlan(ctx, d, conn, o, t, k, depth, next)
	if err != nil {
		return err
	}
	if err := d.confirm("outboxctl reschedule", plan, o.Yes); err != nil {
		return err
	}
	var n int64
	err = db.WriteTx(ctx, conn, func(tx db.Tx) error {
		n, err = query.Exec(ctx, tx, query.Reschedule(t, k, 0, mode, why))
		return db.Classify(err, "reschedule")
	})
	var outcome drain.Settlement
	if db.IsInDoubt(err) {
		outcome, err = d.settle(ctx, "reschedule", err, n, "row(s) rescheduled", func(c *db.Conn) (drain.Settlement, error) { return drain.SettleRescheduled(ctx, c, t, k, 0, mode) })
		conn = d.reconnect(ctx, conn, "reschedule") // the one the COMMIT went on is gone
	}
	if err != nil && outcome == "" {
		return err
	}
	if err == nil && outcome == "" {
		d.recordMadeDue(ctx, conn, t, ledger.ViaReschedule, "", []query.ShardRef{{Scope: k.Scope.Value, ID: k.ID}})
	}
	_, after, afterErr := drain.ShardState(ctx, conn, t, k)
	n = settledCount(n, outcome)
	d.audit("reschedule", withInDoubt(map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "rows": auditCount(n, outcome), "mode": string(mode), "reason": o.Reason}, outcome))
	// JSON keeps the time (Sentry's THE_PAST); a person reads what it means.
	sum := drain.RescheduleSummary{Shard: fmt.Sprintf("%s/%d", k.Scope.Name, k.ID), Mode: string(mode), NextAttemptBefore: report.Typed("next_attempt", next),
		NextAttemptAfter: report.Typed("next_attempt", after), NextAttempt: render.Styled{Text: "due now", Tone: render.ToneGood}}
	sum.Rows, sum.InDoubt = drain.Settled(n, outcome)
	if afterErr != nil {
		sum.NextAttemptAfter, sum.NextAttempt = "unknown", "unknown"
	}
	sum.Next, _ = d.nextSteps(t, k, drain.Head{Depth: depth}, nil)
	if perr := d.printer.Print(render.Doc{{Name: "reschedule", Card: render.FieldsOf(sum)}}); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if afterErr != nil {
		return unreadAfter("reschedule", fmt.Sprintf("%d row(s) rescheduled", n), afterErr)
	}
	return nil
}

// reschedulePlan is the single reschedule's plan line: the rows it rewrites (every row, or
// with --group-heads one a coalesce group, counted here) and the shard's next attempt.
func reschedulePlan(ctx context.Context, d factory, conn *db.Conn, o rescheduleOptions, t query.Target, k query.ShardKey, depth int64, next any) ([]string, error) {
	rows := fmt.Sprintf("%d row(s)", depth)
	if o.GroupHeads {
		groups, err := drain.ShardGroups(ctx, conn, t, k)
		if err != nil {
			return nil, err
		}
		rows = fmt.Sprintf("group heads only (--group-heads): %d of its %d row(s) change, the lowest of each of its %d coalesce group(s)", groups, depth, groups)
	}
	return []string{fmt.Sprintf("make shard %s/%d due now with a fresh backoff: %s, next attempt currently: %s (%s)",
		k.Scope.Name, k.ID, rows, schedule(d.printer, next), reasonText(o.Reason))}, nil
}

// schedule is a shard's next attempt as the plan line shows it, in the one time format.
func schedule(p *render.Printer, v any) string {
	t, ok := v.(time.Time)
	if !ok {
		return "unknown"
	}
	return render.FormatDue(t, p.Now(), p.Time)
}

// deleteArchived archives the rows st reads and deletes them, as one archive operation of
// its own (drain.ArchivedDelete: staged and synced before the DELETE, the commit marker
// written after the commit, naming the ids deleted).
//
// A COMMIT that got no answer is settled on a fresh connection (d.settle, ArchivedDelete's
// Settle, which marks the batch): the count is then what the settle found (0 when it did not
// commit), and outcome says what that was ("": the COMMIT was answered); the error says it too.
func (d factory) deleteArchived(ctx context.Context, conn *db.Conn, t query.Target, st query.Statement, o repairOptions, meta drain.OperationMeta) (int64, *drain.Operation, drain.Settlement, error) {
	d.settleArchive(ctx, conn, o.Archive, t)
	op, err := drain.OpenArchive(o.Archive, meta, d.now())
	if err != nil {
		return 0, nil, "", err
	}
	defer op.Close()
	del := &drain.ArchivedDelete{Op: op, Target: t, Why: query.Why{Command: meta.Command, Reason: o.Reason}, Warnf: d.printer.Warnf}
	deleted, err := del.DeleteArchived(ctx, conn, st)
	if !db.IsInDoubt(err) {
		return deleted, op, "", err
	}
	outcome, err := d.settle(ctx, meta.Command, err, deleted, "row(s) deleted", func(c *db.Conn) (drain.Settlement, error) { return del.Settle(ctx, c) })
	return settledCount(deleted, outcome), op, outcome, archiveInDoubt(err, outcome, op)
}

// archiveMeta describes a repair's archive operation on shard k of t: restore refuses a row
// of the archive that is not in that shard (and cell, for the control outbox).
func archiveMeta(t query.Target, k query.ShardKey, payloadType, command, reason string) drain.OperationMeta {
	m := drain.OperationMeta{Command: command, Reason: reason, User: osUser(), Schema: t.Schema, Table: t.TableName(), PayloadType: payloadType,
		Shard: &drain.ArchiveShard{Scope: k.Scope.Value, ID: k.ID}}
	if t.Control() {
		m.CellColumn = t.CellColumnName()
		cell := t.Cell
		m.Shard.Cell = &cell
	}
	return m
}

// printArchivingDelete prints, for --print-sql, the SELECT of what a repair would archive and
// its DELETE commented out: a psql script cannot write outboxctl's archive, and a printed
// script must not delete what nothing archived.
func (d factory) printArchivingDelete(t query.Target, rows func(query.Why) query.Statement, why query.Why) error {
	script, err := query.ArchivingDeleteScript(why.Command, d.preamble(why.Command), rows(why), query.DeleteSelected(t, rows(query.Why{}), why))
	if err != nil {
		return err
	}
	return d.printer.SQL(script)
}

// compactOptions are compact's flags and arguments: SCOPE ID, or the bulk form's selector flags.
type compactOptions struct {
	repairOptions
	shardArgs
	bulk bulkOptions
}

// archivedCounted names the plan's count of a bulk skip or compact.
const archivedCounted = "rows to archive and delete"

// compactBulk is compact's bulk form.
var compactBulk = bulkRepair{ //nolint:gochecknoglobals // constant description
	command: "compact", what: "archive and delete the superseded rows (every coalesce group's rows below its newest id)",
	rowsOf: func(t query.Target, why query.Why) func(query.Statement) query.Statement {
		return func(shards query.Statement) query.Statement { return query.BulkSuperseded(t, shards, why) }
	},
	counted: archivedCounted, count: func(t query.Target) func(query.Statement) query.Statement {
		return func(shards query.Statement) query.Statement {
			return query.BulkCount(query.BulkSuperseded(t, shards, query.Why{}))
		}
	},
	printSQL: func(d factory, t query.Target, selected query.Statement, why query.Why) error {
		return d.printArchivingDelete(t, func(why query.Why) query.Statement { return query.BulkSuperseded(t, selected, why) }, why)
	},
}

// Validate checks the shard id.
func (o *compactOptions) Validate() error { return o.validate("outboxctl compact") }

func newCompactCmd(a *app) *cobra.Command {
	var o compactOptions
	c := &cobra.Command{
		Use:   "compact (SCOPE ID | SELECTORS)",
		Short: "Delete the superseded rows of every coalesce group of a shard, keeping the newest",
		Long: strings.TrimSpace(`
Delete, after archiving them, exactly the rows a successful drain would delete without
delivering: in every coalesce group of the shard, the rows below the group's newest id. The
newest row of each group stays, so Sentry still delivers every object once. For a hot shard
whose duplicates make Sentry's 50-row deletion time out. When the shard's head row is among
them, the shard is made due now, unless --keep-backoff.

The run is one archive operation: its rows are staged in the archive (synced) before the
DELETE and marked committed after it; outboxctl restore puts them back. --print-sql prints
the SELECT of what would be archived and the DELETE commented out, and changes nothing.

Without SCOPE ID, the selector flags choose the shards (as for outboxctl shards): a batch of
--batch-shards per transaction, each shard its own archive operation in one file (restore
FILE --all puts the run back); a shard a drainer holds is skipped (being drained).`),
		Example: examples(`
  outboxctl compact organization 1 --reason 'INC-4: hot shard' --yes
  outboxctl compact --min-depth 10000 --reason 'INC-4: hot shards' --yes`),
		Args:              shardOrSelectors(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: a.bulkRun("outboxctl compact", &o.bulk, a.runOnShard(&o.shardArgs, o.Validate, func(ctx context.Context, t query.Target, k query.ShardKey) error {
			return runCompact(ctx, a.factory(), o, t, k)
		}), func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, compactBulk)
		}),
	}
	addRepairFlags(a, c, &o.repairOptions, true)
	a.addBulkFlags(c, &o.bulk, "bulk form: only shards holding this category (name or integer)")
	return c
}

// runCompact archives and deletes the superseded rows of shard k of t, after the plan is
// confirmed (--print-sql: prints what it would archive, and the DELETE commented out).
func runCompact(ctx context.Context, d factory, o compactOptions, t query.Target, k query.ShardKey) error {
	why := query.Why{Command: "compact", Reason: o.Reason}
	if d.printSQL {
		if err := requireCell(t, d.again("outboxctl compact", "--cell", "us")); err != nil {
			return err
		}
		return d.printArchivingDelete(t, func(why query.Why) query.Statement { return query.Superseded(t, k, 0, why) }, why)
	}
	t, conn, payloadType, err := d.open(ctx, "outboxctl compact", t)
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }() // reconnect may replace it
	count, wm, err := drain.Superseded(ctx, conn, t, k)
	if err != nil {
		return err
	}
	before, err := drain.ShardHead(ctx, conn, t, k)
	if err != nil {
		return err
	}
	depth := before.Depth
	if count == 0 {
		d.printer.Notef("shard %s/%d has no superseded rows: nothing to compact", k.Scope.Name, k.ID)
		return nil
	}
	plan := []string{fmt.Sprintf("delete %d superseded row(s) of shard %s/%d (of %d), archived first; the newest row of every group stays (%s)",
		count, k.Scope.Name, k.ID, depth, reasonText(o.Reason)), backoffPlan(o.repairOptions)}
	if err := d.confirm("outboxctl compact", plan, o.Yes); err != nil {
		return err
	}
	// One transaction: the line moves (elapsed, rate) while it runs and counts the rows
	// once they are deleted.
	progress := d.progress(ctx, "compacted", count, true)
	deleted, op, outcome, err := d.deleteArchived(ctx, conn, t, query.Superseded(t, k, wm, why), o.repairOptions, archiveMeta(t, k, payloadType, "compact", o.Reason))
	progress.Set(deleted)
	progress.done()
	if err != nil && outcome == "" {
		return err
	}
	if outcome != "" {
		conn = d.reconnect(ctx, conn, "compact") // the one the COMMIT went on is gone
	}
	d.audit("compact", withInDoubt(map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "deleted": auditCount(deleted, outcome), "archive": op.Path, "operation": op.Meta.ID, "reason": o.Reason}, outcome))
	sum := drain.CompactSummary{Shard: shardLabel(k), DepthBefore: depth}
	sum.Deleted, sum.InDoubt = drain.Settled(deleted, outcome)
	return d.finishRemoval(ctx, conn, t, k, before, o.repairOptions, "compact", op, deleted, func(a drain.StateAfter, steps drain.NextSteps) any {
		sum.StateAfter, sum.Archive, sum.Operation, sum.NextSteps = a, op.Path, op.Meta.ID, steps
		return sum
	}, err)
}

// finishRemoval ends a compact or skip: the shard made due when its head is gone
// (headRemoved), and the summary (summary fills in the state after, the next steps and the
// undo). err is the deletion's (an in-doubt commit settled), returned after the summary.
func (d factory) finishRemoval(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, before drain.Head, o repairOptions, command string, op *drain.Operation, deleted int64, summary func(drain.StateAfter, drain.NextSteps) any, err error) error {
	state, steps, afterErr := d.removalState(ctx, conn, t, k, before, o, command, op)
	if perr := d.printer.Print(render.Doc{{Name: command, Card: render.FieldsOf(summary(state, steps))}}); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if afterErr != nil {
		return unreadAfter(command, fmt.Sprintf("%d row(s) deleted, archived in %s as operation %s", deleted, op.Path, op.Meta.ID), afterErr)
	}
	return nil
}

// removalState is a removal's shard after it (its backoff made due, or kept, when the head
// went), its next steps and undo.
func (d factory) removalState(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, before drain.Head, o repairOptions, command string, op *drain.Operation) (drain.StateAfter, drain.NextSteps, error) {
	after, backoff, afterErr := d.headRemoved(ctx, conn, t, k, before, o, command)
	state := drain.StateAfter{DepthAfter: "unknown", Backoff: backoff}
	if afterErr == nil {
		state = stateAfter(after, backoff)
	}
	var steps drain.NextSteps
	steps.Next, steps.Undo = d.nextSteps(t, k, after, op)
	return state, steps, afterErr
}

// backoffPlan is the plan's line for what follows the deletion when it removes the head.
func backoffPlan(o repairOptions) string {
	if o.KeepBackoff {
		return "if the shard's head row is removed, keep the shard's backoff (--keep-backoff)"
	}
	return "if the shard's head row is removed, make the shard due now: its backoff was earned by that row (--keep-backoff keeps it)"
}

// messageArg is a command's MESSAGE_ID argument: an outbox row id.
type messageArg struct {
	ID string
	id int64 // parsed ID, set by validate
}

func (m *messageArg) validate(command string) error {
	id, err := nonNegativeID("message id", m.ID, command+" 123456")
	m.id = id
	return err
}

// skipOptions are skip's flags and argument: MESSAGE_ID, or --category and the selector flags.
type skipOptions struct {
	repairOptions
	messageArg
	bulk bulkOptions
}

// skipBulk is skip --category's bulk form over sel.
func skipBulk(sel query.ShardSelector) bulkRepair {
	rows := func(t query.Target, shards query.Statement, why query.Why) query.Statement {
		return query.BulkSkipRows(t, shards, *sel.Category, sel.AddedAfter, sel.AddedBefore, why)
	}
	return bulkRepair{
		command: "skip", what: fmt.Sprintf("archive and delete, undelivered, every coalesce group of %s with a matching row, up to its highest matching row", sel.Category.Name),
		rowsOf: func(t query.Target, why query.Why) func(query.Statement) query.Statement {
			return func(shards query.Statement) query.Statement { return rows(t, shards, why) }
		},
		counted: archivedCounted, count: func(t query.Target) func(query.Statement) query.Statement {
			return func(shards query.Statement) query.Statement { return query.BulkCount(rows(t, shards, query.Why{})) }
		},
		printSQL: func(d factory, t query.Target, selected query.Statement, why query.Why) error {
			return d.printArchivingDelete(t, func(why query.Why) query.Statement { return rows(t, selected, why) }, why)
		},
	}
}

// Validate checks the message id.
func (o *skipOptions) Validate() error { return o.validate("outboxctl skip") }

func newSkipCmd(a *app) *cobra.Command {
	var o skipOptions
	c := &cobra.Command{
		Use:   "skip (MESSAGE_ID... | --category C [SELECTORS])",
		Short: "Archive and delete a poison message's coalesce group, unblocking its shard",
		Long: strings.TrimSpace(`
Archive, then delete, every row of the message's coalesce group (same shard, category and
object) up to the group's newest row: the group is not delivered. For a shard's head in
backoff, up to the newest row its last attempt could have sent (written by then): that is
what failed; a row written since has not been tried and stays, for Sentry to deliver (a
head written after the last attempt, never tried, goes whole, and the plan says so). When the group held the
shard's head row, the shard is made due now (its backoff was earned by the row that is
gone), unless --keep-backoff; the rest of the shard is untouched. The summary shows the
shard's state after, the next step and the undo.

The run is one archive operation (staged before the DELETE, marked committed after it).
outboxctl restore FILE --operation ID puts the rows back: a skip is restored only when
named, never by restore --all alone.

Several MESSAGE_IDs (what doctor prints for proven poison heads): one plan naming every
group, one confirmation (their count typed back above 100 on a terminal), then each group
as its own archive operation, all in one archive file (--archive, else one of the run's
own); a message that is gone by then is reported and the others go on. --print-sql prints
the SELECT of what would be archived and the DELETE commented out, and changes nothing.

With --category C and no MESSAGE_ID (the poison-category case): in every selected shard
holding a row of C (narrowed by the other selector flags; --added-after/--added-before
bound the matching rows too), every coalesce group of C with a matching row is archived
and deleted up to its highest matching row (docs/runbooks.md, "What a skip removes", says
where the two forms differ and why neither leaves an older row to be delivered in place of
a newer one). A batch of --batch-shards per transaction; each shard is its own operation in one
archive file (restore FILE --all --include-skipped puts the run back). See
docs/runbooks.md, "a poison category in every shard".`),
		Example: examples(`
  outboxctl skip 123456 --reason 'INC-5: poison payload' --yes
  outboxctl skip 123456 123789 124001 --reason 'INC-5: failed again after a fresh attempt' --yes
  outboxctl skip --category ORGANIZATION_UPDATE --head-category ORGANIZATION_UPDATE --dry-run
  outboxctl skip --category ORGANIZATION_UPDATE --added-after 2h --reason 'INC-5: bad deploy' --yes`),
		Args: shardOrSelectors(1, "MESSAGE_ID..."),
		RunE: a.bulkRun("outboxctl skip", &o.bulk, func(c *cobra.Command, args []string) error {
			o.ID = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			t, err := a.target()
			if err != nil {
				return err
			}
			if len(args) > 1 {
				ids, err := messageIDs(args)
				if err != nil {
					return err
				}
				return runSkipMany(c.Context(), a.factory(), o, t, ids)
			}
			return runSkip(c.Context(), a.factory(), o, t)
		}, func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			if sel.Category == nil {
				return usageErrorf("outboxctl skip --category ORGANIZATION_UPDATE --head-category ORGANIZATION_UPDATE", "skip without MESSAGE_ID needs --category: the category whose rows to skip")
			}
			return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, skipBulk(sel))
		}),
	}
	addRepairFlags(a, c, &o.repairOptions, true)
	a.addBulkFlags(c, &o.bulk, "bulk form: skip the rows of this category (name or integer), in every selected shard holding one")
	addMailboxSkip(a, c, &o.repairOptions)
	return c
}

// skipLookup reads the message and its group in one read-only snapshot on conn.
func (d factory) skipLookup(ctx context.Context, conn *db.Conn, reg *enums.Registry, id int64) (drain.SkipTarget, string, error) {
	var t query.Target
	var payloadType string
	var msg *query.Result
	err := d.session(ctx, conn, func(s *session) error {
		var err error
		t, payloadType = s.target, s.schema.Table(s.target.TableName()).PayloadType
		msg, err = s.run(query.Message(t, id))
		return err
	})
	if err != nil {
		return drain.SkipTarget{}, "", err
	}
	sk, found, err := drain.SkipTargetOf(t, msg, reg)
	if err == nil && !found {
		err = failuref("no outbox row with id %d in %s", id, t.Describe())
	}
	return sk, payloadType, err
}

// runSkip archives and deletes a message's coalesce group in t, after the plan is confirmed
// (--print-sql: prints what it would archive, and the DELETE commented out).
func runSkip(ctx context.Context, d factory, o skipOptions, t query.Target) error {
	id := o.id
	if d.printSQL {
		return d.printArchivingDelete(t, func(why query.Why) query.Statement { return query.SkipGroupRows(t, id, 0, why) },
			query.Why{Command: "skip", Reason: o.Reason})
	}
	if err := d.requireDB("outboxctl skip"); err != nil {
		return err
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	conn, err := d.connect(ctx, "skip")
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }() // reconnect may replace it
	sk, payloadType, err := d.skipLookup(ctx, conn, reg, id)
	if err != nil {
		return err
	}
	left, err := d.boundToTried(ctx, conn, &sk, id)
	if err != nil {
		return err
	}
	t, k := sk.Target, sk.Shard
	plan := []string{fmt.Sprintf("skip message %d: archive and delete its coalesce group (%s, object %d): %d row(s) up to id %d, undelivered, in shard %s/%d%s (%s)",
		id, reg.CategoryName(sk.Category), sk.Object, sk.Rows, sk.Newest, k.Scope.Name, k.ID, left, reasonText(o.Reason)), backoffPlan(o.repairOptions)}
	if err := d.confirm("outboxctl skip", plan, o.Yes); err != nil {
		return err
	}
	before, err := drain.ShardHead(ctx, conn, t, k)
	if err != nil {
		return err
	}
	deleted, op, outcome, err := d.deleteArchived(ctx, conn, t, query.SkipGroupRows(t, id, sk.Newest, query.Why{Command: "skip", Reason: o.Reason}), o.repairOptions, archiveMeta(t, k, payloadType, "skip", o.Reason))
	if err != nil && outcome == "" {
		return err
	}
	d.audit("skip", withInDoubt(map[string]any{"message": id, "shard_scope": k.Scope.Name, "shard": k.ID, "deleted": auditCount(deleted, outcome), "archive": op.Path, "operation": op.Meta.ID, "reason": o.Reason}, outcome))
	if outcome != "" {
		conn = d.reconnect(ctx, conn, "skip") // the one the COMMIT went on is gone
	}
	// The group's newest row is gone without a delivery: doctor must not count it as one.
	d.recordSkipped(ctx, conn, t, op.Meta.ID, []ledger.Record{{Scope: k.Scope.Value, Shard: k.ID, HeadID: id, HeadCategory: sk.Category, GroupNewestID: sk.Newest}})
	sum := drain.SkipSummary{Message: id, Shard: shardLabel(k)}
	sum.Deleted, sum.InDoubt = drain.Settled(deleted, outcome)
	return d.finishRemoval(ctx, conn, t, k, before, o.repairOptions, "skip", op, deleted, func(a drain.StateAfter, steps drain.NextSteps) any {
		sum.StateAfter, sum.Archive, sum.Operation, sum.NextSteps = a, op.Path, op.Meta.ID, steps
		return sum
	}, err)
}
