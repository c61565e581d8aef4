package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// encoder writes a document in one format that needs no row but the current one (JSON,
// JSONL, CSV, tab-separated): section by section, and a table row by row. Print drives it
// over a whole document and DocStream over rows as they arrive, so a streamed document is
// byte for byte the document printed whole (the stream once encoded rows a second way, and
// its JSON and JSONL drifted from Print's). The terminal table and Markdown align columns
// over every row, so they print whole documents only (printTerminal, printMarkdown).
type encoder interface {
	begin(sections int) error
	card(i int, s Section) error
	// tableBegin opens the i-th section, a table of the machine columns cols.
	tableBegin(i int, s Section, cols []string) error
	row(vals []any) error // the machine columns' values
	tableEnd() error
	end() error
}

// encoder is the printer's encoder for its format, or nil for the whole-document ones.
func (p *Printer) encoder() encoder {
	switch {
	case p.format == FormatJSON:
		return p.selected(func(out io.Writer) encoder { return &jsonEncoder{w: jsonWriter{out}} })
	case p.format == FormatJSONL:
		return p.selected(func(out io.Writer) encoder {
			enc := json.NewEncoder(jsonWriter{out})
			enc.SetEscapeHTML(false)
			return &jsonlEncoder{enc: enc}
		})
	case p.format == FormatCSV:
		return &csvEncoder{p: p, out: p.s.Out, w: csv.NewWriter(p.s.Out)}
	case p.format == FormatAuto && !p.s.OutTTY:
		return &tsvEncoder{p: p}
	}
	return nil
}

// encodeDoc writes doc whole through enc.
func encodeDoc(enc encoder, doc Doc) error {
	if err := enc.begin(len(doc)); err != nil {
		return err
	}
	for i, s := range doc {
		if err := encodeSection(enc, i, s); err != nil {
			return err
		}
	}
	return enc.end()
}

func encodeSection(enc encoder, i int, s Section) error {
	if s.Table == nil {
		return enc.card(i, s)
	}
	t := s.Table.machine()
	if err := enc.tableBegin(i, s, t.Columns); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := enc.row(r); err != nil {
			return err
		}
	}
	return enc.tableEnd()
}

// ---- JSON ----

// jsonEncoder writes one indented JSON value: a document of one section is that section's
// value (an array of rows, or a card's object), a document of several one object keyed by
// section name. Each value is encoded as encoding/json indents it inside the whole.
type jsonEncoder struct {
	w      io.Writer
	n      int    // sections
	prefix string // the indentation of a section's value
	cols   []string
	rows   int
	keys   int // sections written (a selection may leave some out)
}

func (e *jsonEncoder) begin(n int) error {
	e.n = n
	if n != 1 {
		e.prefix = "  "
		return e.write("{")
	}
	return nil
}

// key opens the i-th section's value in a document of several.
func (e *jsonEncoder) key(_ int, name string) error {
	if e.n == 1 {
		return nil
	}
	k, err := encodeJSON(name, "")
	if err != nil {
		return err
	}
	sep := ""
	if e.keys > 0 {
		sep = ","
	}
	e.keys++
	return e.write(sep + "\n  " + k + ": ")
}

func (e *jsonEncoder) card(i int, s Section) error {
	if err := e.key(i, s.Name); err != nil {
		return err
	}
	v, err := encodeJSON(cardObject(s.Card), e.prefix)
	if err != nil {
		return err
	}
	return e.write(v)
}

func (e *jsonEncoder) tableBegin(i int, s Section, cols []string) error {
	if err := e.key(i, s.Name); err != nil {
		return err
	}
	e.cols, e.rows = cols, 0
	return e.write("[")
}

func (e *jsonEncoder) row(vals []any) error {
	v, err := encodeJSON(orderedObject{keys: e.cols, vals: vals}, e.prefix+"  ")
	if err != nil {
		return err
	}
	sep := ""
	if e.rows > 0 {
		sep = ","
	}
	e.rows++
	return e.write(sep + "\n" + e.prefix + "  " + v)
}

func (e *jsonEncoder) tableEnd() error {
	if e.rows > 0 {
		return e.write("\n" + e.prefix + "]")
	}
	return e.write("]")
}

func (e *jsonEncoder) end() error {
	switch e.n {
	case 0:
		return e.write("}\n")
	case 1:
		return e.write("\n")
	}
	return e.write("\n}\n")
}

func (e *jsonEncoder) write(s string) error {
	_, err := io.WriteString(e.w, s)
	return err
}

// encodeJSON is v as encoding/json writes it at an indentation of prefix (HTML left as it is).
func encodeJSON(v any, prefix string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("writing JSON: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// ---- JSONL ----

// jsonlEncoder writes one object per line; with several sections each object carries its
// section name, so a stream can be split again with jq.
type jsonlEncoder struct {
	enc     *json.Encoder
	many    bool
	section string
	cols    []string
}

func (e *jsonlEncoder) begin(n int) error { e.many = n > 1; return nil }

func (e *jsonlEncoder) card(_ int, s Section) error {
	o := cardObject(s.Card)
	return e.object(s.Name, o.keys, o.vals)
}

func (e *jsonlEncoder) tableBegin(_ int, s Section, cols []string) error {
	e.section, e.cols = s.Name, cols
	return nil
}

func (e *jsonlEncoder) row(vals []any) error { return e.object(e.section, e.cols, vals) }

func (e *jsonlEncoder) object(section string, keys []string, vals []any) error {
	if e.many {
		keys, vals = append([]string{"section"}, keys...), append([]any{section}, vals...)
	}
	if err := e.enc.Encode(orderedObject{keys: keys, vals: vals}); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

func (e *jsonlEncoder) tableEnd() error { return nil }
func (e *jsonlEncoder) end() error      { return nil }

// ---- CSV ----

// csvEncoder writes each section as a header line and its rows (a card: its keys and one
// row), the sections apart by an empty line.
type csvEncoder struct {
	p   *Printer
	out io.Writer
	w   *csv.Writer
}

func (e *csvEncoder) begin(int) error { return nil }

func (e *csvEncoder) apart(i int) {
	if i > 0 {
		e.w.Flush()
		fmt.Fprintln(e.out)
	}
}

func (e *csvEncoder) card(i int, s Section) error {
	e.apart(i)
	o := cardObject(s.Card)
	if err := e.w.Write(csvHeader(o.keys)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return e.row(o.vals)
}

func (e *csvEncoder) tableBegin(i int, _ Section, cols []string) error {
	e.apart(i)
	if err := e.w.Write(csvHeader(cols)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

func (e *csvEncoder) row(vals []any) error {
	if err := e.w.Write(e.p.csvRow(vals)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

func (e *csvEncoder) tableEnd() error { return nil }

func (e *csvEncoder) end() error {
	e.w.Flush()
	return e.w.Error()
}

// ---- tab-separated ----

// tsvEncoder writes tab-separated rows under a header line of column names (none with
// --no-headers) and a card as key and value lines, for cut and awk. A table without rows
// prints nothing, header included, so `[ -z "$(outboxctl …)" ]` still works: the header
// waits for the first row.
type tsvEncoder struct {
	p       *Printer
	cols    []string
	pending bool // the header line is still to write
}

func (e *tsvEncoder) begin(int) error { return nil }

func (e *tsvEncoder) card(_ int, s Section) error {
	for _, f := range s.Card {
		if _, err := fmt.Fprintf(e.p.s.Out, "%s\t%s\n", escapeTSV(f.Key), escapeTSV(plain(f.Value))); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	return nil
}

func (e *tsvEncoder) tableBegin(_ int, _ Section, cols []string) error {
	e.cols, e.pending = cols, true
	return nil
}

func (e *tsvEncoder) row(vals []any) error {
	if e.pending {
		e.pending = false
		if err := e.p.tsvHeader(e.cols); err != nil {
			return err
		}
	}
	cells := make([]string, len(vals))
	for j, v := range vals {
		cells[j] = escapeTSV(plain(v))
	}
	if _, err := fmt.Fprintln(e.p.s.Out, strings.Join(cells, "\t")); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

func (e *tsvEncoder) tableEnd() error { return nil }
func (e *tsvEncoder) end() error      { return nil }
