// Package report turns query results into documents a person or a script reads: enum
// integers get their names beside them (UNKNOWN(n) for values this build does not know),
// and columns get short labels on a terminal. It decides what is shown, not how.
package report

import (
	"slices"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// labels are the terminal headers of long column names.
var labels = map[string]string{ //nolint:gochecknoglobals // constant table
	"shard_identifier":   "shard",
	"category_name":      "category",
	"category_names":     "categories",
	"head_category_name": "head category",
	"coalesce_groups":    "groups",
	"object_identifier":  "object",
	"region_name":        "cell",
	"cell_name":          "cell",
	"last_delay_seconds": "last delay",
}

// dueColumns hold a schedule (a person reads "due now", "in 4m", "never attempted");
// ratioColumns a fraction (read as a percentage). Machine output keeps the value as it is.
var (
	dueColumns   = map[string]bool{"scheduled_for": true, "next_attempt": true}       //nolint:gochecknoglobals // constant table
	ratioColumns = map[string]bool{"progress": true, "fraction": true, "share": true} //nolint:gochecknoglobals // constant table
)

// cellOf reads column c (at i) of a row, typed for the printer by its name.
func cellOf(c string, i int) func(r []any) any {
	if dueColumns[c] || ratioColumns[c] || c == "payload" {
		return func(r []any) any { return Typed(c, r[i]) }
	}
	return func(r []any) any { return r[i] }
}

// Typed is a cell of column c as the printer should read it: a schedule as render.Due, a
// fraction as render.Ratio, a payload as render.JSONText (nested in JSON output when it is
// valid JSON, as the handler document does), anything else (and NULL) as it is. Tables built outside report
// (backfill status) call it for their cells.
func Typed(c string, v any) any {
	switch x := v.(type) {
	case time.Time:
		if dueColumns[c] {
			return render.Due(x)
		}
	case float64:
		if ratioColumns[c] {
			return render.Ratio(x)
		}
	case string:
		if c == "payload" {
			return render.JSONText(x)
		}
	case []byte: // a jsonb payload read without a cast
		if c == "payload" {
			return render.JSONText(x)
		}
	}
	return v
}

// Decorator adds enum names to rows of one result shape, row by row, so a streamed result
// is decorated exactly like a collected one.
type Decorator struct {
	Columns     []string
	Labels      map[string]string
	MachineOnly map[string]bool
	plan        []func(row []any) any
}

// NewDecorator plans the name columns for a result with the given columns.
func NewDecorator(reg *enums.Registry, columns []string) *Decorator {
	d := &Decorator{Labels: map[string]string{}, MachineOnly: map[string]bool{}}
	for i, c := range columns {
		d.Columns = append(d.Columns, c)
		d.plan = append(d.plan, cellOf(c, i))
		if l, ok := labels[c]; ok {
			d.Labels[c] = l
		}
		nameCol, ok := nameColumns[c]
		if !ok {
			continue
		}
		d.MachineOnly[c] = true
		d.Columns = append(d.Columns, nameCol)
		if l, ok := labels[nameCol]; ok {
			d.Labels[nameCol] = l
		}
		namer := reg.CategoryName
		if c == "shard_scope" {
			namer = reg.ScopeName
		}
		d.plan = append(d.plan, func(r []any) any { return Names(r[i], namer) })
	}
	if i := slices.Index(columns, "shard_scope"); i >= 0 && slices.Contains(columns, "payload") {
		// A message row also carries the handler document's name for its scope
		// (drain.Document), so a script reads one key for both. It comes last, so the
		// columns CSV and tab-separated scripts read by position stay where they were, and
		// "scope" stays for the scripts that read it.
		d.Columns = append(d.Columns, shardScopeName)
		d.MachineOnly[shardScopeName] = true
		d.plan = append(d.plan, func(r []any) any { return Names(r[i], reg.ScopeName) })
	}
	return d
}

// Row decorates one row.
func (d *Decorator) Row(r []any) []any {
	out := make([]any, len(d.plan))
	for j, f := range d.plan {
		out[j] = f(r)
	}
	return out
}

// Table returns an empty table with the decorated columns and their flags.
func (d *Decorator) Table() *render.Table {
	return &render.Table{Columns: d.Columns, Labels: d.Labels, MachineOnly: d.MachineOnly}
}

// table converts a result, adding enum names after their integers. On a terminal the
// integer columns are hidden behind their names; machine formats keep both. Callers go
// through TableOf, which reads the rows into their row type first.
func table(reg *enums.Registry, res *query.Result) *render.Table {
	d := NewDecorator(reg, res.Columns)
	t := d.Table()
	for _, r := range res.Rows {
		t.Rows = append(t.Rows, d.Row(r))
	}
	return t
}

// Names maps an integer (or an array of them) to enum names; NULL stays NULL.
func Names(v any, namer func(int) string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return namer(int(x))
	case int32:
		return namer(int(x))
	case int:
		return namer(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Names(e, namer)
		}
		return out
	}
	return v
}
