// Package render owns everything outboxctl writes: the stream and colour policy, tables,
// cards, JSON and SQL. It is the only package that imports lipgloss and tablewriter, so a
// change of either library touches one place. stdout carries data (or SQL) only; notes,
// warnings and prompts go to stderr.
package render

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// Streams are the process's standard streams and what is known about them.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
	// Width is the terminal width in columns, 0 when unknown.
	Width int
	// Getenv reads the environment (injected so tests control NO_COLOR and friends).
	Getenv func(string) string
}

// System returns the real standard streams. OUTBOXCTL_FORCE_TTY=1 makes outboxctl treat them
// as terminals, for scripted tests of the TTY rendering.
func System() *Streams {
	s := &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
	}
	if s.OutTTY {
		if w, _, err := term.GetSize(os.Stdout.Fd()); err == nil {
			s.Width = w
		}
	}
	if forced, _ := strconv.ParseBool(os.Getenv("OUTBOXCTL_FORCE_TTY")); forced {
		s.InTTY, s.OutTTY, s.ErrTTY = true, true, true
	}
	// COLUMNS stands in when the terminal does not say its width (a forced TTY in tests).
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); s.OutTTY && s.Width == 0 && err == nil && c > 0 {
		s.Width = c
	}
	return s
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns streams backed by buffers, not terminals, with an empty environment.
func Test() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{
		In: bytes.NewReader(nil), Out: out, Err: errOut,
		Getenv: func(string) string { return "" },
	}, out, errOut
}

// ColorEnabled is the one colour policy: NO_COLOR (any value) or CLICOLOR=0 turns colour
// off; CLICOLOR_FORCE (non-zero) turns it on; otherwise colour follows stdout being a
// terminal. noColorFlag is --no-color.
func (s *Streams) ColorEnabled(noColorFlag bool) bool {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case noColorFlag:
		return false
	case getenv("NO_COLOR") != "":
		return false
	case getenv("CLICOLOR") == "0":
		return false
	case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
		return true
	}
	return s.OutTTY
}

// To returns streams that send stdout and stderr to w and keep what is known of the
// terminal (TTY, width, colour): a watch renders each frame, footers included, this way.
func (s *Streams) To(w io.Writer) *Streams {
	c := *s
	c.Out, c.Err = w, w
	return &c
}

// WithSharedErr is s with stderr shared safely by everything one command runs at once: a
// progress line redrawn by its ticker, a parallel drain's workers, a stream handler's
// relayed stderr, a Ctrl-C note and the printers (each Printer locks only itself, and a
// command makes several). Every write is whole and one at a time; and on a terminal a line
// written while a progress line is shown first clears that line ("\r" and erase to its end),
// so a warning is never glued to the end of the progress line (the next redraw draws it
// again below); a write that starts with a newline keeps the line (a failed step's). Streams already shared are returned as they are.
func (s *Streams) WithSharedErr() *Streams {
	if _, ok := s.Err.(*sharedErr); ok {
		return s
	}
	c := *s
	c.Err = &sharedErr{w: s.Err, tty: s.ErrTTY}
	return &c
}

// sharedErr is stderr under one lock; live says the last write was a progress frame: it
// began with "\r" and left the line open (no newline).
type sharedErr struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	live bool
}

func (e *sharedErr) Write(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(b) == 0 {
		return e.w.Write(b)
	}
	// A write that starts with a newline ends the line as it is (a failed claim's line is
	// kept, the error below it); one that starts with "\r" is the next frame.
	if e.tty && e.live && b[0] != '\r' && b[0] != '\n' {
		if _, err := io.WriteString(e.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
	}
	e.live = b[0] == '\r' && b[len(b)-1] != '\n'
	return e.w.Write(b)
}
