// Package live draws what changes while on-call watches: a watch loop that redraws a
// command's output in place (the alternate screen) with what moved since the last frame,
// and a progress line for long work. Both take their writer, key reader and clock as
// arguments, so tests drive them without a terminal. Terminal modes (raw input) come from
// internal/render, the only package that talks to terminal libraries.
package live

import (
	"strings"
)

// Terminal control sequences the watch uses (VT100/xterm; every terminal on-call uses).
const (
	altScreenOn  = "\x1b[?1049h\x1b[?25l" // alternate screen, cursor hidden
	altScreenOff = "\x1b[?25h\x1b[?1049l" // cursor shown, main screen back
	home         = "\x1b[H"
	clearEOL     = "\x1b[K"
	clearBelow   = "\x1b[J"
)

// crlf turns line feeds into CR LF: a terminal in raw mode does not return the carriage.
func crlf(s string) string {
	return strings.ReplaceAll(s, "\n", "\r\n")
}
