package render

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestDefaultPriorityByColumnName: a table that declares no priorities (as the shards
// listing built in cmd does) still fits: the category list goes first, then the sentence,
// and the shard's identity and state never go (values are cut only after dropping).
func TestDefaultPriorityByColumnName(t *testing.T) {
	t.Parallel()
	doc := Doc{{Table: &Table{
		Columns: []string{"scope", "shard_identifier", "depth", "category_names", "state", "detail"},
		Labels:  map[string]string{"shard_identifier": "shard", "category_names": "categories"},
		Rows: [][]any{{"ORGANIZATION_SCOPE", int64(4242), int64(66), "AUTH_PROVIDER_UPDATE,ORGANIZATION_UPDATE",
			"backing off", "delay 1h0m0s, next in 39m36s, ≥12 attempts, at 1 h cap: poison message?"}},
	}}}
	for _, tt := range []struct {
		width    int
		out, err string
	}{
		{130, "" +
			"SCOPE               SHARD  DEPTH  STATE        DETAIL                                                                   \n" +
			"ORGANIZATION_SCOPE  4242   66     backing off  delay 1h0m0s, next in 39m36s, ≥12 attempts, at 1 h cap: poison message?  \n",
			"-o wide shows 1 hidden column(s): category_names\n"},
		{60, "" +
			"SCOPE               SHARD  DEPTH  STATE        \n" +
			"ORGANIZATION_SCOPE  4242   66     backing off  \n",
			"-o wide shows 2 hidden column(s): category_names, detail\n"},
	} {
		out, errOut := printWith(t, FormatTable, true, tt.width, HeadersAuto, doc)
		if got := ansi.Strip(out); got != tt.out || errOut != tt.err {
			t.Errorf("width %d: got\n%q\nwant\n%q\nstderr %q want %q", tt.width, got, tt.out, errOut, tt.err)
		}
	}
	// The note fits the terminal too: the flag first, the list cut.
	if _, errOut := printWith(t, FormatTable, true, 45, HeadersAuto, doc); errOut != "-o wide shows 2 hidden column(s): category_n…\n" {
		t.Errorf("width 45: stderr %q", errOut)
	}
	// A table's own priority wins over the default.
	doc[0].Table.Priority = map[string]int{"detail": 1}
	if _, errOut := printWith(t, FormatTable, true, 130, HeadersAuto, doc); errOut != "-o wide shows 1 hidden column(s): detail\n" {
		t.Errorf("override: stderr %q", errOut)
	}
}
