// Package textsafe holds the one definition of the characters untrusted text must never
// carry raw into a terminal, a printed SQL script or a single-line message: the printers
// escape them, the SQL renderer spells them as escapes, and name checks refuse them.
package textsafe

import (
	"fmt"
	"strings"
)

// IsControl reports the characters that can move a terminal's cursor, end a line (for
// PostgreSQL, an editor or a terminal) or reorder what is displayed: C0, DEL, C1, the
// Unicode line and paragraph separators, the bidirectional marks and overrides.
func IsControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') ||
		r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// Clean replaces the IsControl characters of s with "?", for text shown where an escape
// would be noise (a name, a reason, a cell in a one-line finding).
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// ShellQuote is s as one word of a POSIX shell command line that is always one line: bare
// when it is made of characters no shell treats specially, single-quoted otherwise, and,
// when it holds an IsControl character, as a $'…' word whose escapes (\n, \xNN, \uNNNN)
// spell those characters, so a pasted command gets the exact value and the line never
// breaks, moves the cursor or reorders on a terminal.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@=+%") == "" {
		return s
	}
	if !strings.ContainsFunc(s, IsControl) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// Command is words as one shell command line, each word quoted by ShellQuote.
func Command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}
