package drain

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

// DefaultStreamGrace is how long a stream co-process may take to exit after its stdin
// closes before its process group is killed.
const DefaultStreamGrace = 5 * time.Second

// maxAckLine bounds one acknowledgement line: a co-process that prints more is broken.
const maxAckLine = 64 << 10

// Stream starts a command once and hands it one document per line on stdin; the command
// answers one acknowledgement line per document on stdout. Starting an interpreter (and,
// for Sentry's receivers, Django) once rather than per message is what makes it fast.
// Deliveries are strictly sequential: the next document is written only after the ack of
// the previous one. After any failed delivery the co-process is closed: a late ack must
// never be taken for the next message's.
type Stream struct {
	Args    []string
	Command string
	Timeout time.Duration
	// Grace is how long Close waits for the co-process to exit after stdin EOF.
	Grace time.Duration
	// Stderr receives the co-process's stderr, line by line, escaped.
	Stderr io.Writer

	mu   sync.Mutex
	proc *streamProc
}

// streamProc is one running co-process.
type streamProc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	lines  chan streamLine
	exited chan struct{} // closed after Wait returned
	quit   chan struct{} // closed by stop: the reader gives up
	relay  chan struct{} // closed when stderr reached EOF
	acks   int
	tail   tailBuffer
}

type streamLine struct {
	text []byte
	err  error
}

// streamAck is one acknowledgement line.
type streamAck struct {
	ID    *int64 `json:"id"`
	OK    *bool  `json:"ok"`
	Error string `json:"error"`
}

func (s *Stream) name() string { return s.Command }

// Preflight finds the command the way Exec does.
func (s *Stream) Preflight(ctx context.Context) error {
	return (&Exec{Args: s.Args, Command: s.Command}).Preflight(ctx)
}

// Deliver writes the document and waits for its acknowledgement, at most Timeout. A failed
// delivery adds at most about 4 s (exit status, kill) before it returns: the drain's
// transactions may sit idle for Timeout + 10 s (Run raises idle_in_transaction_session_timeout).
func (s *Stream) Deliver(_ context.Context, m Message) error {
	doc, err := json.Marshal(NewDocument(m))
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		if s.proc, err = s.start(); err != nil {
			return unavailable{fmt.Errorf("handler stream:%s: %w", s.name(), err)}
		}
	}
	p := s.proc
	if err := p.exchange(append(doc, '\n'), m.ID, s.Timeout); err != nil {
		err = s.failure(p, m.ID, err)
		s.stop(p)
		s.proc = nil
		return err
	}
	p.acks++
	return nil
}

// exchange writes one document and reads its ack.
func (p *streamProc) exchange(doc []byte, id int64, timeout time.Duration) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
		_ = p.stdin.SetWriteDeadline(time.Now().Add(timeout))
	}
	if _, err := p.stdin.Write(doc); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errTimeout
		}
		return errExited
	}
	select {
	case l := <-p.lines:
		if l.err != nil {
			return l.err
		}
		return checkAck(l.text, id)
	case <-deadline:
		return errTimeout
	}
}

var (
	errTimeout = errors.New("timed out")
	errExited  = errors.New("exited")
)

// checkAck judges one acknowledgement line for the message in flight.
func checkAck(line []byte, id int64) error {
	var a streamAck
	if err := json.Unmarshal(line, &a); err != nil || a.ID == nil || a.OK == nil {
		text := strings.TrimRight(string(line), "\r\n")
		text = render.Truncate(text, 201) // 200 runes and "…", never half a rune
		// %q: the line as a Go string, no raw control bytes.
		return fmt.Errorf("answered %q instead of an acknowledgement {\"id\": %d, \"ok\": true}", text, id)
	}
	if *a.ID != id {
		return fmt.Errorf("acknowledged message %d while message %d was in flight", *a.ID, id)
	}
	if !*a.OK {
		if a.Error == "" {
			return errors.New("refused it (ok: false)")
		}
		return fmt.Errorf("refused it: %s", clip(a.Error))
	}
	return nil
}

// failure words a failed exchange, with what the co-process last wrote on stderr. A
// co-process that could not run its command (126/127) before any ack is unavailable.
func (s *Stream) failure(p *streamProc, id int64, err error) error {
	prefix := fmt.Sprintf("handler stream:%s", s.name())
	switch {
	case errors.Is(err, errTimeout):
		return fmt.Errorf("%s timed out after %s waiting for the acknowledgement of message %d", prefix, s.Timeout, id)
	case errors.Is(err, errExited) || errors.Is(err, io.EOF):
		code := p.waitExit(2 * time.Second)
		msg := fmt.Sprintf("%s exited (%s) before acknowledging message %d", prefix, code, id)
		if t := p.tail.String(); t != "" {
			msg += ": " + t
		}
		if p.acks == 0 && (code == "exit status 126" || code == "exit status 127") {
			return unavailable{errors.New(msg)}
		}
		return errors.New(msg)
	}
	return fmt.Errorf("%s %w", prefix, err)
}

// waitExit waits a little for the co-process to exit and says how it did.
func (p *streamProc) waitExit(d time.Duration) string {
	select {
	case <-p.exited:
	case <-time.After(d):
		return "still running"
	}
	select { // its last stderr lines, for the message
	case <-p.relay:
	case <-time.After(200 * time.Millisecond):
	}
	if p.cmd.ProcessState == nil {
		return "unknown status"
	}
	return p.cmd.ProcessState.String()
}

// start runs the command through sh -c in its own process group, so the terminal's Ctrl-C
// reaches outboxctl, which finishes the delivery in flight and closes the co-process.
func (s *Stream) start() (*streamProc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	// Not cmd.StderrPipe: Wait would close it before its last lines were read.
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	p := &streamProc{stdin: inW, lines: make(chan streamLine, 1), exited: make(chan struct{}), quit: make(chan struct{}), relay: make(chan struct{})}
	p.cmd = exec.Command(s.Args[0], s.Args[1:]...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	err = p.cmd.Start()
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	go p.read(outR)
	go p.relayStderr(errR, s.stderr())
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

func (s *Stream) stderr() io.Writer {
	if s.Stderr == nil {
		return os.Stderr
	}
	return s.Stderr
}

// read delivers stdout line by line; after an error (EOF, a line too long) it stops.
func (p *streamProc) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxAckLine)
	for {
		line, err := br.ReadSlice('\n')
		var l streamLine
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			l.err = fmt.Errorf("wrote an acknowledgement line longer than %d bytes", maxAckLine)
		case err != nil:
			l.err = errExited
		default:
			l.text = append([]byte(nil), line...)
		}
		select {
		case p.lines <- l:
		case <-p.quit:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// relayStderr copies the co-process's stderr to ours, escaped (no raw control bytes reach a
// terminal), and keeps its end for error messages.
func (p *streamProc) relayStderr(r *os.File, w io.Writer) {
	defer close(p.relay)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxAckLine)
	for sc.Scan() {
		line := render.Escape(sc.Text())
		fmt.Fprintln(w, line)
		p.tail.add(line)
	}
}

// Close ends the co-process: stdin EOF, Grace to exit, then the whole process group is
// killed. The command calls it on every exit path.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.closeProc(s.proc)
		s.proc = nil
	}
	return nil
}

func (s *Stream) closeProc(p *streamProc) {
	_ = p.stdin.Close()
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultStreamGrace
	}
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	s.stop(p)
}

// stop kills the co-process's whole group (sh -c's children too) and reaps it.
func (s *Stream) stop(p *streamProc) {
	select {
	case <-p.quit:
		return // already stopped
	default:
	}
	close(p.quit)
	_ = p.stdin.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second): // a process stuck in the kernel: do not wait for it
	}
	select { // its last stderr lines
	case <-p.relay:
	case <-time.After(200 * time.Millisecond):
	}
}

// tailBuffer keeps the last stderr lines of a co-process, about 500 bytes.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	size  int
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line)
	for len(t.lines) > 1 && t.size > 500 {
		t.size -= len(t.lines[0])
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return clip(strings.Join(strings.Fields(strings.Join(t.lines, " ")), " "))
}

// clip shortens text for an error message: cut first (on a rune), then escaped, so the cut
// never falls inside an escape (`\x` of `\x1b`) or a rune.
func clip(s string) string {
	return render.Escape(render.Truncate(s, 500))
}
