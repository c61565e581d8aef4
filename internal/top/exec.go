package top

import (
	"io"
	"slices"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// Exec is an outboxctl command top runs through the CLI's own code path (Source.Run): a
// pane's read (killswitch list, backfill status, verify, mailboxes) or a repair, which
// prints its plan and asks for its confirmation exactly as on a terminal; what the
// operator types is the command's stdin. top has no second implementation of any of
// them: the plan, the confirmation (the count typed back above 100 shards), the
// context's read-only check, the audit line and the archive are the command's.
type Exec struct {
	output  chan string
	answer  *io.PipeWriter
	mu      sync.Mutex
	code    int
	answers []string
}

// NewExec starts run with a stdin fed by Answer and an output whose writes arrive as
// Output's chunks; Output is closed when run returned its exit status (Code).
func NewExec(run func(in io.Reader, out io.Writer) int) *Exec {
	pr, pw := io.Pipe()
	e := &Exec{output: make(chan string), answer: pw}
	go func() {
		code := run(pr, chanWriter(e.output))
		e.mu.Lock()
		e.code = code
		e.mu.Unlock()
		_ = pr.Close() // an answer typed after the end is dropped
		close(e.output)
	}()
	return e
}

// Answer types line (and a newline) on the command's stdin, off the caller's loop: a
// command that no longer reads never blocks a key.
func (e *Exec) Answer(line string) {
	e.mu.Lock()
	e.answers = append(e.answers, line)
	e.mu.Unlock()
	go func() { _, _ = e.answer.Write([]byte(line + "\n")) }()
}

// Answers are the lines typed on the command's stdin so far.
func (e *Exec) Answers() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.answers)
}

// Code is the command's exit status, once Output is closed.
func (e *Exec) Code() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.code
}

type chanWriter chan string

func (c chanWriter) Write(p []byte) (int, error) {
	c <- string(p)
	return len(p), nil
}

// The messages of a running command: a chunk of its output, or its end.
type (
	execOutMsg struct {
		v     *view
		e     *Exec
		chunk string
	}
	execDoneMsg struct {
		v    *view
		e    *Exec
		code int
	}
)

// follow sends e's output to the program as it comes (send is the program's Send: the
// loop never waits for a command), then its end.
func follow(v *view, e *Exec, send func(tea.Msg)) {
	go func() {
		for chunk := range e.output {
			send(execOutMsg{v: v, e: e, chunk: chunk})
		}
		send(execDoneMsg{v: v, e: e, code: e.Code()})
	}()
}

// terminalText is what a command printed as the lines a screen shows: its colour and cursor
// sequences dropped, a line a progress report rewrote with \r shown as it was left.
func terminalText(s string) []string {
	s = ansi.Strip(s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if j := strings.LastIndex(strings.TrimRight(l, "\r"), "\r"); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}
