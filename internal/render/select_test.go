package render

import (
	"context"
	"errors"
	"testing"
)

func selectionDoc() (Doc, Section) {
	head := Doc{{Name: "shard", Card: []Field{{Key: "depth", Value: int64(2)}, {Key: "state", Value: "ready"}, {Key: "note", Value: "x", HumanOnly: true}}}}
	last := Section{Name: "messages", Table: &Table{}}
	return head, last
}

var selectionCols = []string{"id", "state", "payload"} //nolint:gochecknoglobals // test data

func selectionRows() [][]any {
	return [][]any{{int64(1), "ready", JSONText(`{"a":"\u001b"}`)}, {int64(2), "esc\x1b]0;t\x07", nil}}
}

// printSelected prints the document whole (stream false) or streamed, under sel.
func printSelected(t *testing.T, f Format, sel Selection, stream, tty bool) (string, error) {
	t.Helper()
	s, out, _ := Test()
	s.OutTTY = tty
	p := NewPrinter(s, f, true)
	p.SetSelection(context.Background(), sel)
	head, last := selectionDoc()
	if !stream {
		last.Table = &Table{Columns: selectionCols, Rows: selectionRows()}
		err := p.Print(append(head, last))
		return out.String(), err
	}
	d := p.StartDoc(head, last)
	if err := d.Columns(selectionCols); err != nil {
		err = errors.Join(err, d.Close())
		return out.String(), err
	}
	for _, r := range selectionRows() {
		if err := d.Row(r); err != nil {
			return out.String(), err
		}
	}
	err := d.Close()
	return out.String(), err
}

// TestSelectionPrintsTheSameWholeAndStreamed: --json and --jq give the same bytes whether a
// document is printed whole or streamed row by row, and give exactly the rows asked for.
func TestSelectionPrintsTheSameWholeAndStreamed(t *testing.T) {
	t.Parallel()
	jq := func(e string) *JQ {
		q, err := ParseJQ(e)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	for _, tt := range []struct {
		format Format
		sel    Selection
		tty    bool
		want   string
	}{
		{FormatJSONL, Selection{Fields: []string{"state", "id"}}, false,
			`{"section":"shard","state":"ready"}` + "\n" + `{"section":"messages","state":"ready","id":1}` + "\n" +
				`{"section":"messages","state":"esc\u001b]0;t\u0007","id":2}` + "\n"},
		// A section with none of the fields is left out; the document keeps its shape.
		{FormatJSON, Selection{Fields: []string{"id"}}, false, "{\n  \"messages\": [\n    {\n      \"id\": 1\n    },\n    {\n      \"id\": 2\n    }\n  ]\n}\n"},
		{FormatJSON, Selection{Fields: []string{"depth"}}, false, "{\n  \"shard\": {\n    \"depth\": 2\n  }\n}\n"},
		// Strings print raw on a pipe, escaped on a terminal; other values as compact JSON
		// with every control character escaped.
		{FormatJSON, Selection{JQ: jq(`.messages[].state`)}, false, "ready\nesc\x1b]0;t\x07\n"},
		{FormatJSON, Selection{JQ: jq(`.messages[].state`)}, true, "ready\nesc\\x1b]0;t\\x07\n"},
		{FormatJSON, Selection{JQ: jq(`.messages[0].payload`)}, false, `{"a":"\u001b"}` + "\n"},
		{FormatJSONL, Selection{Fields: []string{"id"}, JQ: jq(`.id`)}, false, "1\n2\n"},
		{FormatJSON, Selection{JQ: jq(`.shard | keys`)}, false, `["depth","state"]` + "\n"},
		{FormatJSON, Selection{JQ: jq(`empty`)}, false, ""},
	} {
		for _, stream := range []bool{false, true} {
			got, err := printSelected(t, tt.format, tt.sel, stream, tt.tty)
			if err != nil || got != tt.want {
				t.Errorf("%s %+v stream=%v tty=%v:\n%q, %v\nwant\n%q", tt.format, tt.sel, stream, tt.tty, got, err, tt.want)
			}
		}
	}
}

// TestSelectionRefusesUnknownFields: an unknown field, or --json alone, prints nothing and
// says every field the document has, in order, whole or streamed.
func TestSelectionRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Fields: []string{"id", "nope", "nada"}}, "unknown fields for `--json`: nope, nada; available fields: depth, state, id, payload"},
		{Selection{List: true}, "specify one or more comma-separated fields for `--json`: depth, state, id, payload"},
	} {
		for _, stream := range []bool{false, true} {
			got, err := printSelected(t, FormatJSON, tt.sel, stream, false)
			var fe *FieldsError
			if got != "" || !errors.As(err, &fe) || err.Error() != tt.want {
				t.Errorf("%+v stream=%v: printed %q, error %v; want nothing and %q", tt.sel, stream, got, err, tt.want)
			}
		}
	}
	if _, err := ParseJQ(".[] |"); err == nil {
		t.Error("ParseJQ accepted a bad expression")
	}
}
