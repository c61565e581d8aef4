package render

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// KeyInput puts a terminal's stdin in raw mode so a watch reads single key presses (q,
// Ctrl-C as byte 3) without Enter and without echo. It returns the reader and the function
// that restores the terminal; on anything but a terminal it returns nil and a no-op.
// Raw mode also stops the terminal turning "\n" into "\r\n": writers must send "\r\n".
func (s *Streams) KeyInput() (io.Reader, func()) {
	f, ok := s.In.(*os.File)
	if !ok || !s.InTTY {
		return nil, func() {}
	}
	old, err := term.MakeRaw(f.Fd())
	if err != nil {
		return nil, func() {}
	}
	return f, func() { _ = term.Restore(f.Fd(), old) }
}
