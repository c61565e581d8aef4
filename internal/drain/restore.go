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
	// of batches that rolled back. Neither is restored (Uncommitted is with IncludeUncommitted).
	Uncommitted, Aborted []int64
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
	p := PlannedOperation{Op: op}
	for _, b := range op.Batches {
		switch b.State {
		case BatchCommitted, BatchLegacy:
			p.Rows = append(p.Rows, filterRows(b.Restorable(), keep)...)
		case BatchAborted:
			p.Aborted = append(p.Aborted, rowIDs(filterRows(b.Rows, keep))...)
		case BatchStaged:
			rows := filterRows(b.Rows, keep)
			p.Uncommitted = append(p.Uncommitted, rowIDs(rows)...)
			if uncommitted {
				p.Rows = append(p.Rows, rows...)
			}
		}
	}
	slices.SortFunc(p.Rows, func(a, b Row) int { return cmp.Compare(a.ID, b.ID) })
	p.Rows = slices.CompactFunc(p.Rows, func(a, b Row) bool { return a.ID == b.ID })
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
