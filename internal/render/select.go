package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/outboxctl/outboxctl/internal/jqrun"
)

// Selection is what --json FIELDS and --jq EXPR ask of a JSON document, with gh's
// semantics: Fields keeps only those keys of each row or card (in the order given), List
// asks for the field names instead of the document, and JQ filters the JSON (after Fields)
// and prints each result, a string raw and anything else as compact JSON on its own line.
type Selection struct {
	Fields []string
	List   bool
	JQ     *JQ
	// JQLimits bound the --jq evaluation (--jq-timeout, --max-jq-bytes).
	JQLimits jqrun.Limits
}

// JQ is a compiled --jq expression.
type JQ struct {
	expr string
	code *gojq.Code
}

// ParseJQ compiles a jq expression (gojq: jq's language; object keys come out sorted).
func ParseJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid --jq expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("invalid --jq expression %q: %w", expr, err)
	}
	return &JQ{expr: expr, code: code}, nil
}

// ParseFields splits --json's comma-separated field list (blanks and repeats dropped).
func ParseFields(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// FieldsError is --json naming a field no object of the document has, or --json without
// fields (List): either way it carries the fields the document has. It is the operator's
// input to fix (a usage error).
type FieldsError struct {
	Unknown   []string
	Available []string
}

func (e *FieldsError) Error() string {
	avail := strings.Join(e.Available, ", ")
	if avail == "" {
		avail = "(none: this output has no JSON fields)"
	}
	if len(e.Unknown) == 0 {
		return "specify one or more comma-separated fields for `--json`: " + avail
	}
	word := "field"
	if len(e.Unknown) > 1 {
		word = "fields"
	}
	return fmt.Sprintf("unknown %s for `--json`: %s; available fields: %s", word, strings.Join(e.Unknown, ", "), avail)
}

// UsageError marks the error as the operator's to fix (exit 2).
func (e *FieldsError) UsageError() bool { return true }

// JQError is a --jq expression that failed on the document (not one that did not parse).
type JQError struct{ Err error }

func (e *JQError) Error() string { return "--jq: " + e.Err.Error() }
func (e *JQError) Unwrap() error { return e.Err }

// docFields is every JSON key the sections' objects carry, in the order they first appear.
func docFields(doc Doc, last []string) []string {
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, s := range doc {
		if s.Table == nil {
			for _, k := range cardObject(s.Card).keys {
				add(k)
			}
			continue
		}
		for _, c := range s.Table.machine().Columns {
			add(c)
		}
	}
	for _, c := range last {
		add(c)
	}
	return out
}

// checkFields says whether the selection can apply to a document of these fields: a
// FieldsError when it lists them or names one that none has.
func (s Selection) checkFields(fields []string) error {
	if s.List {
		return &FieldsError{Available: fields}
	}
	var unknown []string
	for _, f := range s.Fields {
		if !slices.Contains(fields, f) {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) > 0 {
		return &FieldsError{Unknown: unknown, Available: fields}
	}
	return nil
}

// pick is the indexes, in keys, of the selected fields present there (every key when no
// fields are selected).
func (s Selection) pick(keys []string) []int {
	var idx []int
	if len(s.Fields) == 0 {
		for i := range keys {
			idx = append(idx, i)
		}
		return idx
	}
	for _, f := range s.Fields {
		if i := slices.Index(keys, f); i >= 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// selectingEncoder keeps the selected fields of each row and card before the format's
// encoder sees them; a section with none of them is left out of the document.
type selectingEncoder struct {
	enc  encoder
	sel  Selection
	keep []int // the current table's kept columns
	skip bool  // the current table has none of the fields
}

func (e *selectingEncoder) begin(n int) error { return e.enc.begin(n) }

func (e *selectingEncoder) card(i int, s Section) error {
	o := cardObject(s.Card)
	idx := e.sel.pick(o.keys)
	if len(idx) == 0 {
		return nil
	}
	var fields []Field
	for _, j := range idx {
		fields = append(fields, Field{Key: o.keys[j], Value: o.vals[j]})
	}
	s.Card = fields
	return e.enc.card(i, s)
}

func (e *selectingEncoder) tableBegin(i int, s Section, cols []string) error {
	e.keep = e.sel.pick(cols)
	if e.skip = len(e.keep) == 0; e.skip {
		return nil
	}
	names := make([]string, len(e.keep))
	for j, k := range e.keep {
		names[j] = cols[k]
	}
	return e.enc.tableBegin(i, s, names)
}

func (e *selectingEncoder) row(vals []any) error {
	if e.skip {
		return nil
	}
	out := make([]any, len(e.keep))
	for j, k := range e.keep {
		out[j] = vals[k]
	}
	return e.enc.row(out)
}

func (e *selectingEncoder) tableEnd() error {
	if e.skip {
		return nil
	}
	return e.enc.tableEnd()
}

func (e *selectingEncoder) end() error { return e.enc.end() }

// jqEncoder is the format's encoder writing into a jqWriter, which it closes at the end.
type jqEncoder struct {
	encoder
	w *jqWriter
}

func (e jqEncoder) end() error {
	if err := e.encoder.end(); err != nil {
		return err
	}
	return e.w.Close()
}

// SetSelection applies --json and --jq to the printer's JSON and JSONL documents; ctx
// stops a --jq expression that runs long.
func (p *Printer) SetSelection(ctx context.Context, s Selection) {
	p.sel, p.ctx = s, ctx
}

// selected wraps the JSON or JSONL encoder writing on out in the selection.
func (p *Printer) selected(base func(out io.Writer) encoder) encoder {
	if p.sel.JQ == nil {
		return p.selecting(base(p.s.Out))
	}
	ctx := p.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	w := &jqWriter{ctx: ctx, jq: p.sel.JQ, lim: p.sel.JQLimits, out: p.s.Out, tty: p.s.OutTTY}
	return p.selecting(jqEncoder{encoder: base(w), w: w})
}

func (p *Printer) selecting(enc encoder) encoder {
	if len(p.sel.Fields) == 0 {
		return enc
	}
	return &selectingEncoder{enc: enc, sel: p.sel}
}

// checkSelection refuses a document the --json fields do not fit (or lists its fields).
func (p *Printer) checkSelection(doc Doc, last []string) error {
	if !p.json() || (len(p.sel.Fields) == 0 && !p.sel.List) {
		return nil
	}
	return p.sel.checkFields(docFields(doc, last))
}

func (p *Printer) json() bool { return p.format == FormatJSON || p.format == FormatJSONL }

// jqWriter runs the --jq expression over the JSON values written to it and prints the
// results on out. The values go, as they are written, to an evaluator process bounded in
// time and memory (internal/jqrun): a JSONL stream is filtered line by line as the lines
// arrive, an indented JSON document once it is whole.
type jqWriter struct {
	ctx context.Context
	jq  *JQ
	lim jqrun.Limits
	out io.Writer
	tty bool // out is a terminal: raw strings are escaped
	run *jqrun.Run
}

func (w *jqWriter) Write(p []byte) (int, error) {
	if w.run == nil {
		run, err := jqrun.Start(w.ctx, w.jq.expr, w.lim, w.print)
		if err != nil {
			return 0, err
		}
		w.run = run
	}
	if _, err := w.run.Write(p); err != nil {
		return 0, jqError(err)
	}
	return len(p), nil
}

// Close waits for the last results: an error if the expression failed or a bound stopped it.
func (w *jqWriter) Close() error {
	if w.run == nil {
		return nil
	}
	return jqError(w.run.Close())
}

// jqError is the expression's failure as a JQError; other errors (writing the output, an
// interrupt) stay as they are.
func jqError(err error) error {
	var je *jqrun.Error
	if errors.As(err, &je) {
		return &JQError{Err: je}
	}
	return err
}

// print writes one result: a string as it is (gh's behaviour, so `--jq '.[].name'` feeds
// a shell loop), anything else as compact JSON (js, gojq's encoding).
func (w *jqWriter) print(s string, isString bool, js []byte) error {
	line := s
	if !isString {
		// JSON escapes the C0 controls; jsonWriter escapes DEL and the C1 ones too.
		if _, err := (jsonWriter{w.out}).Write(append(js, '\n')); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	if w.tty {
		line = Escape(s)
	}
	if _, err := io.WriteString(w.out, line+"\n"); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
