package render

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// hostileRows are cells every encoder must carry as Print does: HTML, control characters
// (C0, DEL, C1, the line separators), a formula, the separators of CSV and TSV, JSON and
// not-JSON payloads, bytes, times, NaN, NULL, a styled cell, a list.
func hostileRows() [][]any {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return [][]any{
		{int64(1), "<b>&amp;</b>", JSONText(`{"html":"<script>","n":1}`), at, "for people"},
		{int64(-5), "=HYPERLINK(\"x\")", JSONText("not json \x1b]0;t\x07"), Due(at.Add(time.Hour)), "\x9b"},
		{int64(3), "a\tb\nc\r\"d\",e|f", []byte(`[1,"\u2028"]`), nil, Styled{Text: "bad\x7f", Tone: ToneBad}},
		{int64(4), "\u2028\u2029\x00\x85", Ratio(0.5), math.NaN(), []any{"x", int64(1), nil}},
	}
}

// TestStreamWritesWhatPrintWrites is the differential test of the one encoder per format: a
// document streamed row by row (DocStream) is byte for byte the same document printed whole
// (Print), stdout and stderr, in every format, with no, one and two head sections, on a
// terminal and on a pipe. The stream encoded rows a second way: its JSON of a document with
// no head was an object where Print's is an array, and its JSONL left the section name off
// a lone head section's object.
func TestStreamWritesWhatPrintWrites(t *testing.T) {
	t.Parallel()
	cols := []string{"id", "name", "payload", "at", "detail"}
	heads := []Doc{
		nil,
		{{Name: "shard", Card: []Field{{Key: "depth", Value: int64(2)}, {Key: "<k>", Value: "v\x1b[2J", HumanOnly: true}, {Key: "raw", Value: int64(7), MachineOnly: true}}}},
		{{Name: "shard", Title: "Shard", Card: []Field{{Key: "depth", Value: int64(2)}}},
			{Name: "categories", Table: &Table{Columns: []string{"category", "n"}, Rows: [][]any{{"=1+1", int64(3)}}}},
			{Name: "empty", Table: &Table{Columns: []string{"x"}}}},
	}
	now := func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	for _, f := range []Format{FormatJSON, FormatJSONL, FormatCSV, FormatAuto, FormatTable, FormatWide, FormatMarkdown} {
		for _, tty := range []bool{false, true} {
			for h, head := range heads {
				for _, rows := range [][][]any{hostileRows(), nil} {
					last := func() Section {
						return Section{Name: "messages", Title: "Messages", Footer: "showing 4 of 9\nsecond line",
							Table: &Table{HumanOnly: map[string]bool{"detail": true}, MachineOnly: map[string]bool{"at": true}, Labels: map[string]string{"name": "NAME<"}}}
					}
					s, out, errOut := Test()
					s.OutTTY = tty
					p := NewPrinter(s, f, true)
					p.Now = now
					whole := last()
					whole.Table.Columns, whole.Table.Rows = cols, rows
					if err := p.Print(append(append(Doc{}, head...), whole)); err != nil {
						t.Fatal(err)
					}

					s2, out2, errOut2 := Test()
					s2.OutTTY = tty
					p2 := NewPrinter(s2, f, true)
					p2.Now = now
					d := p2.StartDoc(head, last())
					if err := d.Columns(cols); err != nil {
						t.Fatal(err)
					}
					for _, r := range rows {
						if err := d.Row(r); err != nil {
							t.Fatal(err)
						}
					}
					d.Footer(whole.Footer)
					if err := d.Close(); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s tty=%v head=%d rows=%d", f, tty, h, len(rows))
					if out2.String() != out.String() || errOut2.String() != errOut.String() {
						t.Errorf("%s: streamed\n%q\n%q\nprinted\n%q\n%q", name, out2, errOut2, out, errOut)
					}
				}
			}
		}
	}
}
