package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// restoreOptions are restore's flags and argument; Validate and restoreShard turn the
// selection flags into the embedded drain.RestoreSelection.
type restoreOptions struct {
	Path   string
	Yes    bool
	Reason string
	Ops    []string
	IDs    []string
	Shard  string
	// MaxLine caps one archive line (--max-line-bytes).
	MaxLine byteSize
	drain.RestoreSelection
	shardScope string // the SCOPE of --shard, resolved by restoreShard
	shardID    int64  // the ID of --shard, parsed by Validate
}

// Validate checks the selection flags that need no registry: the row ids and the form of
// --shard.
func (o *restoreOptions) Validate() error {
	o.Operations = o.Ops
	o.RestoreSelection.IDs = nil
	for _, s := range o.IDs {
		id, err := nonNegativeID("row id", s, "outboxctl restore FILE --id 123456")
		if err != nil {
			return err
		}
		o.RestoreSelection.IDs = append(o.RestoreSelection.IDs, id)
	}
	if o.Shard != "" {
		scope, id, ok := strings.Cut(o.Shard, "/")
		if !ok {
			return usageErrorf("outboxctl restore FILE --shard organization/42", "invalid `--shard` %q: want SCOPE/ID", o.Shard)
		}
		n, err := nonNegativeID("shard id", id, "outboxctl restore FILE --shard organization/42")
		if err != nil {
			return err
		}
		o.shardScope, o.shardID = scope, n
	}
	return nil
}

// restoreShard resolves the scope of --shard into the selection.
func (a *app) restoreShard(o *restoreOptions) error {
	if o.Shard == "" {
		return nil
	}
	scope, err := a.scopeArg(o.shardScope)
	if err != nil {
		return err
	}
	o.RestoreSelection.Shard = &drain.ShardFilter{Scope: scope.Value, ID: o.shardID}
	return nil
}

// restoreTarget is one planned operation with its destination and what the table holds.
type restoreTarget struct {
	drain.PlannedOperation
	dest drain.Destination
	// present are the planned ids already in the table; stillThere the uncommitted ids that
	// are (as they should be: their DELETE never committed).
	present, stillThere map[int64]bool
}

func newRestoreCmd(a *app) *cobra.Command {
	o := restoreOptions{MaxLine: byteSize(drain.DefaultMaxArchiveLine)}
	c := &cobra.Command{
		Use:   "restore ARCHIVE.jsonl",
		Short: "Put archived outbox rows back, by operation, exactly as they were",
		Long: strings.TrimSpace(`
Reinsert rows an outboxctl archive holds into the table they came from, byte for byte as they
were before the operation (drain --handler discard, a kill-switched drain, compact or skip)
deleted them: same ids, payloads, cells and schedules. Every archive line names its operation
(one run of a command, with its reason, user and time); restore plans by operation and shows
each one's rows and ids. A file holding several operations needs --operation ID or --all.
A skip's rows (poison messages) come back only when the skip is named with --operation or
--include-skipped is given: --all leaves skips out, and says so.

Only batches whose deletion committed are restored. Rows staged before a DELETE that failed
or rolled back are reported (with a check that they are still in the table) and left alone.
A staged batch with no marker at all (a kill or a full disk before its commit marker) is
settled against the table: every id it staged gone means its DELETE committed, and its rows
are restored (the plan says so); some gone and some there cannot be told, so the missing ones
are left out, named in -o json's left_out, and restore exits 6: --include-uncommitted
restores every staged row with no marker.
Ids that exist are skipped, so running restore twice inserts nothing the second time.
An operation whose rows are not all in its shard, or whose checksum does not match (a line
edited, removed or moved), is refused. One with no checksum (written before archives carried
one, or with its checksum fields removed: restore cannot tell the two apart) is restored only
with --unverified, after comparing the plan's shard and ids with what was deleted. The plan
names the shard every operation's rows go into.
--id and --shard restore part of an operation. --schema puts rows into another schema's table
than the one recorded. --print-sql prints the INSERTs (as they would run) and changes nothing.
Archives written before per-operation archives are read with their limits stated in the plan.
A compressed archive (zstd frames: archive-OPERATION.jsonl.zst, the default since archives
were compressed) is read as it is, as is a plain one; its last frame cut short by a kill is
ignored, as a cut last line is.`),
		Example: examples(`
  outboxctl restore ~/.local/state/outboxctl/archive-20261130T200648Z-compact-3fa2c1.jsonl.zst --yes
  outboxctl restore shared.jsonl --operation 20261130T200648Z-compact-3fa2c1 --yes
  outboxctl restore shared.jsonl --all --shard organization/42 --yes`),
		Args: exactArgs(1, "ARCHIVE.jsonl"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Path = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			if err := a.restoreShard(&o); err != nil {
				return err
			}
			return runRestore(c.Context(), a.factory(), o)
		},
	}
	addMutationFlags(a, c.Flags(), &o.Yes)
	addReasonFlag(c.Flags(), &o.Reason)
	c.Flags().StringSliceVar(&o.Ops, "operation", nil, "restore these operations (ids as the plan and the error list them; repeatable); a named skip is restored")
	c.Flags().BoolVar(&o.All, "all", false, "restore every operation of the file except skips")
	c.Flags().BoolVar(&o.IncludeSkipped, "include-skipped", false, "with --all (or a file of one skip): restore skip operations too (poison messages)")
	c.Flags().BoolVar(&o.Unverified, "unverified", false, "also restore operations with no checksum (old archives, or checksum fields removed), whose rows cannot be checked for edits")
	c.Flags().BoolVar(&o.IncludeUncommitted, "include-uncommitted", false, "also restore staged rows with no commit or rollback marker (ids that exist are skipped)")
	c.Flags().StringSliceVar(&o.IDs, "id", nil, "restore only these row ids (repeatable, or comma-separated)")
	c.Flags().StringVar(&o.Shard, "shard", "", "restore only the rows of this shard, as SCOPE/ID (organization/42)")
	c.Flags().Var(&o.MaxLine, "max-line-bytes", "refuse an archive line longer than this (KiB, MiB, GiB): raise it for a row with a payload over ~128MiB")
	c.MarkFlagsMutuallyExclusive("operation", "all")
	return c
}

// runRestore reads the archive, plans what to restore and reinserts it after the plan is
// confirmed (--print-sql: prints the INSERTs).
func runRestore(ctx context.Context, d factory, o restoreOptions) error {
	if !d.printSQL {
		if err := d.requireDB("outboxctl restore"); err != nil {
			return err
		}
	}
	f, plan, err := planRestore(d.printer, o.Path, int64(o.MaxLine), o.RestoreSelection)
	if err != nil || plan == nil {
		return err
	}
	names, err := d.shardNames()
	if err != nil {
		return err
	}
	if d.printSQL {
		for _, op := range plan.Operations {
			if op.Op.Table == query.MailboxTable { // a webhook payload's request holds secrets: never printed
				return usageErrorf(textsafe.Command("outboxctl", "restore", o.Path, "--operation", op.Op.ID, "--dry-run"),
					"operation %s holds a webhook payload, whose request holds secrets (signatures, tokens): restore prints no SQL for it; --dry-run shows the plan", op.Op.ID)
			}
		}
		return printRestore(d.printer, d.schema, d.preamble("restore"), plan, o.Reason, names)
	}
	return restoreRows(ctx, d, f, plan, o, names)
}

// planRestore reads the archive and chooses what to restore (nil plan: nothing to do).
func planRestore(p *render.Printer, path string, maxLine int64, sel drain.RestoreSelection) (*drain.ArchiveFile, *drain.RestorePlan, error) {
	f, err := drain.ReadArchiveFile(path, maxLine)
	if err != nil {
		return nil, nil, err
	}
	// A cut line is a row staged before its DELETE (never deleted) or a commit marker (its
	// batch then reads as staged, and restore checks which of its rows are in the table).
	if f.Truncated {
		p.Warnf("%s: the last line was cut short (a write a kill interrupted; its batch, if any, reads as staged): ignored", path)
	}
	for _, n := range f.Torn {
		p.Warnf("%s: line %d was cut short by a kill and a later run went on after it (its batch, if any, reads as staged): skipped", path, n)
	}
	if len(f.Operations) == 0 {
		p.Notef("%s holds no operations: nothing to restore", path)
		return f, nil, nil
	}
	plan, err := drain.PlanRestore(f, sel)
	var se *drain.SelectionError
	if errors.As(err, &se) {
		return nil, nil, usageErrorf("", "%s", textsafe.Clean(se.Msg))
	}
	var ue *drain.UnverifiedError
	if errors.As(err, &ue) {
		// A flag the command line lacks, as for a skip that must be named: exit 2.
		return nil, nil, usageErrorf("outboxctl restore "+path+" --operation "+ue.Op.ID+" --unverified", "%s", ue.Error())
	}
	if err != nil {
		return nil, nil, err
	}
	for _, op := range plan.Operations {
		if !op.Op.Verified() {
			p.Warnf("%s: operation %s %s; restored as --unverified asks: compare the plan's shard and ids with what was deleted before confirming", path, op.Op.ID, drain.UnverifiedNote)
		}
	}
	return f, plan, nil
}

// printRestore is --print-sql: the INSERTs, in one transaction, as they would run
// (query.RestoreScript, which writes them as they are rendered), each operation's header
// naming the shards its rows go into.
func printRestore(p *render.Printer, schema string, preamble []string, plan *drain.RestorePlan, reason string, names func([]drain.ArchiveShard) string) error {
	sc := query.RestoreScript{Preamble: preamble}
	for _, op := range plan.Operations {
		ro := query.RestoreOperation{ID: op.Op.ID, Command: textsafe.Clean(op.Op.Command), Rows: len(op.Rows), Into: textsafe.Clean(names(op.Shards()))}
		if op.Op.Legacy {
			ro.Notes = append(ro.Notes, drain.LegacyLimits)
		}
		if !op.Op.Verified() {
			ro.Notes = append(ro.Notes, "not verified: the operation "+drain.UnverifiedNote)
		}
		if len(op.Rows) > 0 {
			ro.Statements = drain.RestoreStatements(op.Op.Destination(schema), op.Rows, reason)
		}
		sc.Operations = append(sc.Operations, ro)
	}
	for _, op := range plan.LeftOut {
		sc.LeftOut = append(sc.LeftOut, op.ID)
	}
	return p.SQLTo(sc.RenderTo)
}

// restoreRows checks the table, shows the plan by operation, and reinserts in one transaction.
func restoreRows(ctx context.Context, d factory, f *drain.ArchiveFile, plan *drain.RestorePlan, o restoreOptions, names func([]drain.ArchiveShard) string) error {
	conn, err := d.connect(ctx, "restore")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	targets, err := restoreTargets(ctx, conn, d.schema, plan)
	if err != nil {
		return err
	}
	lines, toInsert, selected := restorePlanLines(targets, plan.LeftOut, names)
	var inserted int64
	if toInsert == 0 {
		// Nothing to write, so nothing to confirm and no transaction to open.
		for _, l := range lines {
			d.printer.Notef("  - %s", l)
		}
		if selected == 0 {
			d.printer.Notef("nothing to restore: no committed archived row matches the selection")
		} else {
			d.printer.Notef("nothing to restore: all %d selected row(s) are already in the table", selected)
		}
	} else {
		if err := d.confirm("outboxctl restore "+f.Path, repair.Plan{Lines: lines}, o.Yes); err != nil {
			return err
		}
		progress := d.progress(ctx, "restored", int64(toInsert), false)
		inserted, err = reinsert(ctx, conn, targets, o.Reason, progress.Add)
		progress.Done()
		if err != nil {
			return err
		}
	}
	ops := make([]string, len(targets))
	for i, t := range targets {
		ops[i] = t.Op.ID
	}
	skipped := int64(selected) - inserted
	if toInsert > 0 {
		d.audit("restore", restoreAudit(f.Path, ops, inserted, skipped, o.Reason))
	}
	leftOut, settled := []drain.LeftOutRow{}, 0
	for _, t := range targets {
		leftOut = append(leftOut, t.LeftOut...)
		settled += len(t.SettledCommitted)
	}
	// The rows are back at their shards' heads: next is what doctor now says of them.
	if err := d.printer.Print(render.Doc{{Name: "restore", Card: render.FieldsOf(drain.RestoreSummary{
		Archive: f.Path, Operations: strings.Join(ops, ", "), Inserted: inserted, Skipped: skipped,
		Next: render.Commands{d.next(nil, "doctor", "--check", "stuck")}, CommittedUnmarked: settled, LeftOut: leftOut})}}); err != nil {
		return err
	}
	if len(leftOut) > 0 {
		return partialf("restore: %d row(s) left out though the table lacks them (ids %s; -o json names each with its reason in left_out): their batch has no commit marker and restore cannot tell whether its DELETE committed; check them, then restore them with --include-uncommitted",
			len(leftOut), drain.IDRanges(leftOutIDs(leftOut), 8))
	}
	return nil
}

func leftOutIDs(rows []drain.LeftOutRow) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// auditedOperations is how many operation ids a restore's audit line names: a bulk run's
// archive holds one operation per shard (1,169 ids were a 35 KB line), so the line names the
// first few, the count and the file, which lists them all.
const auditedOperations = 5

// restoreAudit is restore's audit line: the archive, the number of operations restored and
// the first auditedOperations of their ids, the rows inserted and skipped, the reason.
func restoreAudit(path string, ops []string, inserted, skipped int64, reason string) map[string]any {
	return map[string]any{"archive": path, "operations": ops[:min(len(ops), auditedOperations)], "operation_count": len(ops),
		"inserted": inserted, "skipped": skipped, "reason": reason}
}

// reinsert puts the planned rows back in one transaction and counts the rows inserted,
// telling progress after each operation's rows.
func reinsert(ctx context.Context, conn *db.Conn, targets []restoreTarget, reason string, progress func(int64)) (int64, error) {
	var inserted int64
	err := db.WriteTx(ctx, conn, func(tx db.Tx) error {
		for _, t := range targets {
			n, err := drain.Reinsert(ctx, tx, drain.RestoreStatements(t.dest, t.Rows, reason))
			if err != nil {
				return db.Classify(err, "restore-row")
			}
			inserted += n
			progress(n)
		}
		return nil
	})
	return inserted, err
}

// restoreTargets introspects each operation's table and reads which ids it holds.
// schema, when given (--schema), is where the rows go instead of the schema recorded.
func restoreTargets(ctx context.Context, conn *db.Conn, schema string, plan *drain.RestorePlan) ([]restoreTarget, error) {
	// A batch whose outcome the archive does not record is settled against the table first
	// (its rows are restored when every one it staged is gone), read FOR SHARE: a killed
	// run's COMMIT the server still finishes is waited for, never read as not committed.
	unmarked := make([]map[int64]bool, len(plan.Operations))
	for i, p := range plan.Operations {
		d := p.Op.Destination(schema)
		var err error
		if unmarked[i], err = drain.PresentLocked(ctx, conn, query.Target{Silo: query.SiloCell, Schema: d.Schema, Table: d.Table}, p.UnmarkedIDs()); err != nil {
			return nil, err
		}
	}
	var out []restoreTarget
	err := db.ReadTx(ctx, conn, func(tx db.Tx) error {
		for i, p := range plan.Operations {
			t := restoreTarget{PlannedOperation: p, dest: p.Op.Destination(schema)}
			sch, err := query.LoadSchema(ctx, tx, t.dest.Schema, []string{t.dest.Table})
			if err != nil {
				return db.Classify(err, "introspect")
			}
			ti := sch.Table(t.dest.Table)
			if !ti.Present {
				return fmt.Errorf("table %s does not exist: create it, or restore into another schema with --schema", textsafe.Clean(qualifiedName(t.dest.Schema, t.dest.Table)))
			}
			t.dest.CellColumn, t.dest.PayloadType = ti.CellColumn, ti.PayloadType
			t.Settle(unmarked[i])
			if t.present, err = drain.Existing(ctx, tx, t.dest, t.IDs()); err != nil {
				return db.Classify(err, "existing-ids")
			}
			if t.stillThere, err = drain.Existing(ctx, tx, t.dest, t.Uncommitted); err != nil {
				return db.Classify(err, "existing-ids")
			}
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// restorePlanLines describes the plan by operation, and counts the rows it will insert and
// the rows selected.
func restorePlanLines(targets []restoreTarget, leftOut []*drain.ArchivedOperation, names func([]drain.ArchiveShard) string) (lines []string, toInsert, selected int) {
	for _, t := range targets {
		op := t.Op
		fresh := len(t.Rows) - len(t.present)
		toInsert += fresh
		selected += len(t.Rows)
		line := fmt.Sprintf("operation %s (%s by %s at %s, %s): reinsert %d of %d row(s) into %s, %s, ids %s",
			op.ID, textsafe.Clean(op.Command), textsafe.Clean(op.User), op.Started.UTC().Format("2006-01-02T15:04:05Z"), reasonText(textsafe.Clean(op.Reason)),
			fresh, len(t.Rows), textsafe.Clean(qualifiedName(t.dest.Schema, t.dest.Table)), textsafe.Clean(names(t.Shards())), noneIfEmpty(drain.IDRanges(t.IDs(), 8)))
		if len(t.present) > 0 {
			line += fmt.Sprintf("; %d already in the table (ids %s), skipped", len(t.present), drain.IDRanges(keys(t.present), 8))
		}
		lines = append(lines, line)
		if op.Legacy {
			lines = append(lines, "operation "+op.ID+": "+drain.LegacyLimits)
		}
		if n := len(t.SettledCommitted); n > 0 {
			lines = append(lines, fmt.Sprintf("operation %s: %d staged row(s) with no commit marker (ids %s) restored: every row their batch staged is gone from the table, so its DELETE committed (settled against the table)",
				op.ID, n, drain.IDRanges(t.SettledCommitted, 8)))
		}
		if rest := unsettled(t.PlannedOperation); len(rest) > 0 {
			still := 0
			for _, id := range rest {
				if t.stillThere[id] {
					still++
				}
			}
			did := "not restored"
			if t.IncludeUncommitted() {
				did = "restored as --include-uncommitted asks"
			}
			lines = append(lines, fmt.Sprintf("operation %s: %d staged row(s) with no commit marker (ids %s), %s: %d still in the table (their DELETE never committed), %d missing%s",
				op.ID, len(rest), drain.IDRanges(rest, 8), did, still, len(rest)-still, missingHint(len(t.LeftOut), op.ID)))
		}
		if n := len(t.Aborted); n > 0 {
			lines = append(lines, fmt.Sprintf("operation %s: %d row(s) whose DELETE rolled back (ids %s): never deleted, not restored", op.ID, n, drain.IDRanges(t.Aborted, 8)))
		}
	}
	for _, op := range leftOut {
		lines = append(lines, fmt.Sprintf("left out: skip operation %s (%s, %s): poison messages; to restore them add --operation %s (or --include-skipped)",
			op.ID, textsafe.Clean(op.User), reasonText(textsafe.Clean(op.Reason)), op.ID))
	}
	return lines, toInsert, selected
}

// shardNames names the shards a plan's rows go into as --shard takes them
// (ORGANIZATION_SCOPE/42, with the control outbox's cell), so the operator sees where rows go
// before confirming: an edit of an unverified archive shows up there.
func (d factory) shardNames() (func([]drain.ArchiveShard) string, error) {
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	return func(shards []drain.ArchiveShard) string {
		if len(shards) == 0 {
			return "no shard"
		}
		parts := make([]string, 0, len(shards))
		for _, s := range shards {
			if s.Scope == drain.MailboxScope && s.Cell != nil {
				parts = append(parts, fmt.Sprintf("webhook mailbox %q", *s.Cell))
				continue
			}
			name := fmt.Sprintf("%s/%d", reg.ScopeName(s.Scope), s.ID)
			if s.Cell != nil {
				name += fmt.Sprintf(" in cell %q", *s.Cell)
			}
			parts = append(parts, name)
		}
		if len(parts) == 1 {
			return "shard " + parts[0]
		}
		return "shards " + strings.Join(parts, ", ")
	}, nil
}

func missingHint(leftOut int, opID string) string {
	if leftOut == 0 {
		return ""
	}
	return fmt.Sprintf(", left out: its batch's other rows are in the table, so restore cannot tell whether its DELETE committed (--operation %s --include-uncommitted restores them)", opID)
}

// unsettled are the staged ids with no marker that Settle did not find committed.
func unsettled(p drain.PlannedOperation) []int64 {
	var out []int64
	for _, id := range p.Uncommitted {
		if _, found := slices.BinarySearch(p.SettledCommitted, id); !found {
			out = append(out, id)
		}
	}
	return out
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func qualifiedName(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}
