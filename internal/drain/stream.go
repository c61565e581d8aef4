package drain

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/render"
)

// DefaultStreamGrace is how long a stream co-process may take to exit after its stdin
// closes before its process group is killed.
const DefaultStreamGrace = 5 * time.Second

// maxAckLine bounds one acknowledgement line: a co-process that prints more is broken.
const maxAckLine = 64 << 10

// StreamProtocol is the version of the stream protocol (docs/handlers/README.md) that each
// document names in its "protocol" key. Version 2 added the per-delivery token the ack
// must echo; a version 1 handler's ack carries none and is refused with a line saying so.
const StreamProtocol = 2

// Stream starts a command once and hands it one document per line on stdin; the command
// answers one acknowledgement line per document on stdout. Starting an interpreter (and,
// for Sentry's receivers, Django) once rather than per message is what makes it fast.
// Deliveries are strictly sequential: the next document is written only after the ack of
// the previous one. After any failed delivery the co-process is closed: a late ack must
// never be taken for the next message's.
//
// An ack proves that the co-process read its document: each document ends with a random
// token (128 bits, fresh per delivery) that the ack must echo, and nothing the co-process
// wrote before the document was written can be an ack (see exchange). A co-process that
// prints "ok" for messages it never read therefore fails the first of them, head-of-line.
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

// streamProc is one running co-process. Its stdout is read only inside exchange, never
// ahead by another goroutine: a line is taken for an ack only if it was read after its
// document was written.
type streamProc struct {
	cmd    *exec.Cmd
	tree   *procTree
	stdin  *os.File
	stdout *os.File
	stderr *os.File // the relay's end: stop closes it, so the relay ends with the process
	out    *bufio.Reader
	exited chan struct{} // closed after Wait returned
	quit   chan struct{} // closed by stop
	relay  chan struct{} // closed when stderr reached EOF
	acks   int
	tail   tailBuffer
}

// streamDocument is what a stream co-process receives: the handler document, then the
// protocol version and the delivery's token, last, so that only a co-process that read the
// whole line can know it.
type streamDocument struct {
	Document
	Protocol int    `json:"protocol"`
	Token    string `json:"token"`
}

// streamAck is one acknowledgement line.
type streamAck struct {
	ID    *int64 `json:"id"`
	OK    *bool  `json:"ok"`
	Token string `json:"token"`
	Error string `json:"error"`
}

// newToken is a delivery's token: 128 random bits, hex.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func (s *Stream) name() string { return s.Command }

// Preflight finds the command the way Exec does.
func (s *Stream) Preflight(ctx context.Context) error {
	return (&Exec{Args: s.Args, Command: s.Command}).Preflight(ctx)
}

// Deliver writes the document and waits for its acknowledgement, at most Timeout. A failed
// delivery adds at most about 4 s (exit status, kill) before it returns: the drain's
// transactions may sit idle for Timeout + 10 s (Run raises idle_in_transaction_session_timeout).
// Cancelling ctx abandons the delivery: the co-process's group is killed at once.
func (s *Stream) Deliver(ctx context.Context, m Message) error {
	if err := checkPayload(m); err != nil {
		return err
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	doc, err := json.Marshal(streamDocument{Document: NewDocument(m), Protocol: StreamProtocol, Token: token})
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
	if err := p.exchange(ctx, append(doc, '\n'), m.ID, token, s.Timeout); err != nil {
		err = s.failure(p, m.ID, err)
		s.stop(p)
		s.proc = nil
		return err
	}
	p.acks++
	return nil
}

// exchange writes one document and reads its ack. The rule that makes an ack a proof of
// reading: the co-process must have written nothing that outboxctl has not read when the
// document is about to be written (unread checks the reader's buffer and the pipe itself),
// and the ack, read after the document was written, must carry the document's token.
// Cancelling ctx (a second Ctrl-C) ends the wait at once.
func (p *streamProc) exchange(ctx context.Context, doc []byte, id int64, token string, timeout time.Duration) error {
	if err := p.unread(id); err != nil {
		return err
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	stop := p.watch(ctx, deadline) // where the pipes take no deadline (Windows)
	err := p.send(ctx, doc, id, token, deadline)
	if why := stop(); why != nil && (err == nil || errors.Is(err, errExited)) {
		err = why // the watch killed the co-process: that is why its pipes closed
	}
	return err
}

// send writes the document and reads one line, both by deadline, and judges it.
func (p *streamProc) send(ctx context.Context, doc []byte, id int64, token string, deadline time.Time) error {
	_ = p.stdin.SetWriteDeadline(deadline)
	_ = p.stdout.SetReadDeadline(deadline)
	abandon := context.AfterFunc(ctx, func() {
		// Unblocks the write or the read below, which then see ctx's error.
		_ = p.stdin.SetWriteDeadline(time.Now())
		_ = p.stdout.SetReadDeadline(time.Now())
	})
	defer abandon()
	if _, err := p.stdin.Write(doc); err != nil {
		return p.ioError(ctx, err, errExited)
	}
	line, err := p.out.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return fmt.Errorf("wrote an acknowledgement line longer than %d bytes", maxAckLine)
	case err != nil:
		return p.ioError(ctx, err, errExited)
	}
	return checkAck(line, id, token)
}

// ioError says why a write or read of the co-process's pipes failed: abandoned, timed out,
// or (otherwise) the co-process is gone.
func (p *streamProc) ioError(ctx context.Context, err, otherwise error) error {
	switch {
	case ctx.Err() != nil:
		return errAbandoned
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errTimeout
	}
	return otherwise
}

// unread fails the delivery of message id when the co-process wrote anything on stdout that
// was not read as an earlier document's ack: such a line was written before this document
// was, so it cannot answer it (an ack printed ahead for a message never read). It checks
// the bytes already read into the buffer and then, without waiting, the pipe itself.
func (p *streamProc) unread(id int64) error {
	pending := p.out.Buffered()
	var early []byte
	if pending > 0 {
		early, _ = p.out.Peek(min(pending, 200))
	} else if raw, err := p.stdout.SyscallConn(); err == nil {
		_ = p.stdout.SetReadDeadline(time.Time{}) // an expired deadline would skip the read
		buf := make([]byte, 200)
		_ = raw.Read(func(fd uintptr) bool {
			n := readAhead(fd, buf)
			if n > 0 {
				early = buf[:n]
			}
			return true
		})
	}
	if len(early) == 0 {
		return nil
	}
	text := strings.TrimRight(string(early), "\r\n")
	return fmt.Errorf("broke the stream protocol: it wrote %q on stdout before the document of message %d was written, and no ack can come before its document (one ack line per document read, nothing else on stdout)", text, id)
}

var (
	errTimeout   = errors.New("timed out")
	errExited    = errors.New("exited")
	errAbandoned = errors.New("abandoned")
	// errOldProtocol is an ack without a token: a handler written for protocol 1.
	errOldProtocol = errors.New("old protocol")
)

// checkAck judges one acknowledgement line for the message in flight, which carried token.
func checkAck(line []byte, id int64, token string) error {
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
		// A refusal fails the message whatever its token: its reason is worth more.
		if a.Error == "" {
			return errors.New("refused it (ok: false)")
		}
		return fmt.Errorf("refused it: %s", clip(a.Error))
	}
	switch a.Token {
	case token:
		return nil
	case "":
		return fmt.Errorf("%w: acknowledged message %d without the document's token: it speaks stream protocol 1; update it to protocol %d, whose ack echoes each document's \"token\" (docs/handlers/README.md)",
			errOldProtocol, id, StreamProtocol)
	}
	return fmt.Errorf("broke the stream protocol: acknowledged message %d with a token that is not the one its document carried (an ack must echo the token of the document it answers)", id)
}

// failure words a failed exchange, with what the co-process last wrote on stderr. A
// co-process that could not run its command (126/127) before any ack is unavailable.
func (s *Stream) failure(p *streamProc, id int64, err error) error {
	prefix := fmt.Sprintf("handler stream:%s", s.name())
	switch {
	case errors.Is(err, errAbandoned):
		return fmt.Errorf("%s: the delivery of message %d was abandoned", prefix, id)
	case errors.Is(err, errTimeout):
		return fmt.Errorf("%s timed out after %s waiting for the acknowledgement of message %d", prefix, s.Timeout, id)
	case errors.Is(err, errOldProtocol) && p.acks == 0:
		// Nothing was acknowledged by a handler that cannot be used as it is: like a
		// command that does not run, the shard's schedule is put back.
		return unavailable{fmt.Errorf("%s %s", prefix, strings.TrimPrefix(err.Error(), errOldProtocol.Error()+": "))}
	case errors.Is(err, errOldProtocol):
		return fmt.Errorf("%s %s", prefix, strings.TrimPrefix(err.Error(), errOldProtocol.Error()+": "))
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
	// Not cmd.StderrPipe: Wait would close it before its last lines were read.
	ends, err := pipes(3)
	if err != nil {
		return nil, err
	}
	inR, inW, outR, outW, errR, errW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5]
	p := &streamProc{stdin: inW, stdout: outR, stderr: errR, out: bufio.NewReaderSize(outR, maxAckLine), exited: make(chan struct{}), quit: make(chan struct{}), relay: make(chan struct{})}
	p.cmd = exec.Command(s.Args[0], s.Args[1:]...)
	p.tree = newProcTree(p.cmd)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	err = p.cmd.Start()
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	p.tree.started()
	go func() {
		defer close(p.relay)
		defer errR.Close()
		relayLines(errR, s.stderr(), &p.tail)
	}()
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pipes makes n pipes: their read and write ends, in turn.
func pipes(n int) ([]*os.File, error) {
	ends := make([]*os.File, 0, 2*n)
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ends...)
			return nil, err
		}
		ends = append(ends, r, w)
	}
	return ends, nil
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
	_ = p.tree.kill()
	defer p.tree.release()
	defer p.stdout.Close()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second): // a process stuck in the kernel: do not wait for it
	}
	select { // its last stderr lines
	case <-p.relay:
	case <-time.After(200 * time.Millisecond):
		// A process outside the killed group (a daemon it started) still holds stderr:
		// the relay stops here, so nothing it reads is written after the drain ended.
		_ = p.stderr.Close()
		select { // (a relay stuck writing to a stderr that takes nothing is left to it)
		case <-p.relay:
		case <-time.After(time.Second):
		}
	}
}

// tailRunes is how much of a handler's stderr its failure message carries: the last 500
// runes, since a handler says why it failed last (its noise comes first).
const tailRunes = 500

// tailKeep is how many bytes of stderr the tail holds: tailRunes runes of up to 4 bytes each.
const tailKeep = 4 * tailRunes

// tailBuffer keeps the end of a handler's stderr, raw, its lines' white space collapsed as the
// message shows it: at least tailKeep bytes of the last lines (all of them when there are
// fewer), so String can cut the last tailRunes runes of the text from it.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	size  int
}

func (t *tailBuffer) add(line string) {
	line = strings.Join(strings.Fields(line), " ")
	if line == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	// The oldest line goes only while the others still hold tailKeep bytes.
	for len(t.lines) > 1 && t.size-len(t.lines[0])-1 >= tailKeep {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

// String is the last tailRunes runes of the lines, joined by spaces, escaped.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return clipTail(strings.Join(t.lines, " "))
}

// clipTail keeps the end of text for an error message, the cut marked by a leading "…": cut
// first (on a rune: a stray byte of invalid UTF-8 counts as one), then escaped, so the cut
// never falls inside an escape or a rune.
func clipTail(s string) string {
	if utf8.RuneCountInString(s) <= tailRunes {
		return render.Escape(s)
	}
	i := len(s)
	for n := 0; n < tailRunes-1; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return "…" + render.Escape(s[i:])
}

// clip shortens text for an error message: cut first (on a rune), then escaped, so the cut
// never falls inside an escape (`\x` of `\x1b`) or a rune.
func clip(s string) string {
	return render.Escape(render.Truncate(s, 500))
}
