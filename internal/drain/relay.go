package drain

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/render"
)

// maxStderrLine is the longest handler stderr line relayed whole. A longer line is cut and
// marked, and the rest of it read and dropped: the relay never stops reading, since a pipe
// nobody reads blocks the handler and one closed early kills it (SIGPIPE) mid-delivery.
const maxStderrLine = 4 << 10

// relayLines copies a handler's stderr line by line to w (nil: nowhere), escaped so that no
// raw control byte reaches a terminal, and keeps its last lines in tail for error
// messages. A line too long to relay whole is relayed as its head (marked) but kept in tail
// as its end: the reason a handler prints last is at the end of its last line. It returns
// at EOF or when r fails (closed by the caller).
func relayLines(r io.Reader, w io.Writer, tail *tailBuffer) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		text := string(line)
		end := text
		if errors.Is(err, bufio.ErrBufferFull) {
			n := len(line)
			last := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = br.ReadSlice('\n')
				n += len(more)
				if err == nil {
					n-- // the newline
				}
				last = append(last, more...)
				if len(last) > 2*tailKeep {
					last = append(last[:0], last[len(last)-tailKeep:]...)
				}
			}
			end = lineEnd(trimEOL(string(last)), n)
			text = cutUTF8(text)
			text += fmt.Sprintf(" …[line cut: %d bytes, the first %d shown]", n, len(text))
		} else {
			text = trimEOL(text)
			end = text
		}
		if len(line) > 0 {
			if w != nil {
				fmt.Fprintln(w, render.Escape(text))
			}
			tail.add(end)
		}
		if err != nil {
			return
		}
	}
}

// lineEnd is the last tailKeep bytes of a line of n bytes whose end is s, starting on a rune
// and marked "…" when the line's start is cut off.
func lineEnd(s string, n int) string {
	if len(s) > tailKeep {
		s = s[len(s)-tailKeep:]
	}
	for i := 0; i < utf8.UTFMax-1 && s != "" && !utf8.RuneStart(s[0]); i++ {
		s = s[1:]
	}
	if len(s) < n {
		return "…" + s
	}
	return s
}

// trimEOL drops a line's newline (and a CR before it).
func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}

// cutUTF8 drops an incomplete UTF-8 sequence a cut left at the end of s.
func cutUTF8(s string) string {
	for i := 1; i <= utf8.UTFMax && i <= len(s); i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			if !utf8.FullRuneInString(s[len(s)-i:]) {
				return s[:len(s)-i]
			}
			return s
		}
	}
	return s
}
