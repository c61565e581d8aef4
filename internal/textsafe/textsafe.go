// Package textsafe holds the one definition of the characters untrusted text must never
// carry raw into a terminal, a printed SQL script or a single-line message: the printers
// escape them, the SQL renderer spells them as escapes, and name checks refuse them.
package textsafe

import "strings"

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
