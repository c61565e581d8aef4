package live

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

func depthDoc(rows ...[]any) render.Doc {
	return render.Doc{
		{Name: "summary", Card: []render.Field{{Key: "total", Value: int64(1)}}},
		{Name: "shards", Table: &render.Table{Columns: []string{"scope", "shard", "depth", "note"}, Rows: rows}},
	}
}

// TestTrackerDiffsRowsByIdentity: the change and rate follow a row by its key, whatever
// its position; a new row has no change yet; a row that leaves is forgotten; the input
// document is not modified.
func TestTrackerDiffsRowsByIdentity(t *testing.T) {
	t.Parallel()
	tr := &Tracker{Key: []string{"scope", "shard"}, Columns: []string{"depth"}, Keep: 3}
	first := depthDoc([]any{"ORG", int64(1), int64(100), "a"}, []any{"USER", int64(1), int64(7), "b"})
	got := tr.Annotate(first, t0)
	wantCols := []string{"scope", "shard", "depth", "depth_change", "depth_per_s", "depth_trend", "note"}
	if !reflect.DeepEqual(got[1].Table.Columns, wantCols) || len(first[1].Table.Columns) != 4 {
		t.Fatalf("columns %v (input %v)", got[1].Table.Columns, first[1].Table.Columns)
	}
	if r := got[1].Table.Rows[0]; r[3] != nil || r[4] != nil || r[5] != "▁" {
		t.Errorf("first frame row %v", r)
	}
	// Rows swapped, ORG drained 20 in 2 s, USER grew by 3, a new shard appears.
	second := depthDoc([]any{"USER", int64(1), int64(10), "b"}, []any{"ORG", int64(1), int64(80), "a"}, []any{"ORG", int64(2), int64(5), "c"})
	got = tr.Annotate(second, t0.Add(2*time.Second))
	rows := got[1].Table.Rows
	if rows[0][3] != (render.Styled{Text: "+3", Tone: render.ToneWarn}) || rows[0][4] != 1.5 || rows[0][5] != "▁█" {
		t.Errorf("USER row %v", rows[0])
	}
	if rows[1][3] != (render.Styled{Text: "-20", Tone: render.ToneGood}) || rows[1][4] != -10.0 || rows[1][5] != "█▁" {
		t.Errorf("ORG row %v", rows[1])
	}
	if rows[2][3] != nil || rows[2][4] != nil {
		t.Errorf("new row %v", rows[2])
	}
	// USER leaves, comes back: it starts over.
	tr.Annotate(depthDoc([]any{"ORG", int64(1), int64(80), "a"}), t0.Add(4*time.Second))
	got = tr.Annotate(depthDoc([]any{"USER", int64(1), int64(9), "b"}, []any{"ORG", int64(1), int64(60), "a"}), t0.Add(6*time.Second))
	if r := got[1].Table.Rows[0]; r[3] != nil {
		t.Errorf("returning row kept its history: %v", r)
	}
	if r := got[1].Table.Rows[1]; r[5] != "██▁" {
		t.Errorf("sparkline of 100,80,80,60 kept to the last 3: %v", r[5])
	}
	if got[1].Table.HumanOnly["depth_trend"] != true || got[1].Table.Labels["depth_change"] != "Δ" {
		t.Errorf("flags %v %v", got[1].Table.HumanOnly, got[1].Table.Labels)
	}
	if got[0].Card == nil {
		t.Error("card section lost")
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},
		{[]float64{5, 5, 5}, "▁▁▁"},
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
		{[]float64{10, math.NaN(), 0}, "█ ▁"},
	} {
		if got := Sparkline(tt.in); got != tt.want {
			t.Errorf("Sparkline(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
