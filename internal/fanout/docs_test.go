package fanout_test

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestMergeDocs merges two contexts' documents: a table section gains the context column
// and sorts by its keys (a ranked column by its rank, equal rows in the contexts' order), a
// column one context lacks stays empty, one only a later context has is added (so that
// depth's estimated label survives a merge with a counted answer), a card becomes one row per context, and footers
// are kept one line per context.
func TestMergeDocs(t *testing.T) {
	t.Parallel()
	us := render.Doc{
		{Name: "findings", Title: "Findings", Table: &render.Table{Columns: []string{"severity", "check"},
			Rows: [][]any{{"warn", "xmin"}, {"ok", "replica"}}}, Footer: "2 findings"},
		{Name: "message", Card: []render.Field{{Key: "id", Value: int64(1)}, {Key: "depth", Value: int64(3), MachineOnly: true}}},
	}
	de := render.Doc{
		{Name: "findings", Title: "Findings", Table: &render.Table{Columns: []string{"check", "severity", "extra"},
			Rows: [][]any{{"locks", "crit", "x"}, {"scheduler", "warn", "y"}}}},
		{Name: "message", Card: []render.Field{{Key: "id", Value: int64(2)}}},
	}
	got := fanout.MergeDocs([]fanout.Answer{{Context: "us", Doc: us}, {Context: "de", Doc: de}}, fanout.Order{
		Keys:  map[string][]fanout.SortKey{"findings": {fanout.Desc("severity")}},
		Ranks: map[string][]string{"severity": {"ok", "warn", "crit"}},
	})
	if len(got) != 2 || got[0].Name != "findings" || got[0].Title != "Findings" || got[1].Name != "message" {
		t.Fatalf("sections %+v", got)
	}
	f := got[0].Table
	if want := []string{"context", "severity", "check", "extra"}; !reflect.DeepEqual(f.Columns, want) {
		t.Errorf("columns %v, want %v (the first context's, then the second's new one)", f.Columns, want)
	}
	want := [][]any{{"de", "crit", "locks", "x"}, {"us", "warn", "xmin", nil}, {"de", "warn", "scheduler", "y"}, {"us", "ok", "replica", nil}}
	if !reflect.DeepEqual(f.Rows, want) {
		t.Errorf("rows %v, want %v", f.Rows, want)
	}
	if got[0].Footer != "us: 2 findings" {
		t.Errorf("footer %q", got[0].Footer)
	}
	m := got[1].Table
	if wantCols := []string{"context", "id", "depth"}; !reflect.DeepEqual(m.Columns, wantCols) || !m.MachineOnly["depth"] {
		t.Errorf("card columns %v (machine-only %v), want %v with depth machine-only", m.Columns, m.MachineOnly, wantCols)
	}
	if wantRows := [][]any{{"us", int64(1), int64(3)}, {"de", int64(2), nil}}; !reflect.DeepEqual(m.Rows, wantRows) {
		t.Errorf("card rows %v, want %v", m.Rows, wantRows)
	}
}

// TestMergeDocsAdoptsALaterContextsColumn: a column only a later context has keeps that
// context's header and flags, so it reads the same whichever context answered first.
func TestMergeDocsAdoptsALaterContextsColumn(t *testing.T) {
	us := render.Doc{{Name: "shards", Table: &render.Table{Columns: []string{"depth"}, Rows: [][]any{{1}}}}}
	de := render.Doc{{Name: "shards", Table: &render.Table{Columns: []string{"region_name", "depth"}, Rows: [][]any{{"de", 2}},
		Labels: map[string]string{"region_name": "cell"}, Priority: map[string]int{"region_name": 80}, MachineOnly: map[string]bool{}, HumanOnly: map[string]bool{}}}}
	got := fanout.MergeDocs([]fanout.Answer{{Context: "us", Doc: us}, {Context: "de", Doc: de}}, fanout.Order{})[0].Table
	if got.Labels["region_name"] != "cell" || got.Priority["region_name"] != 80 {
		t.Fatalf("region_name from the second context: label %q, priority %d; want cell, 80", got.Labels["region_name"], got.Priority["region_name"])
	}
	if de[0].Table.Labels["depth"] != "" || len(us[0].Table.Labels) != 0 {
		t.Fatal("the merge wrote into a context's own table")
	}
}

// TestMergeDocsPutsALateColumnWhereItsContextHasIt: a column only a later context has goes
// right after the columns before it in that context's table (depth's estimated column beside
// depth, as depth prints it), not after every other column; one first in its table goes right
// after the context column. The rows before it get an empty cell there.
func TestMergeDocsPutsALateColumnWhereItsContextHasIt(t *testing.T) {
	t.Parallel()
	counted := render.Doc{{Name: "depth", Table: &render.Table{Columns: []string{"category", "depth", "oldest"}, Rows: [][]any{{"A", int64(1), "t1"}}}}}
	estimated := render.Doc{{Name: "depth", Table: &render.Table{Columns: []string{"first", "category", "depth", "estimated", "oldest"}, Rows: [][]any{{"f", "A", int64(2), true, "t2"}}}}}
	got := fanout.MergeDocs([]fanout.Answer{{Context: "us", Doc: counted}, {Context: "de", Doc: estimated}}, fanout.Order{})
	tb := got[0].Table
	if want := []string{"context", "first", "category", "depth", "estimated", "oldest"}; !reflect.DeepEqual(tb.Columns, want) {
		t.Fatalf("columns %v, want %v", tb.Columns, want)
	}
	want := [][]any{{"us", nil, "A", int64(1), nil, "t1"}, {"de", "f", "A", int64(2), true, "t2"}}
	if !reflect.DeepEqual(tb.Rows, want) {
		t.Errorf("rows %v, want %v", tb.Rows, want)
	}
}
