package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is an output format (-o).
type Format string

// The output formats.
const (
	FormatAuto     Format = ""
	FormatTable    Format = "table"
	FormatJSON     Format = "json"
	FormatJSONL    Format = "jsonl"
	FormatCSV      Format = "csv"
	FormatMarkdown Format = "markdown"
	// FormatWide is the terminal table with every column and no cell cut, even on a pipe.
	FormatWide Format = "wide"
)

// Formats lists the values -o accepts, for help and completion.
var Formats = []string{"table", "wide", "json", "jsonl", "csv", "markdown"} //nolint:gochecknoglobals // constant list

// ParseFormat validates -o.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatAuto, FormatTable, FormatWide, FormatJSON, FormatJSONL, FormatCSV, FormatMarkdown:
		return f, nil
	case "md":
		return FormatMarkdown, nil
	}
	return "", fmt.Errorf("invalid output format %q: valid values are %s", s, strings.Join(Formats, ", "))
}

// Tone says how a value should stand out on a colour terminal.
type Tone int

// The tones. Plain output ignores them.
const (
	ToneNone Tone = iota
	ToneGood
	ToneWarn
	ToneBad
	ToneMuted
)

// Styled is a value with a tone: "backing off" in yellow, "ready" in green.
type Styled struct {
	Text string
	Tone Tone
}

// MarshalJSON writes only the text.
func (s Styled) MarshalJSON() ([]byte, error) { return json.Marshal(s.Text) }

// Table is a list of rows under named columns. Column names are snake_case and stable: they
// are the JSON keys scripts rely on.
type Table struct {
	Columns []string
	Rows    [][]any
	// Labels are shorter headers for a terminal or Markdown (the JSON keys stay Columns).
	Labels map[string]string
	// MachineOnly columns (raw enum integers next to their names) are left out of terminal
	// and Markdown tables; JSON, JSONL, CSV and tab-separated output keep every column.
	MachineOnly map[string]bool
	// HumanOnly columns (a sentence summing up other columns) are shown only on a terminal
	// and in Markdown.
	HumanOnly map[string]bool
	// Priority ranks columns for a narrow terminal: when the table is wider than the
	// terminal, the column with the lowest priority is dropped first (-o wide keeps all).
	// It is laid over defaultPriority (priority.go), which ranks the columns of every wide
	// table by name; columns in neither are never dropped.
	Priority map[string]int
}

// machine returns the table as scripts see it: every column but the human-only ones.
func (t *Table) machine() *Table {
	if len(t.HumanOnly) == 0 {
		return t
	}
	out := &Table{}
	var keep []int
	for i, c := range t.Columns {
		if !t.HumanOnly[c] {
			keep = append(keep, i)
			out.Columns = append(out.Columns, c)
		}
	}
	for _, r := range t.Rows {
		row := make([]any, len(keep))
		for j, i := range keep {
			row[j] = r[i]
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// human returns the table as a person sees it: machine-only columns dropped, labels applied.
func (t *Table) human() (headers []string, rows [][]any) {
	headers, _, rows = t.humanNamed()
	return headers, rows
}

// humanNamed is human with the column names of the headers (for priorities).
func (t *Table) humanNamed() (headers, names []string, rows [][]any) {
	var keep []int
	for i, c := range t.Columns {
		if t.MachineOnly[c] {
			continue
		}
		keep = append(keep, i)
		names = append(names, c)
		h := c
		if l, ok := t.Labels[c]; ok {
			h = l
		}
		headers = append(headers, Escape(h))
	}
	for _, r := range t.Rows {
		row := make([]any, len(keep))
		for j, i := range keep {
			row[j] = r[i]
		}
		rows = append(rows, row)
	}
	return headers, names, rows
}

// Field is one line of a card.
type Field struct {
	Key   string
	Value any
	// MachineOnly fields are left out of the terminal card (see Table.MachineOnly).
	MachineOnly bool
	// HumanOnly fields are left out of JSON and CSV (see Table.HumanOnly).
	HumanOnly bool
}

// CardOf turns the first row of a table into a card, keeping the column flags.
func CardOf(t *Table) []Field {
	if len(t.Rows) == 0 {
		return nil
	}
	fields := make([]Field, 0, len(t.Columns))
	for i, c := range t.Columns {
		fields = append(fields, Field{Key: c, Value: t.Rows[0][i], MachineOnly: t.MachineOnly[c], HumanOnly: t.HumanOnly[c]})
	}
	return fields
}

// Section is one part of a command's output: a card (one object) or a table (a list).
type Section struct {
	Name  string // JSON key when a document has several sections
	Title string // heading on a terminal
	Card  []Field
	Table *Table
	// Footer says what the section leaves out ("showing 20 of 466 stuck shards (--limit)",
	// see Shown). It goes to stderr in every format, so data consumers never see it. A
	// newline separates notes (a fan-out's one per context): each is its own escaped line.
	Footer string
}

// Doc is everything one command prints. A single-section document prints as that section
// (a JSON array for a table, an object for a card); several sections print as one JSON object.
type Doc []Section

// Printer writes documents in the chosen format. One Printer is safe for concurrent use (a
// parallel drain's workers warn through it): every note, warning, line and document is
// written whole under its lock, and Err is stderr under the same lock for a writer of its
// own (a progress line, a worker's note).
type Printer struct {
	mu     sync.Mutex
	s      *Streams
	format Format
	color  bool
	// Now anchors relative times ("3m ago") so output is reproducible in tests.
	Now func() time.Time
	// MaxCell truncates long cells in table output (0: no limit, and no fitting to the
	// terminal's width either: the command asked for cells in full).
	MaxCell int
	// Time is how times read on a terminal: relative (default) or absolute UTC.
	Time TimeMode
	// Headers says whether tables carry a header line (see HeaderMode).
	Headers HeaderMode
	// Width is the terminal width tables fit into (0: no fitting); NewPrinter takes it from
	// the streams.
	Width int
	// CSVRaw leaves CSV text cells as they are (--csv-raw): by default one that starts with
	// = + - @, a tab or a carriage return gets a leading ' (see csvCell).
	CSVRaw bool
	r      *lipgloss.Renderer
	// sel is --json and --jq (SetSelection), ctx what stops a long --jq.
	sel Selection
	ctx context.Context //nolint:containedctx // the invocation's, for --jq only
	// wideCut counts the cells -o wide or -o markdown cut at WideMaxCell in the table being
	// printed (said after it).
	wideCut int
}

// NewPrinter resolves the format: the default is a styled table on a terminal and plain
// tab-separated rows elsewhere. JSON output never carries colour.
func NewPrinter(s *Streams, format Format, noColor bool) *Printer {
	p := &Printer{s: s, format: format, Now: time.Now, MaxCell: 80, Width: s.Width}
	p.color = s.ColorEnabled(noColor) && (format == FormatAuto || format == FormatTable || format == FormatWide)
	p.r = lipgloss.NewRenderer(s.Out)
	if p.color {
		p.r.SetColorProfile(termenv.ANSI256)
	} else {
		p.r.SetColorProfile(termenv.Ascii)
	}
	return p
}

// Format reports the effective format.
func (p *Printer) Format() Format {
	if p.format == FormatAuto {
		return FormatTable
	}
	return p.format
}

// Structured reports whether the output is for machines (json, jsonl, csv).
func (p *Printer) Structured() bool {
	switch p.format {
	case FormatJSON, FormatJSONL, FormatCSV:
		return true
	case FormatAuto, FormatTable, FormatWide, FormatMarkdown:
	}
	return false
}

// Out is stdout.
func (p *Printer) Out() io.Writer { return p.s.Out }

// Err is stderr under the printer's lock: what is written there whole (one Write) never
// lands inside a note, a warning or a document the printer writes at the same time.
func (p *Printer) Err() io.Writer { return lockedWriter{p: p} }

// lockedWriter is a Printer's stderr under its lock.
type lockedWriter struct{ p *Printer }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.s.Err.Write(b)
}

// Notef writes a note to stderr: never data, never on stdout. Its arguments are escaped
// (see Escape); the format is outboxctl's own.
func (p *Printer) Notef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notef(format, args...)
}

// notef is Notef under the lock its caller holds.
func (p *Printer) notef(format string, args ...any) {
	fmt.Fprintf(p.s.Err, format+"\n", escapeArgs(args)...)
}

// Linef writes one line of text on stdout (a grep-able line: enums resolve, enums lint,
// version). Like Notef's, its arguments are escaped and the format is outboxctl's own, so
// no line of stdout carries a raw control character whichever command wrote it.
func (p *Printer) Linef(format string, args ...any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.s.Out, format+"\n", escapeArgs(args)...)
	return err
}

// Warnf writes a warning to stderr.
func (p *Printer) Warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, escapeArgs(args)...)
	if p.s.ColorEnabled(false) && p.s.ErrTTY {
		msg = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Render("warning:") + " " + msg
	} else {
		msg = "warning: " + msg
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.s.Err, msg)
}

// SQL prints SQL text on stdout, exactly as given.
func (p *Printer) SQL(text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := io.WriteString(p.s.Out, text)
	return err
}

// Exposition prints Prometheus' text exposition format on stdout, exactly as given
// (outboxctl metrics): its label values were cleaned of control characters when collected.
func (p *Printer) Exposition(text []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.s.Out.Write(text)
	return err
}

// SQLTo prints the SQL write writes on stdout, exactly, as it is written (buffered): a script
// too large to hold twice in memory (restore --print-sql of large payloads) is never built
// whole first.
func (p *Printer) SQLTo(write func(io.Writer) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	bw := bufio.NewWriterSize(p.s.Out, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// Print writes a document, then the footers of its sections on stderr.
func (p *Printer) Print(doc Doc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.print(doc); err != nil {
		return err
	}
	p.footers(doc)
	return nil
}

func (p *Printer) print(doc Doc) error {
	if err := p.checkSelection(doc, nil); err != nil {
		return err
	}
	if enc := p.encoder(); enc != nil {
		return encodeDoc(enc, doc)
	}
	if p.format == FormatMarkdown {
		return p.printMarkdown(doc)
	}
	return p.printTerminal(doc) // table, wide, or the default on a terminal
}

// ---- JSON ----

// jsonValue turns a cell into what JSON carries: times as RFC 3339 in UTC, everything else
// as it is.
func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case Due:
		return time.Time(x).UTC().Format(time.RFC3339Nano)
	case Ratio:
		return jsonValue(float64(x))
	case JSONText:
		if json.Valid([]byte(x)) {
			return json.RawMessage(x)
		}
		return string(x)
	case []byte: // JSON text read as bytes: nested or a string, never base64
		return jsonValue(JSONText(x))
	case Styled:
		return x.Text
	case Commands:
		return []string(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
	}
	return v
}

// orderedObject marshals keys in the order given, so JSON output is stable and reads like
// the table.
type orderedObject struct {
	keys []string
	vals []any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(jsonValue(o.vals[i]))
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func cardObject(fields []Field) orderedObject {
	o := orderedObject{}
	for _, f := range fields {
		if f.HumanOnly {
			continue
		}
		o.keys = append(o.keys, f.Key)
		o.vals = append(o.vals, f.Value)
	}
	return o
}

// ---- CSV ----

func (p *Printer) csvRow(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = p.csvCell(v)
	}
	return out
}

// csvCell is a cell as CSV carries it. A spreadsheet runs a cell that starts with = + - @,
// a tab or a carriage return as a formula (=HYPERLINK(…) in a category name or a payload
// would be one click away), so a text cell that does gets OWASP's leading ' unless CSVRaw.
// Whether a cell is text is its Go type's, which is its column's (textCell): a number, -5
// included, stays a number.
func (p *Printer) csvCell(v any) string {
	s := escapeCSV(plain(jsonValue(v)))
	if p.CSVRaw || !textCell(v) {
		return s
	}
	return neutralizeFormula(s)
}

// textCell reports whether a cell is text by its Go type (one per SQL type, query.normalize):
// numbers, booleans, times and NULL are not; a list is text when one of its elements is.
func textCell(v any) bool {
	switch x := v.(type) {
	case nil, time.Time, Due, Ratio:
		return false
	case []any:
		return slices.ContainsFunc(x, textCell)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return false
	}
	return true
}

func csvHeader(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = escapeCSV(k)
	}
	return out
}

// plain is a cell's text without relative times or colour: for CSV, TSV and Markdown.
func plain(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case Styled:
		return x.Text
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case Due:
		return time.Time(x).UTC().Format(time.RFC3339)
	case Ratio:
		return plain(float64(x))
	case JSONText:
		return string(x)
	case json.RawMessage: // a payload, once jsonValue nested it: its JSON text, not Go's bytes
		return string(x)
	case []byte:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = plain(e)
		}
		return strings.Join(parts, ",")
	case []string:
		return strings.Join(x, ",")
	case Commands:
		return strings.Join(x, CommandSeparator)
	}
	return fmt.Sprint(v)
}

// ---- Markdown ----

func (p *Printer) printMarkdown(doc Doc) error {
	for i, s := range doc {
		if i > 0 {
			fmt.Fprintln(p.s.Out)
		}
		if s.Title != "" {
			fmt.Fprintf(p.s.Out, "### %s\n\n", Escape(s.Title))
		}
		t := s.Table
		if t == nil {
			t = &Table{Columns: []string{"field", "value"}}
			for _, f := range s.Card {
				if !f.MachineOnly {
					t.Rows = append(t.Rows, []any{f.Key, f.Value})
				}
			}
		}
		headers, rows := t.human()
		tbl := tablewriter.NewTable(p.s.Out,
			tablewriter.WithRenderer(renderer.NewMarkdown()),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithHeaderAlignment(tw.AlignLeft),
			tablewriter.WithRowAlignment(tw.AlignLeft),
		)
		for j, h := range headers { // escaped by human(); a | would still end the cell
			headers[j] = strings.ReplaceAll(h, "|", `\|`)
		}
		tbl.Header(toAny(headers)...)
		for _, r := range rows {
			cells := make([]string, len(r))
			for j, v := range r {
				cells[j] = escapeMarkdown(p.capWide(plain(v)))
			}
			if err := tbl.Append(cells); err != nil {
				return fmt.Errorf("writing Markdown: %w", err)
			}
		}
		if err := tbl.Render(); err != nil {
			return fmt.Errorf("writing Markdown: %w", err)
		}
		p.wideCutNote()
	}
	return nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// ---- terminal and plain tables ----

// printTerminal writes aligned tables and cards for a person (a pipe gets tab-separated
// rows: tsvEncoder).
func (p *Printer) printTerminal(doc Doc) error {
	for i, s := range doc {
		if i > 0 {
			fmt.Fprintln(p.s.Out)
		}
		if s.Title != "" {
			fmt.Fprintln(p.s.Out, p.r.NewStyle().Bold(true).Render(Escape(s.Title)))
		}
		if s.Table != nil {
			if err := p.printTable(s.Table); err != nil {
				return err
			}
			continue
		}
		p.printCard(s.Card)
	}
	return nil
}

// tsvHeader writes the column names above tab-separated rows unless --no-headers.
func (p *Printer) tsvHeader(cols []string) error {
	if p.Headers == HeadersOff {
		return nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = escapeTSV(c)
	}
	if _, err := fmt.Fprintln(p.s.Out, strings.Join(names, "\t")); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// tableCells renders a table for a terminal and fits it to the printer's width (not for
// -o wide): the header texts, the rows' cells and what was cut.
func (p *Printer) tableCells(t *Table) (header []string, cells [][]string, f fitted) {
	labels, names, rows := t.humanNamed()
	for _, c := range labels {
		header = append(header, strings.ToUpper(strings.ReplaceAll(c, "_", " ")))
	}
	for _, r := range rows {
		row := make([]string, len(r))
		for j, v := range r {
			if p.format == FormatWide {
				row[j] = p.cellFull(v)
				if _, styled := v.(Styled); !styled {
					row[j] = p.capWide(row[j])
				}
			} else {
				row[j] = p.cell(v)
			}
		}
		cells = append(cells, row)
	}
	width := p.Width
	if p.format == FormatWide || p.MaxCell == 0 {
		width = 0 // -o wide, or a command showing cells in full (inspect --show-payload)
	}
	f = fitTable(names, header, cells, t.priority(), width)
	pick := func(vals []string) []string {
		out := make([]string, len(f.keep))
		for j, i := range f.keep {
			out[j] = cutCell(vals[i], f.width[j])
		}
		return out
	}
	header = pick(header)
	for i := range cells {
		cells[i] = pick(cells[i])
	}
	return header, cells, f
}

func (p *Printer) printTable(t *Table) error {
	headers, cells, fit := p.tableCells(t)
	header := make([]any, len(headers))
	for i, c := range headers {
		header[i] = c
	}
	tbl := tablewriter.NewTable(p.s.Out,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	bold := p.r.NewStyle().Bold(true)
	for i := range header {
		header[i] = bold.Render(header[i].(string))
	}
	if p.Headers != HeadersOff {
		tbl.Header(header...)
	}
	for _, row := range cells {
		if err := tbl.Append(row); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if note := hiddenNote(fit.dropped, p.Width); note != "" {
		p.notef("%s", note)
	}
	p.wideCutNote()
	return nil
}

// capWide cuts a cell of -o wide or -o markdown at WideMaxCell runes, counting it; a command
// that asked for cells in full (MaxCell 0: inspect --show-payload) keeps them.
func (p *Printer) capWide(s string) string {
	if p.MaxCell == 0 || len(s) <= WideMaxCell || utf8.RuneCountInString(s) <= WideMaxCell {
		return s
	}
	p.wideCut++
	return Truncate(s, WideMaxCell)
}

// wideCutNote says, after a table, how many cells capWide cut.
func (p *Printer) wideCutNote() {
	if p.wideCut > 0 {
		p.notef("%d cell(s) cut at %d characters: -o json prints every value whole", p.wideCut, WideMaxCell)
		p.wideCut = 0
	}
}

func (p *Printer) printCard(fields []Field) {
	width := 0
	for _, f := range fields {
		width = max(width, len(Escape(f.Key)))
	}
	key := p.r.NewStyle().Bold(true)
	for _, f := range fields {
		if f.MachineOnly {
			continue
		}
		k := Escape(f.Key)
		pad := strings.Repeat(" ", width-len(k))
		if cmds, ok := f.Value.(Commands); ok && len(cmds) > 0 {
			// A "next:" block: one command a line, each pasteable as printed.
			for i, c := range cmds {
				if i > 0 {
					k, pad = "", strings.Repeat(" ", width)
				}
				fmt.Fprintf(p.s.Out, "%s%s  %s\n", key.Render(k), pad, Escape(c))
			}
			continue
		}
		fmt.Fprintf(p.s.Out, "%s%s  %s\n", key.Render(k), pad, p.cellFull(f.Value))
	}
}

// cell formats a value for a terminal table: relative times, tones, long text truncated.
func (p *Printer) cell(v any) string {
	s := p.cellFull(v)
	if p.MaxCell > 0 {
		if _, styled := v.(Styled); !styled {
			s = Truncate(s, p.MaxCell)
		}
	}
	return s
}

func (p *Printer) cellFull(v any) string {
	switch x := v.(type) {
	case Styled:
		return p.tone(Styled{Text: Escape(x.Text), Tone: x.Tone})
	case time.Time:
		return FormatTime(x, p.Now(), p.Time)
	case Due:
		return FormatDue(time.Time(x), p.Now(), p.Time)
	case Ratio:
		return Percent(float64(x))
	}
	return Escape(plain(v))
}

func (p *Printer) tone(s Styled) string {
	st := p.r.NewStyle()
	switch s.Tone {
	case ToneGood:
		st = st.Foreground(lipgloss.Color("2"))
	case ToneWarn:
		st = st.Foreground(lipgloss.Color("3"))
	case ToneBad:
		st = st.Foreground(lipgloss.Color("1")).Bold(true)
	case ToneMuted:
		st = st.Faint(true)
	case ToneNone:
		return s.Text
	}
	return st.Render(s.Text)
}

// Truncate shortens s to at most n runes, marking the cut with "…".
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 2 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Relative renders a time for a person relative to now (see FormatTime).
func Relative(t, now time.Time) string { return FormatTime(t, now, TimeRelative) }

// Duration renders a duration to the second, or to the millisecond below one second.
func Duration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// DocStream prints a document whose last section is a table too large to hold: the head
// sections first, then each row as it arrives, through the format's one encoder (the bytes
// Print writes for the whole document). JSON, JSONL, CSV and tab-separated output stream
// with flat memory; a terminal or Markdown table needs every row to align its columns, so
// those buffer.
type DocStream struct {
	p       *Printer
	head    Doc
	last    Section
	machine []int // indexes of the columns scripts see
	enc     encoder
	buf     *Table
}

// StartDoc begins a streamed document; last.Table holds the labels and column flags and no
// rows.
func (p *Printer) StartDoc(head Doc, last Section) *DocStream {
	return &DocStream{p: p, head: head, last: last}
}

// Columns sets the streamed table's columns and prints everything before its first row.
func (d *DocStream) Columns(cols []string) error {
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	t := d.last.Table
	t.Columns = cols
	var names []string
	for i, c := range cols {
		if !t.HumanOnly[c] {
			d.machine = append(d.machine, i)
			names = append(names, c)
		}
	}
	if err := d.p.checkSelection(d.head, names); err != nil {
		return err
	}
	if d.enc = d.p.encoder(); d.enc == nil {
		d.buf = t
		return nil
	}
	if err := d.enc.begin(len(d.head) + 1); err != nil {
		return err
	}
	for i, s := range d.head {
		if err := encodeSection(d.enc, i, s); err != nil {
			return err
		}
	}
	return d.enc.tableBegin(len(d.head), d.last, names)
}

// Row prints (or, for a terminal table, keeps) one row.
func (d *DocStream) Row(vals []any) error {
	if d.buf != nil {
		d.buf.Rows = append(d.buf.Rows, vals)
		return nil
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	row := make([]any, len(d.machine))
	for j, i := range d.machine {
		row[j] = vals[i]
	}
	return d.enc.row(row)
}

// Footer sets the streamed table's footer (see Section.Footer), printed on Close.
func (d *DocStream) Footer(s string) { d.last.Footer = s }

// Close finishes the document and writes the footers on stderr.
func (d *DocStream) Close() error {
	if d.buf != nil {
		return d.p.Print(append(d.head, d.last))
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if d.enc == nil { // Columns failed (or never ran): nothing was begun
		return nil
	}
	if err := d.enc.tableEnd(); err != nil {
		return err
	}
	if err := d.enc.end(); err != nil {
		return err
	}
	d.p.footers(append(d.head, d.last))
	return nil
}

// Plain is a cell's text as tab-separated output carries it (times in RFC 3339 UTC,
// numbers in full): for keys and comparisons outside render.
func Plain(v any) string { return plain(v) }

// WideMaxCell caps a cell of -o wide and -o markdown, in runes: they show a column in full
// where the table fits it to the terminal, but a table pads every row to its widest cell, so
// one huge value (a 2 MB payload) would repeat as padding on every row. -o json and the
// other machine formats keep every value whole.
const WideMaxCell = 1024

// PinASCII sets the process's default colour profile to plain ASCII: golden frames of a
// program drawn through this package (top's teatest frames) then never depend on the
// terminal the tests run in. Tests only; a command decides its colours per Printer.
func PinASCII() { lipgloss.SetColorProfile(termenv.Ascii) }
