package live

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestLayoutKeepsColumnsInPlace: frames whose columns come in another order, or gain and
// lose a column, are shown in the order of the first frame; a column new to the watch is
// placed after the column it follows in its frame and stays there; cells move with their
// columns.
func TestLayoutKeepsColumnsInPlace(t *testing.T) {
	var l Layout
	frame := func(cols ...string) render.Doc {
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = "v:" + c
		}
		return render.Doc{{Name: "shards", Table: &render.Table{Columns: cols, Rows: [][]any{row}}}}
	}
	for i, f := range []struct{ in, want []string }{
		{[]string{"context", "scope", "depth", "region_name"}, []string{"context", "scope", "depth", "region_name"}},
		// The first context failed: the other's columns lead with region_name.
		{[]string{"context", "region_name", "scope", "depth"}, []string{"context", "scope", "depth", "region_name"}},
		// A column new to the watch goes after the one it follows, and stays there.
		{[]string{"context", "scope", "estimated", "depth"}, []string{"context", "scope", "estimated", "depth"}},
		{[]string{"context", "region_name", "scope", "depth", "estimated"}, []string{"context", "scope", "estimated", "depth", "region_name"}},
		{[]string{"new_first", "context", "depth"}, []string{"new_first", "context", "depth"}},
	} {
		got := l.Apply(frame(f.in...))[0].Table
		var want []any
		for _, c := range f.want {
			want = append(want, "v:"+c)
		}
		if !reflect.DeepEqual(got.Columns, f.want) || !reflect.DeepEqual(got.Rows[0], want) {
			t.Errorf("frame %d %v: got %v %v, want %v", i+1, f.in, got.Columns, got.Rows[0], f.want)
		}
	}
}
