package live

import (
	"slices"
	"strconv"

	"github.com/outboxctl/outboxctl/internal/render"
)

// Layout keeps a watched document's columns in one order from frame to frame. A frame's
// columns may differ from the last frame's: a fan-out adds a column only one context has
// (region_name, when a control-silo context answers beside a cell's), so a context that
// fails for a frame, or answers again, would move the others; a column may be
// missing from one frame and back in the next. Each table is shown in the order of the
// first frame that had its columns; a column new to the watch goes after the column it
// follows in its frame (first, if it is first) and keeps that place in every later frame.
type Layout struct {
	order map[string][]string // section: every column seen, in the order shown
}

// Apply returns doc with each table's columns (and their cells) in the watch's order.
func (l *Layout) Apply(doc render.Doc) render.Doc {
	if l.order == nil {
		l.order = map[string][]string{}
	}
	out := make(render.Doc, len(doc))
	for i, s := range doc {
		if s.Table != nil {
			key := strconv.Itoa(i) + "\x00" + s.Name
			l.order[key] = learn(l.order[key], s.Table.Columns)
			s.Table = arranged(s.Table, l.order[key])
		}
		out[i] = s
	}
	return out
}

// learn adds to order, the columns seen so far, each column of cols it lacks, right after
// the column before it in cols.
func learn(order, cols []string) []string {
	order = slices.Clone(order)
	for i, c := range cols {
		if slices.Contains(order, c) {
			continue
		}
		at := 0
		if i > 0 {
			at = slices.Index(order, cols[i-1]) + 1
		}
		order = slices.Insert(order, at, c)
	}
	return order
}

// arranged is t with its columns in order (every column of t is in order).
func arranged(t *render.Table, order []string) *render.Table {
	perm := make([]int, 0, len(t.Columns))
	for _, c := range order {
		if j := slices.Index(t.Columns, c); j >= 0 {
			perm = append(perm, j)
		}
	}
	if slices.IsSorted(perm) {
		return t
	}
	out := *t
	out.Columns = make([]string, len(perm))
	for k, j := range perm {
		out.Columns[k] = t.Columns[j]
	}
	out.Rows = make([][]any, len(t.Rows))
	for r, row := range t.Rows {
		cells := make([]any, len(perm))
		for k, j := range perm {
			cells[k] = row[j]
		}
		out.Rows[r] = cells
	}
	return &out
}
