package fanout

import (
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// Answer is the document one context's read returned.
type Answer struct {
	Context string
	Doc     render.Doc
}

// SortKey is one sort key of a merged section: a column, descending or not, as the
// single-target SQL's ORDER BY has it.
type SortKey struct {
	Column string
	Desc   bool
}

// Asc sorts by column, ascending.
func Asc(column string) SortKey { return SortKey{Column: column} }

// Desc sorts by column, descending.
func Desc(column string) SortKey { return SortKey{Column: column, Desc: true} }

// Order is how MergeDocs sorts the merged rows: Keys by section name, and Ranks, the
// columns whose text sorts by its place in a list rather than alphabetically (a severity:
// ok, warn, crit).
type Order struct {
	Keys  map[string][]SortKey
	Ranks map[string][]string
}

// MergeDocs joins the answers' sections by name, in the answers' order: tables gain a
// leading context column and are sorted as the single-target command sorts them; cards
// become one row per context; footers are kept, one line per context. Rows that compare
// equal keep the contexts' order.
func MergeDocs(answers []Answer, order Order) render.Doc {
	var out render.Doc
	index := map[string]int{}
	for _, a := range answers {
		for _, sec := range a.Doc {
			i, ok := index[sec.Name]
			if !ok {
				i, index[sec.Name] = len(out), len(out)
				out = append(out, render.Section{Name: sec.Name, Title: sec.Title, Table: tagged(sec)})
			}
			appendRows(&out[i], a.Context, sec)
		}
	}
	for i := range out {
		sortRows(out[i].Table, order.Keys[out[i].Name], order.Ranks)
	}
	return out
}

// tagged is an empty table with a section's columns behind a context column.
func tagged(sec render.Section) *render.Table {
	t := &render.Table{Columns: []string{ContextColumn}, Rows: [][]any{}, MachineOnly: map[string]bool{}, HumanOnly: map[string]bool{}}
	if sec.Table == nil {
		for _, f := range sec.Card {
			t.Columns = append(t.Columns, f.Key)
			t.MachineOnly[f.Key], t.HumanOnly[f.Key] = f.MachineOnly, f.HumanOnly
		}
		return t
	}
	t.Columns = append(t.Columns, sec.Table.Columns...)
	t.Labels, t.Priority = sec.Table.Labels, sec.Table.Priority
	for k, v := range sec.Table.MachineOnly {
		t.MachineOnly[k] = v
	}
	for k, v := range sec.Table.HumanOnly {
		t.HumanOnly[k] = v
	}
	return t
}

// appendRows adds one context's rows (or card) to a merged section, by column name so a
// column one context lacks stays empty rather than shifting the others, and a column only a
// later context has is added (empty in the rows before): depth's estimated column, say,
// when one context's answer is an estimate and another's is counted.
func appendRows(dst *render.Section, name string, sec render.Section) {
	var cols []string
	var rows [][]any
	if sec.Table != nil {
		cols, rows = sec.Table.Columns, sec.Table.Rows
	} else if len(sec.Card) > 0 {
		row := make([]any, len(sec.Card))
		for i, f := range sec.Card {
			cols, row[i] = append(cols, f.Key), f.Value
		}
		rows = [][]any{row}
	}
	for j, c := range cols {
		if !slices.Contains(dst.Table.Columns, c) {
			at := newColumnAt(dst.Table.Columns, cols[:j])
			dst.Table.Columns = slices.Insert(dst.Table.Columns, at, c)
			for i := range dst.Table.Rows {
				dst.Table.Rows[i] = slices.Insert(dst.Table.Rows[i], at, any(nil))
			}
			adoptColumn(dst.Table, sec.Table, c)
		}
	}
	for _, r := range rows {
		out := make([]any, len(dst.Table.Columns))
		out[0] = name
		for j, c := range cols {
			if k := slices.Index(dst.Table.Columns, c); k > 0 {
				out[k] = r[j]
			}
		}
		dst.Table.Rows = append(dst.Table.Rows, out)
	}
	if sec.Footer != "" {
		dst.Footer = strings.TrimPrefix(dst.Footer+"\n"+name+": "+sec.Footer, "\n")
	}
}

// newColumnAt is where a column a later context adds goes: right after the last of the
// columns before it in that context's table (before, all in columns by now), so that it
// reads where the single-target command prints it (depth's estimated column beside depth),
// not after every other column; after the context column when none is before it.
func newColumnAt(columns, before []string) int {
	at := 1
	for _, b := range before {
		if k := slices.Index(columns, b); k >= at {
			at = k + 1
		}
	}
	return at
}

// adoptColumn gives a column a later context added the header, priority and flags that
// context's table gives it (region_name's "cell"), so the column reads the same whichever
// context answered first.
func adoptColumn(dst, src *render.Table, c string) {
	if src == nil {
		return
	}
	if l, ok := src.Labels[c]; ok {
		dst.Labels = copyWith(dst.Labels, c, l)
	}
	if p, ok := src.Priority[c]; ok {
		dst.Priority = copyWith(dst.Priority, c, p)
	}
	dst.MachineOnly[c], dst.HumanOnly[c] = src.MachineOnly[c], src.HumanOnly[c]
}

// copyWith is m with k set to v, copied: the merged table shares the first context's maps.
func copyWith[V any](m map[string]V, k string, v V) map[string]V {
	out := make(map[string]V, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// sortRows orders merged rows by the section's keys; equal rows keep the contexts' order.
func sortRows(t *render.Table, keys []SortKey, ranks map[string][]string) {
	var ks []Key
	for _, k := range keys {
		if i := slices.Index(t.Columns, k.Column); i >= 0 {
			ks = append(ks, Key{Index: i, Desc: k.Desc})
		}
	}
	if len(ks) == 0 {
		return
	}
	compare := ByColumns(ks...)
	slices.SortStableFunc(t.Rows, func(a, b []any) int {
		return compare(ranked(a, t, keys, ranks), ranked(b, t, keys, ranks))
	})
}

// ranked is a row with each ranked column's text replaced by its rank.
func ranked(row []any, t *render.Table, keys []SortKey, ranks map[string][]string) []any {
	out := row
	for _, k := range keys {
		if i := slices.Index(t.Columns, k.Column); i >= 0 && ranks[k.Column] != nil {
			if &out[0] == &row[0] {
				out = slices.Clone(row)
			}
			out[i] = int64(slices.Index(ranks[k.Column], render.Plain(row[i])))
		}
	}
	return out
}
