package report

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
)

// TestDepthNamesTheTotalByColumnName: the row whose category is NULL is named "(total)" in
// the category_name column wherever the decorator put it (a name column before it shifts
// it: cmd used to write r[col+1] by position), an estimate's extra column rides along, and a
// result without the category column, or with one query.DepthRow does not declare, is an
// error rather than a document without a total.
func TestDepthNamesTheTotalByColumnName(t *testing.T) {
	t.Parallel()
	reg := enums.Builtin()
	for _, tt := range []struct {
		columns []string
		rows    [][]any
		want    [][]any
	}{
		{[]string{"category", "depth"}, [][]any{{nil, int64(5)}, {int64(2), int64(5)}},
			[][]any{{nil, "(total)", int64(5)}, {int64(2), "ORGANIZATION_UPDATE", int64(5)}}},
		{[]string{"category", "depth", "estimated"}, [][]any{{nil, nil, true}},
			[][]any{{nil, "(total)", nil, true}}},
	} {
		doc, err := Depth(reg, &query.Result{Columns: tt.columns, Rows: tt.rows})
		if err != nil {
			t.Fatalf("%v: %v", tt.columns, err)
		}
		if len(doc) != 1 || doc[0].Name != "depth" || !reflect.DeepEqual(doc[0].Table.Rows, tt.want) {
			t.Errorf("%v: %+v, want the rows %v", tt.columns, doc, tt.want)
		}
	}
	if _, err := Depth(reg, &query.Result{Columns: []string{"depth"}, Rows: [][]any{{int64(1)}}}); err == nil {
		t.Error("a result without a category column: no error")
	}
	// A column query.DepthRow does not declare (a name column before the category used to
	// be allowed and shifted it) is an error: every JSON key is a json tag of a Go type.
	if _, err := Depth(reg, &query.Result{Columns: []string{"shard_scope", "category", "depth"}, Rows: [][]any{{int64(0), nil, int64(1)}}}); err == nil {
		t.Error("a result with an undeclared column: no error")
	}
}
