package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Text outboxctl prints comes from places it does not control: handler output, payloads,
// option and Redis values, names in the database, flags. A terminal obeys control bytes
// (ESC]0;…BEL retitles it, ESC[2K erases a line, a carriage return overwrites one), so
// every printer path passes text through the escapers below, which show each control
// character visibly instead of sending it or silently dropping it.

// Escape returns s with every control character written visibly: \n, \r and \t by name,
// other C0 bytes, DEL and stray bytes of invalid UTF-8 as \xHH, and C1 characters, the
// Unicode line and paragraph separators and the bidirectional overrides as \uXXXX. Use it
// for a line a person reads: an error, a hint, a note, a table cell.
func Escape(s string) string { return escape(s, false, "") }

// escapeTSV is Escape for tab-separated rows, where a value must stay in its column and a
// script must be able to tell "\n" typed by someone from a newline: backslashes double.
func escapeTSV(s string) string { return escape(s, true, "") }

// escapeCSV keeps the tabs and newlines that encoding/csv quotes (a multi-line value stays
// one cell) and escapes every other control character.
func escapeCSV(s string) string { return escape(s, false, "\t\n") }

// escapeMarkdown is Escape for a Markdown table cell, where a | would end the cell (a
// newline is already \n).
func escapeMarkdown(s string) string { return strings.ReplaceAll(Escape(s), "|", `\|`) }

// formulaStart are the bytes that make a spreadsheet read a cell as a formula (OWASP's CSV
// injection list): = + - @, tab and carriage return.
const formulaStart = "=+-@\t\r"

// neutralizeFormula prefixes ' to s when it starts with one of formulaStart: the
// spreadsheet then shows the text and runs nothing.
func neutralizeFormula(s string) string {
	if s != "" && strings.IndexByte(formulaStart, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// escape does the work of the escapers above: keep lists the control characters to leave.
func escape(s string, backslash bool, keep string) string {
	if !needsEscape(s, backslash, keep) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case !textsafe.IsControl(r) || strings.ContainsRune(keep, r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, backslash bool, keep string) bool {
	if !utf8.ValidString(s) || (backslash && strings.Contains(s, `\`)) {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool { return textsafe.IsControl(r) && !strings.ContainsRune(keep, r) }) >= 0
}

// escapeArgs escapes the text among a note's arguments: the format string is outboxctl's
// own, the arguments may be anyone's.
func escapeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case string:
			out[i] = Escape(x)
		case error:
			out[i] = Escape(x.Error())
		case fmt.Stringer:
			out[i] = Escape(x.String())
		default:
			out[i] = a
		}
	}
	return out
}

// jsonWriter passes JSON through with the control characters encoding/json leaves raw
// (DEL and the C1 range; it already escapes C0, U+2028 and U+2029) written as \u escapes,
// which JSON readers decode to the same string. Each Write is one whole encoded value.
type jsonWriter struct {
	w interface{ Write([]byte) (int, error) }
}

func (j jsonWriter) Write(p []byte) (int, error) {
	s := string(p)
	if strings.IndexFunc(s, textsafe.IsControl) < 0 {
		return j.w.Write(p)
	}
	var b strings.Builder
	for _, r := range s {
		if textsafe.IsControl(r) && r != '\n' && r != '\t' {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if _, err := j.w.Write([]byte(b.String())); err != nil {
		return 0, err
	}
	return len(p), nil
}
