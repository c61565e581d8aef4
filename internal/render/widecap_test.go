package render

import (
	"strings"
	"testing"
)

// TestWideAndMarkdownCapCells: -o wide and -o markdown cap a cell at WideMaxCell runes (the
// table caps at MaxCell), so one 2 MB value among 25 rows no longer pads every row to 2 MB
// (52 MB of output, issue 36 item 8); a note on stderr says what was cut, and JSON keeps the
// value whole.
func TestWideAndMarkdownCapCells(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 2<<20)
	tbl := &Table{Columns: []string{"pair", "fields"}}
	for i := range 25 {
		v := "short"
		if i == 3 {
			v = huge
		}
		tbl.Rows = append(tbl.Rows, []any{"organization", v})
	}
	for _, f := range []Format{FormatWide, FormatMarkdown} {
		s, out, errOut := Test()
		if err := NewPrinter(s, f, true).Print(Doc{{Name: "drift", Table: tbl}}); err != nil {
			t.Fatal(err)
		}
		if n := out.Len(); n > 30*(WideMaxCell+100) || !strings.Contains(out.String(), strings.Repeat("x", WideMaxCell-1)+"…") {
			t.Errorf("%s: %d bytes of output", f, n)
		}
		if !strings.Contains(errOut.String(), "cut at 1024 characters") {
			t.Errorf("%s: stderr %q", f, errOut)
		}
	}
	s, out, _ := Test()
	if err := NewPrinter(s, FormatJSON, true).Print(Doc{{Name: "drift", Table: tbl}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), huge) {
		t.Error("JSON cut the value")
	}
}
