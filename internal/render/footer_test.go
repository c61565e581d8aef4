package render

import "testing"

// TestFooterLinesPrintApart: a footer of several notes (a fan-out's, one per context) prints
// one line each on stderr, in every format, and each stays escaped. On main the whole footer
// was escaped as one note and printed "us: …\nde: …" with a literal \n.
func TestFooterLinesPrintApart(t *testing.T) {
	t.Parallel()
	for _, format := range []Format{FormatTable, FormatJSON, FormatCSV} {
		s, _, errOut := Test()
		doc := Doc{{Name: "shards", Table: &Table{Columns: []string{"id"}, Rows: [][]any{{int64(1)}}},
			Footer: "us: showing 1 of 2 shards (--limit)\nde: showing 1 of \x1b]0;x\a3 shards (--limit)"}}
		if err := NewPrinter(s, format, true).Print(doc); err != nil {
			t.Fatal(err)
		}
		want := "us: showing 1 of 2 shards (--limit)\nde: showing 1 of \\x1b]0;x\\x073 shards (--limit)\n"
		if errOut.String() != want {
			t.Errorf("%v: stderr %q, want %q", format, errOut, want)
		}
	}
}
