package repair

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Restore puts an archive's rows back (outboxctl restore FILE). Unlike the other repairs it
// reads its input before it connects, even for --print-sql: Prepare reads the archive file
// and chooses what to restore, so a file restore refuses (edited, unverified, a selection it
// does not hold) is refused before any database is asked.
type Restore struct {
	Env
	Path string
	// MaxLine caps one archive line (--max-line-bytes).
	MaxLine   int64
	Selection drain.RestoreSelection
	Reason    string
	// PlanTarget is the plan's target line (the database and schema: the tables are the
	// operations', named in their lines).
	PlanTarget string
	// Registry names the shards in the plan and the script, as --shard takes them.
	Registry func() (*enums.Registry, error)

	// What Prepare read: the file, the plan, and how the shards are named.
	file  *drain.ArchiveFile
	plan  *drain.RestorePlan
	names func([]drain.ArchiveShard) string
}

// WebhookScriptError is --print-sql refused for an operation that holds webhook payloads:
// their requests hold secrets (signatures, tokens), which restore never prints.
type WebhookScriptError struct{ Path, Op string }

func (e *WebhookScriptError) Error() string {
	return fmt.Sprintf("operation %s holds a webhook payload, whose request holds secrets (signatures, tokens): restore prints no SQL for it; --dry-run shows the plan", e.Op)
}

// Prepare reads the archive and plans what to restore from it, warning of lines a kill cut
// short and of operations restored unverified. It returns false when the file holds no
// operation (said in a note): there is nothing to plan, print or confirm. Its errors are
// drain's (*drain.SelectionError, *drain.UnverifiedError: the command line's to fix).
func (r *Restore) Prepare() (bool, error) {
	f, err := drain.ReadArchiveFile(r.Path, r.MaxLine)
	if err != nil {
		return false, err
	}
	// A cut line is a row staged before its DELETE (never deleted) or a commit marker (its
	// batch then reads as staged, and restore checks which of its rows are in the table).
	if f.Truncated {
		r.Warnf("%s: the last line was cut short (a write a kill interrupted; its batch, if any, reads as staged): ignored", r.Path)
	}
	for _, n := range f.Torn {
		r.Warnf("%s: line %d was cut short by a kill and a later run went on after it (its batch, if any, reads as staged): skipped", r.Path, n)
	}
	if len(f.Operations) == 0 {
		r.Notef("%s holds no operations: nothing to restore", r.Path)
		return false, nil
	}
	plan, err := drain.PlanRestore(f, r.Selection)
	if err != nil {
		return false, err
	}
	for _, op := range plan.Operations {
		if !op.Op.Verified() {
			r.Warnf("%s: operation %s %s; restored as --unverified asks: compare the plan's shard and ids with what was deleted before confirming", r.Path, op.Op.ID, drain.UnverifiedNote)
		}
	}
	names, err := r.shardNames()
	if err != nil {
		return false, err
	}
	r.file, r.plan, r.names = f, plan, names
	return true, nil
}

// Script is the printed script as one text; WriteScript writes it as it is rendered, which
// the runner prefers: an archive's payloads can be hundreds of MiB.
func (r *Restore) Script(preamble []string) ([]string, error) {
	var b strings.Builder
	if err := r.WriteScript(preamble, &b); err != nil {
		return nil, err
	}
	return []string{b.String()}, nil
}

// WriteScript writes --print-sql's INSERTs, in one transaction, as they would run
// (query.RestoreScript), each operation's header naming the shards its rows go into.
func (r *Restore) WriteScript(preamble []string, w io.Writer) error {
	for _, op := range r.plan.Operations {
		if op.Op.Table == query.MailboxTable { // a webhook payload's request holds secrets: never printed
			return &WebhookScriptError{Path: r.Path, Op: op.Op.ID}
		}
	}
	sc := query.RestoreScript{Preamble: preamble}
	for _, op := range r.plan.Operations {
		ro := query.RestoreOperation{ID: op.Op.ID, Command: textsafe.Clean(op.Op.Command), Rows: len(op.Rows), Into: textsafe.Clean(r.names(op.Shards()))}
		if op.Op.Legacy {
			ro.Notes = append(ro.Notes, drain.LegacyLimits)
		}
		if !op.Op.Verified() {
			ro.Notes = append(ro.Notes, "not verified: the operation "+drain.UnverifiedNote)
		}
		if len(op.Rows) > 0 {
			ro.Statements = drain.RestoreStatements(op.Op.Destination(r.Schema), op.Rows, r.Reason)
		}
		sc.Operations = append(sc.Operations, ro)
	}
	for _, op := range r.plan.LeftOut {
		sc.LeftOut = append(sc.LeftOut, op.ID)
	}
	return sc.RenderTo(w)
}

// restoreTarget is one planned operation with its destination and what the table holds.
type restoreTarget struct {
	drain.PlannedOperation
	dest drain.Destination
	// present are the planned ids already in the table; stillThere the uncommitted ids that
	// are (as they should be: their DELETE never committed).
	present, stillThere map[int64]bool
}

// restoreDetail is what Plan read for Apply.
type restoreDetail struct {
	targets            []restoreTarget
	toInsert, selected int
}

// Plan checks the table: which ids it holds already, and how each batch the archive holds
// no marker for settled. With nothing to insert the plan is Nothing, its lines noted and the
// summary printed all the same (a script reads one whatever happened).
func (r *Restore) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	targets, err := r.targets(ctx, conn)
	if err != nil {
		return Plan{}, err
	}
	lines, toInsert, selected := r.planLines(targets)
	d := restoreDetail{targets: targets, toInsert: toInsert, selected: selected}
	if toInsert > 0 {
		return Plan{Target: r.PlanTarget, Lines: lines, detail: d}, nil
	}
	// Nothing to write, so nothing to confirm and no transaction to open.
	p := Plan{Lines: lines, Nothing: fmt.Sprintf("nothing to restore: all %d selected row(s) are already in the table", selected)}
	if selected == 0 {
		p.Nothing = "nothing to restore: no committed archived row matches the selection"
	}
	sum := r.summary(d, 0)
	p.NothingDoc, p.NothingErr = sum.Doc, sum.Err
	return p, nil
}

// Apply reinserts the planned rows in one transaction.
func (r *Restore) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d := p.detail.(restoreDetail)
	var progress Progress = noProgress{}
	if r.Progress != nil {
		progress = r.Progress(ctx, "restored", int64(d.toInsert), false)
	}
	inserted, err := reinsert(ctx, conn, d.targets, r.Reason, progress.Set)
	progress.Done()
	if err != nil {
		return Summary{}, err
	}
	sum := r.summary(d, inserted)
	sum.Audit = []Audit{{"restore", restoreAudit(r.file.Path, operationIDs(d.targets), inserted, int64(d.selected)-inserted, r.Reason)}}
	return sum, nil
}

// summary is restore's card, and its verdict: rows left out though the table lacks them
// are never exit 0.
func (r *Restore) summary(d restoreDetail, inserted int64) Summary {
	leftOut, settled := []drain.LeftOutRow{}, 0
	for _, t := range d.targets {
		leftOut = append(leftOut, t.LeftOut...)
		settled += len(t.SettledCommitted)
	}
	// The rows are back at their shards' heads: next is what doctor now says of them.
	sum := Summary{Doc: render.Doc{{Name: "restore", Card: render.FieldsOf(drain.RestoreSummary{
		Archive: r.file.Path, Operations: strings.Join(operationIDs(d.targets), ", "), Inserted: inserted, Skipped: int64(d.selected) - inserted,
		Next: render.Commands{r.Next(nil, "doctor", "--check", "stuck")}, CommittedUnmarked: settled, LeftOut: leftOut})}}}
	if len(leftOut) > 0 {
		sum.Err = partialf("restore: %d row(s) left out though the table lacks them (ids %s; -o json names each with its reason in left_out): their batch has no commit marker and restore cannot tell whether its DELETE committed; check them, then restore them with --include-uncommitted",
			len(leftOut), drain.IDRanges(leftOutIDs(leftOut), 8))
	}
	return sum
}

func operationIDs(targets []restoreTarget) []string {
	ops := make([]string, len(targets))
	for i, t := range targets {
		ops[i] = t.Op.ID
	}
	return ops
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
// telling progress the count after each operation's rows.
func reinsert(ctx context.Context, conn *db.Conn, targets []restoreTarget, reason string, progress func(int64)) (int64, error) {
	var inserted int64
	err := db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		for _, t := range targets {
			// An id that exists is left alone by its INSERT (ON CONFLICT DO NOTHING): a row
			// is never inserted twice, and restore run twice inserts nothing the second time.
			n, err := drain.Reinsert(ctx, tx, drain.RestoreStatements(t.dest, t.Rows, reason))
			if err != nil {
				return db.Classify(err, "restore-row")
			}
			inserted += n
			progress(inserted)
		}
		return nil
	})
	return inserted, err
}

// targets introspects each operation's table and reads which ids it holds. Schema, when
// given (--schema), is where the rows go instead of the schema recorded.
func (r *Restore) targets(ctx context.Context, conn *db.Conn) ([]restoreTarget, error) {
	plan := r.plan
	// A batch whose outcome the archive does not record is settled against the table first
	// (its rows are restored when every one it staged is gone), read FOR SHARE: a killed
	// run's COMMIT the server still finishes is waited for, never read as not committed.
	unmarked := make([]map[int64]bool, len(plan.Operations))
	for i, p := range plan.Operations {
		d := p.Op.Destination(r.Schema)
		var err error
		if unmarked[i], err = drain.PresentLocked(ctx, conn, query.Target{Silo: query.SiloCell, Schema: d.Schema, Table: d.Table}, p.UnmarkedIDs()); err != nil {
			return nil, err
		}
	}
	var out []restoreTarget
	err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		for i, p := range plan.Operations {
			t := restoreTarget{PlannedOperation: p, dest: p.Op.Destination(r.Schema)}
			sch, err := outbox.LoadCatalog(ctx, tx, t.dest.Schema, []string{t.dest.Table})
			if err != nil {
				return err
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

// planLines describes the plan by operation, and counts the rows it will insert and the rows
// selected.
func (r *Restore) planLines(targets []restoreTarget) (lines []string, toInsert, selected int) {
	for _, t := range targets {
		op := t.Op
		fresh := len(t.Rows) - len(t.present)
		toInsert += fresh
		selected += len(t.Rows)
		line := fmt.Sprintf("operation %s (%s by %s at %s, %s): reinsert %d of %d row(s) into %s, %s, ids %s",
			op.ID, textsafe.Clean(op.Command), textsafe.Clean(op.User), op.Started.UTC().Format("2006-01-02T15:04:05Z"), drain.ReasonText(textsafe.Clean(op.Reason)),
			fresh, len(t.Rows), textsafe.Clean(qualifiedName(t.dest.Schema, t.dest.Table)), textsafe.Clean(r.names(t.Shards())), noneIfEmpty(drain.IDRanges(t.IDs(), 8)))
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
	for _, op := range r.plan.LeftOut {
		lines = append(lines, fmt.Sprintf("left out: skip operation %s (%s, %s): poison messages; to restore them add --operation %s (or --include-skipped)",
			op.ID, textsafe.Clean(op.User), drain.ReasonText(textsafe.Clean(op.Reason)), op.ID))
	}
	return lines, toInsert, selected
}

// shardNames names the shards a plan's rows go into as --shard takes them
// (ORGANIZATION_SCOPE/42, with the control outbox's cell), so the operator sees where rows go
// before confirming: an edit of an unverified archive shows up there.
func (r *Restore) shardNames() (func([]drain.ArchiveShard) string, error) {
	reg, err := r.Registry()
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
