package render

import (
	"encoding/json"
	"testing"
)

// hostileCells is a table whose text cells a spreadsheet would run (= + - @, tab, CR), beside
// numbers that start with - and a payload of JSON bytes.
func hostileCells() Doc {
	return Doc{{Name: "rows", Title: "Rows", Table: &Table{
		Columns: []string{"id", "delay", "name", "note", "payload"},
		Rows: [][]any{
			{int64(-5), -1.5, "=HYPERLINK(\"http://x\",\"y\")", "+1", json.RawMessage(`{"seq": 1}`)},
			{int64(7), 2.0, "@SUM(A1)", "-2", []byte(`{"a":"b|c"}`)},
			{int64(8), Ratio(-0.25), "\tTAB", "\rCR", JSONText(`{"x": [1, 2]}`)},
			{int64(9), nil, "a|b", "two\nlines", nil},
		},
	}}}
}

// TestCSVNeutralisesFormulas: a text cell starting with = + - @, a tab or a carriage return
// gets a leading '; numbers (by their type) stay as they are, -5 included; a payload is its
// JSON text. --csv-raw (CSVRaw) leaves the text cells as they are. On main the formulas went
// out as they were and a payload read [123 34 115 …].
func TestCSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	want := "id,delay,name,note,payload\n" +
		"-5,-1.5,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",'+1,\"{\"\"seq\"\": 1}\"\n" +
		"7,2,'@SUM(A1),'-2,\"{\"\"a\"\":\"\"b|c\"\"}\"\n" +
		"8,-0.25,'\tTAB,\\rCR,\"{\"\"x\"\": [1, 2]}\"\n" +
		"9,,a|b,\"two\nlines\",\n"
	if got := print(t, FormatCSV, false, hostileCells()); got != want {
		t.Errorf("csv:\n%s\nwant:\n%s", got, want)
	}
	s, out, _ := Test()
	p := NewPrinter(s, FormatCSV, false)
	p.CSVRaw = true
	if err := p.Print(hostileCells()); err != nil {
		t.Fatal(err)
	}
	wantRaw := "id,delay,name,note,payload\n" +
		"-5,-1.5,\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",+1,\"{\"\"seq\"\": 1}\"\n" +
		"7,2,@SUM(A1),-2,\"{\"\"a\"\":\"\"b|c\"\"}\"\n" +
		"8,-0.25,\"\tTAB\",\\rCR,\"{\"\"x\"\": [1, 2]}\"\n" +
		"9,,a|b,\"two\nlines\",\n"
	if got := out.String(); got != wantRaw {
		t.Errorf("csv raw:\n%s\nwant:\n%s", got, wantRaw)
	}
}

// TestTSVAndMarkdownOfHostileCells: tab-separated rows carry a payload as its JSON text and
// escape tabs and newlines; Markdown escapes | (which would end the cell) and newlines.
func TestTSVAndMarkdownOfHostileCells(t *testing.T) {
	t.Parallel()
	wantTSV := "id\tdelay\tname\tnote\tpayload\n" +
		"-5\t-1.5\t=HYPERLINK(\"http://x\",\"y\")\t+1\t{\"seq\": 1}\n" +
		"7\t2\t@SUM(A1)\t-2\t{\"a\":\"b|c\"}\n" +
		"8\t-0.25\t\\tTAB\t\\rCR\t{\"x\": [1, 2]}\n" +
		"9\t\ta|b\ttwo\\nlines\t\n"
	if got := print(t, FormatAuto, false, hostileCells()); got != wantTSV {
		t.Errorf("tsv:\n%s\nwant:\n%s", got, wantTSV)
	}
	wantMD := "### Rows\n\n" +
		"| id | delay | name                       | note       | payload       |\n" +
		"|:---|:------|:---------------------------|:-----------|:--------------|\n" +
		"| -5 | -1.5  | =HYPERLINK(\"http://x\",\"y\") | +1         | {\"seq\": 1}    |\n" +
		"| 7  | 2     | @SUM(A1)                   | -2         | {\"a\":\"b\\|c\"}  |\n" +
		"| 8  | -0.25 | \\tTAB                      | \\rCR       | {\"x\": [1, 2]} |\n" +
		"| 9  |       | a\\|b                       | two\\nlines |               |\n"
	if got := print(t, FormatMarkdown, false, hostileCells()); got != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, wantMD)
	}
}
