// Package report turns query results into documents a person or a script reads: enum
// integers get their names beside them (UNKNOWN(n) for values this build does not know),
// and columns get short labels on a terminal. It decides what is shown, not how.
package report

import (
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// nameColumns says which integer columns get a name column, and its key.
var nameColumns = map[string]string{ //nolint:gochecknoglobals // constant table
	"shard_scope":   "scope",
	"category":      "category_name",
	"categories":    "category_names",
	"head_category": "head_category_name",
}

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

// Table converts a result, adding enum names after their integers. On a terminal the
// integer columns are hidden behind their names; machine formats keep both.
func Table(reg *enums.Registry, res *query.Result) *render.Table {
	t := &render.Table{Labels: map[string]string{}, MachineOnly: map[string]bool{}}
	type plan struct {
		src  int
		name func(any) any
	}
	var cols []plan
	for i, c := range res.Columns {
		cols = append(cols, plan{src: i})
		t.Columns = append(t.Columns, c)
		if l, ok := labels[c]; ok {
			t.Labels[c] = l
		}
		nameCol, ok := nameColumns[c]
		if !ok {
			continue
		}
		t.MachineOnly[c] = true
		t.Columns = append(t.Columns, nameCol)
		if l, ok := labels[nameCol]; ok {
			t.Labels[nameCol] = l
		}
		namer := reg.CategoryName
		if c == "shard_scope" {
			namer = reg.ScopeName
		}
		cols = append(cols, plan{src: i, name: func(v any) any { return Names(v, namer) }})
	}
	for _, r := range res.Rows {
		row := make([]any, len(cols))
		for j, p := range cols {
			v := r[p.src]
			if p.name != nil {
				v = p.name(v)
			}
			row[j] = v
		}
		t.Rows = append(t.Rows, row)
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

// Card converts the first row of a result into a card.
func Card(reg *enums.Registry, res *query.Result) []render.Field {
	t := Table(reg, res)
	if len(t.Rows) == 0 {
		return nil
	}
	fields := make([]render.Field, 0, len(t.Columns))
	for i, c := range t.Columns {
		fields = append(fields, render.Field{Key: c, Value: t.Rows[0][i], MachineOnly: t.MachineOnly[c]})
	}
	return fields
}
