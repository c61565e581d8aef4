package inspect

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestAtLeastCounts: a category's distinct counts taken over its first rows only read "at
// least N" for a person, in a human-only column under the same label beside each, while
// scripts keep the numbers; exact counts read as they are.
func TestAtLeastCounts(t *testing.T) {
	t.Parallel()
	tbl := atLeastCounts(&render.Table{
		Columns: []string{"category", "shards", "objects", "distinct_exact"},
		Rows:    [][]any{{"A", int64(3), int64(7), false}, {"B", int64(1), int64(2), true}},
	})
	wantCols := []string{"category", "shards", "shards_shown", "objects", "objects_shown", "distinct_exact"}
	if !reflect.DeepEqual(tbl.Columns, wantCols) {
		t.Fatalf("columns %v, want %v", tbl.Columns, wantCols)
	}
	wantRows := [][]any{
		{"A", int64(3), "at least 3", int64(7), "at least 7", false},
		{"B", int64(1), int64(1), int64(2), int64(2), true},
	}
	if !reflect.DeepEqual(tbl.Rows, wantRows) {
		t.Fatalf("rows %v, want %v", tbl.Rows, wantRows)
	}
	for _, c := range []string{"shards", "objects"} {
		if !tbl.MachineOnly[c] || !tbl.HumanOnly[c+"_shown"] || tbl.Labels[c+"_shown"] != c {
			t.Errorf("%s: machine-only %v, %s_shown human-only %v labelled %q", c, tbl.MachineOnly[c], c, tbl.HumanOnly[c+"_shown"], tbl.Labels[c+"_shown"])
		}
	}
	plain := &render.Table{Columns: []string{"category", "shards"}, Rows: [][]any{{"A", int64(3)}}}
	if got := atLeastCounts(plain); len(got.Columns) != 2 || got.HumanOnly != nil {
		t.Errorf("a table without distinct_exact changed: %+v", got)
	}
}
