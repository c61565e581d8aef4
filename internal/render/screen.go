package render

import (
	"bytes"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// A full-screen program (outboxctl top) draws the same tables and cards the commands print,
// laid out here so that escaping, times, enum names and fitting stay the printer's: plain
// text without colour (the program marks its own cursor, and NO_COLOR needs nothing else).

// screenPrinter is a table printer for a screen width columns wide, times relative to now.
func screenPrinter(out *bytes.Buffer, width int, now time.Time) *Printer {
	p := NewPrinter(&Streams{Out: out, Err: out, Width: width}, FormatTable, true)
	p.Now = func() time.Time { return now }
	return p
}

// ScreenTable is t as a header line and one line per row (in t's order), fitted to width
// by the columns' priorities as a terminal table is.
func ScreenTable(t *Table, width int, now time.Time) (header string, rows []string) {
	var buf bytes.Buffer
	head, cells, _ := screenPrinter(&buf, width, now).tableCells(t)
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = ansi.StringWidth(h)
	}
	for _, r := range cells {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	line := func(vals []string) string {
		var b strings.Builder
		for i, v := range vals {
			b.WriteString(v)
			if i < len(vals)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(v)+2))
			}
		}
		return b.String()
	}
	rows = make([]string, len(cells))
	for i, r := range cells {
		rows[i] = line(r)
	}
	return line(head), rows
}

// ScreenDoc is doc as a terminal shows it (titles, cards, tables fitted to width), one
// string a line.
func ScreenDoc(doc Doc, width int, now time.Time) []string {
	var buf bytes.Buffer
	p := screenPrinter(&buf, width, now)
	if err := p.printTerminal(doc); err != nil {
		return []string{Escape(err.Error())}
	}
	for _, s := range doc {
		for _, l := range strings.Split(s.Footer, "\n") {
			if l != "" {
				buf.WriteString(Escape(l) + "\n")
			}
		}
	}
	return strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
}

// CellText is one value as a terminal cell shows it (escaped, times relative to now): a
// screen's sort key and filter text.
func CellText(v any, now time.Time) string {
	var buf bytes.Buffer
	return screenPrinter(&buf, 0, now).cellFull(v)
}

// ScreenLine is s cut to width display columns (its cut marked "…"): a screen line never
// wraps on its own.
func ScreenLine(s string, width int) string {
	if width <= 0 {
		return s
	}
	return cutCell(s, width)
}

// ScreenText is text as screen lines width columns wide: each line escaped (no control
// byte reaches the terminal), long lines wrapped rather than cut.
func ScreenText(text string, width int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		l = Escape(strings.ReplaceAll(l, "\t", "    "))
		if width <= 0 || ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
	}
	return out
}

// ScreenSize is the terminal's size when stdout is one (0, 0 otherwise): a full-screen
// program's first size when its output is wrapped (the tests' tee) and cannot be asked.
func (s *Streams) ScreenSize() (width, height int) {
	if !s.OutTTY {
		return 0, 0
	}
	w, h, err := term.GetSize(os.Stdout.Fd())
	if err != nil {
		return s.Width, 0
	}
	return w, h
}
