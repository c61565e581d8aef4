package drain

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RestoreSelection chooses which operations and rows of an archive restore puts back.
type RestoreSelection struct {
	// Operations names operations by id (a named skip is restored).
	Operations []string
	// All selects every operation of the file except skips (unless IncludeSkipped).
	All bool
	// IncludeSkipped adds skip operations (poison messages) to All or to a file's only
	// operation.
	IncludeSkipped bool
	// IncludeUncommitted also restores staged batches without a commit marker: for a batch
	// whose commit marker was lost; ids that still exist are skipped by the INSERT.
	IncludeUncommitted bool
	// Unverified allows operations that carry no checksum (not Verified): an old archive, or
	// one whose checksum fields were removed, which restore cannot tell apart.
	Unverified bool
	// IDs and Shard filter the rows (empty: every row).
	IDs   []int64
	Shard *ShardFilter
}

// ShardFilter keeps the rows of one shard.
type ShardFilter struct {
	Scope int
	ID    int64
}

// PlannedOperation is what restore does with one operation.
type PlannedOperation struct {
	Op *ArchivedOperation
	// Rows are the rows to reinsert, by id.
	Rows []Row
	// Uncommitted lists the ids (filtered) of staged batches with no marker; Aborted the ids
	// of batches that rolled back. Neither is restored (Uncommitted is with IncludeUncommitted,
	// or once Settle finds its batch committed).
	Uncommitted, Aborted []int64
	// Unmarked are the staged batches with no marker, for Settle.
	Unmarked []UnmarkedBatch
	// SettledCommitted are the ids (filtered) of unmarked batches Settle found committed: every
	// id the batch staged is gone from the table. They are in Rows.
	SettledCommitted []int64
	// LeftOut are the ids (filtered) restore leaves out though they are not in the table, and
	// why: an unmarked batch Settle could not decide (some of its ids are in the table, some
	// not), without IncludeUncommitted.
	LeftOut     []LeftOutRow
	uncommitted bool
}

// UnmarkedBatch is a batch an operation staged whose outcome the archive does not record (a
// kill or a full disk between its DELETE and its marker, a marker cut short, a COMMIT whose
// settle could not tell).
type UnmarkedBatch struct {
	Seq int
	// IDs are every id the batch staged (what settles it, whatever the selection); Rows the
	// rows of it the selection keeps.
	IDs  []int64
	Rows []Row
}

// LeftOutRow is a row restore did not put back though the table lacks it: restore's JSON
// names each, and its exit is not 0.
type LeftOutRow struct {
	Operation string `json:"operation"`
	ID        int64  `json:"id"`
	Reason    string `json:"reason"`
}

// ReasonUnsettled is why a row of an unmarked batch that Settle could not decide is left out.
const ReasonUnsettled = "unsettled: its batch has no commit marker and some of its rows are in the table and some are not (its DELETE rolled back and another session deleted these since, or it committed and some rows were restored since): --include-uncommitted restores them"

// UnmarkedIDs are every id the operation's unmarked batches staged: what Settle is told the
// table holds of.
func (p PlannedOperation) UnmarkedIDs() []int64 {
	var ids []int64
	for _, b := range p.Unmarked {
		ids = append(ids, b.IDs...)
	}
	return ids
}

// Settle decides each unmarked batch from which of its ids the table holds (present): none
// means its DELETE committed (a transaction commits whole; an id another session deleted
// since is gone either way), so its rows are restored as a committed batch's are; all means it
// did not; some means restore cannot tell, and the rows not in the table are left out (named
// in LeftOut) unless IncludeUncommitted restores them.
func (p *PlannedOperation) Settle(present map[int64]bool) {
	for _, b := range p.Unmarked {
		gone := 0
		for _, id := range b.IDs {
			if !present[id] {
				gone++
			}
		}
		switch {
		case gone == 0:
		case gone == len(b.IDs):
			p.SettledCommitted = append(p.SettledCommitted, rowIDs(b.Rows)...)
			if !p.uncommitted { // else its rows are in Rows already
				p.Rows = append(p.Rows, b.Rows...)
			}
		case !p.uncommitted:
			for _, r := range b.Rows {
				if !present[r.ID] {
					p.LeftOut = append(p.LeftOut, LeftOutRow{Operation: p.Op.ID, ID: r.ID, Reason: ReasonUnsettled})
				}
			}
		}
	}
	p.sortRows()
	slices.Sort(p.SettledCommitted)
}

// IncludeUncommitted says whether the plan restores unmarked batches whatever Settle finds.
func (p PlannedOperation) IncludeUncommitted() bool { return p.uncommitted }

func (p *PlannedOperation) sortRows() {
	slices.SortFunc(p.Rows, func(a, b Row) int { return cmp.Compare(a.ID, b.ID) })
	p.Rows = slices.CompactFunc(p.Rows, func(a, b Row) bool { return a.ID == b.ID })
}

// RestorePlan is restore's plan for one archive file.
type RestorePlan struct {
	Operations []PlannedOperation
	// LeftOut are the skip operations --all did not select.
	LeftOut []*ArchivedOperation
}

// SelectionError is a selection restore cannot carry out as given (a usage error).
type SelectionError struct{ Msg string }

func (e *SelectionError) Error() string { return e.Msg }

// EditedError is an operation restore refuses because its lines are not as outboxctl wrote
// them (ArchivedOperation.Problem).
type EditedError struct {
	Path string
	Op   *ArchivedOperation
}

func (e *EditedError) Error() string {
	return fmt.Sprintf("%s: operation %s: %v: the archive was edited after outboxctl wrote it, so nothing was restored; restore from an unedited copy, or choose the file's other operations with --operation",
		e.Path, e.Op.ID, e.Op.Problem)
}

// UnverifiedError is an operation that is not Verified, chosen without
// RestoreSelection.Unverified.
type UnverifiedError struct {
	Path string
	Op   *ArchivedOperation
}

func (e *UnverifiedError) Error() string {
	return fmt.Sprintf("%s: operation %s %s, so nothing was restored: compare the plan's shard and ids with what was deleted and pass --unverified to restore it, or choose the file's other operations with --operation",
		e.Path, e.Op.ID, UnverifiedNote)
}

// OperationList names a file's operations for an error message, one line.
func (f *ArchiveFile) OperationList() string {
	parts := make([]string, 0, len(f.Operations))
	for _, o := range f.Operations {
		parts = append(parts, fmt.Sprintf("%s (%s, %d rows)", o.ID, o.Command, o.rowCount()))
	}
	return strings.Join(parts, ", ")
}

func (o *ArchivedOperation) rowCount() int {
	n := 0
	for _, b := range o.Batches {
		n += len(b.Rows)
	}
	return n
}

// PlanRestore chooses the operations and rows to restore. A file of several operations needs
// Operations or All; a skip is restored only when named (Operations) or IncludeSkipped.
func PlanRestore(f *ArchiveFile, sel RestoreSelection) (*RestorePlan, error) {
	ops, leftOut, err := f.choose(sel)
	if err != nil {
		return nil, err
	}
	plan := &RestorePlan{LeftOut: leftOut}
	keep := sel.filter()
	for _, op := range ops {
		if op.Problem != nil {
			return nil, &EditedError{Path: f.Path, Op: op}
		}
	}
	for _, op := range ops {
		if !op.Verified() && !sel.Unverified {
			return nil, &UnverifiedError{Path: f.Path, Op: op}
		}
	}
	for _, op := range ops {
		plan.Operations = append(plan.Operations, planOperation(op, keep, sel.IncludeUncommitted))
	}
	return plan, nil
}

func (f *ArchiveFile) choose(sel RestoreSelection) (ops, leftOut []*ArchivedOperation, err error) {
	switch {
	case len(f.Operations) == 0:
		return nil, nil, nil
	case len(sel.Operations) > 0:
		for _, id := range sel.Operations {
			i := slices.IndexFunc(f.Operations, func(o *ArchivedOperation) bool { return o.ID == id })
			if i < 0 {
				return nil, nil, &SelectionError{fmt.Sprintf("no operation %q in %s: it holds %s", id, f.Path, f.OperationList())}
			}
			if !slices.Contains(ops, f.Operations[i]) {
				ops = append(ops, f.Operations[i])
			}
		}
		return ops, nil, nil
	case sel.All || len(f.Operations) == 1:
		for _, o := range f.Operations {
			if o.Skip() && !sel.IncludeSkipped {
				leftOut = append(leftOut, o)
				continue
			}
			ops = append(ops, o)
		}
		if !sel.All && len(ops) == 0 {
			o := leftOut[0]
			return nil, nil, &SelectionError{fmt.Sprintf("%s holds only skip operation %s (%d skipped row(s), poison messages): name it with --operation %s, or pass --include-skipped", f.Path, o.ID, o.rowCount(), o.ID)}
		}
		return ops, leftOut, nil
	}
	return nil, nil, &SelectionError{fmt.Sprintf("%s holds %d operations: choose with --operation ID or --all (skips excluded): %s", f.Path, len(f.Operations), f.OperationList())}
}

func (sel RestoreSelection) filter() func(Row) bool {
	ids := map[int64]bool{}
	for _, id := range sel.IDs {
		ids[id] = true
	}
	return func(r Row) bool {
		if len(ids) > 0 && !ids[r.ID] {
			return false
		}
		return sel.Shard == nil || (r.ShardScope == sel.Shard.Scope && r.ShardID == sel.Shard.ID)
	}
}

func planOperation(op *ArchivedOperation, keep func(Row) bool, uncommitted bool) PlannedOperation {
	p := PlannedOperation{Op: op, uncommitted: uncommitted}
	for _, b := range op.Batches {
		switch b.State {
		case BatchCommitted, BatchLegacy:
			p.Rows = append(p.Rows, filterRows(b.Restorable(), keep)...)
		case BatchAborted:
			p.Aborted = append(p.Aborted, rowIDs(filterRows(b.Rows, keep))...)
		case BatchStaged:
			rows := filterRows(b.Rows, keep)
			p.Uncommitted = append(p.Uncommitted, rowIDs(rows)...)
			p.Unmarked = append(p.Unmarked, UnmarkedBatch{Seq: b.Seq, IDs: rowIDs(b.Rows), Rows: rows})
			if uncommitted {
				p.Rows = append(p.Rows, rows...)
			}
		}
	}
	p.sortRows()
	slices.Sort(p.Uncommitted)
	slices.Sort(p.Aborted)
	return p
}

func filterRows(rows []Row, keep func(Row) bool) []Row {
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func rowIDs(rows []Row) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// Shards returns the shards the rows to restore go into, in the order of their first row:
// one for an operation outboxctl wrote, maybe more for an old-format one (whose consecutive
// runs of one command and reason read as one operation).
func (p PlannedOperation) Shards() []ArchiveShard {
	var out []ArchiveShard
	for _, r := range p.Rows {
		s := ArchiveShard{Scope: r.ShardScope, ID: r.ShardID, Cell: r.Cell}
		if !slices.ContainsFunc(out, s.same) {
			out = append(out, s)
		}
	}
	return out
}

// IDs returns the ids of the rows to restore, ascending.
func (p PlannedOperation) IDs() []int64 { return rowIDs(p.Rows) }

// IDRanges writes ascending ids as ranges ("3-5, 9, 12-40"), at most max ranges, then "…".
func IDRanges(ids []int64, max int) string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	var parts []string
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] <= sorted[j]+1 {
			j++
		}
		if len(parts) == max {
			parts = append(parts, "…")
			break
		}
		if sorted[i] == sorted[j] {
			parts = append(parts, strconv.FormatInt(sorted[i], 10))
		} else {
			parts = append(parts, strconv.FormatInt(sorted[i], 10)+"-"+strconv.FormatInt(sorted[j], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
