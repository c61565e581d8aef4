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
// messages. It returns at EOF or when r fails (closed by the caller).
func relayLines(r io.Reader, w io.Writer, tail *tailBuffer) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		text := string(line)
		if errors.Is(err, bufio.ErrBufferFull) {
			n := len(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = br.ReadSlice('\n')
				n += len(more)
				if err == nil {
					n-- // the newline
				}
			}
			text = cutUTF8(text)
			text += fmt.Sprintf(" …[line cut: %d bytes, the first %d shown]", n, len(text))
		} else {
			text = trimEOL(text)
		}
		if len(line) > 0 {
			text = render.Escape(text)
			if w != nil {
				fmt.Fprintln(w, text)
			}
			tail.add(text)
		}
		if err != nil {
			return
		}
	}
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
