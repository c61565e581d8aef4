// Package jqrun evaluates a --jq expression in a child process that cannot outgrow its
// bounds. gojq has no memory limit, and one of its steps can allocate gigabytes
// (`"a" * 1000000000`, `.[500000000] = 1`): no check between steps stops that, so the
// evaluation runs in a copy of outboxctl (the same executable, told by its environment to
// be the evaluator) whose address space is capped and whose heap is watched, killed when it
// runs past its time. A runaway expression costs at most its caps and ends in one error.
package jqrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxctl/outboxctl/internal/bytesize"
)

// Limits bound one evaluation (every value of one command's output).
type Limits struct {
	// Timeout is the wall time of the whole evaluation (--jq-timeout).
	Timeout time.Duration
	// MaxBytes is the heap the evaluator may hold, the decoded output included
	// (--max-jq-bytes); its address space is capped a little above.
	MaxBytes int64
}

// Defaults: a jq expression over outboxctl's output takes milliseconds and a few times the
// output's size; these are far above any real use and far below what hurts a host.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultMaxBytes = 512 << 20
)

// The evaluator's environment: the first names the expression (and makes the process an
// evaluator), the second its heap cap in bytes.
const (
	envExpr     = "OUTBOXCTL_INTERNAL_JQ_EXPR"
	envMaxBytes = "OUTBOXCTL_INTERNAL_JQ_MAX_BYTES"
)

// Exit statuses of the evaluator beside 0 (and the Go runtime's 2 for an allocation its
// address space refused).
const (
	exitFailed = 1 // the expression failed: an E frame says why
	exitMemory = 3 // the heap passed MaxBytes
)

// Frames, one a line, from the evaluator: a result string (S), any other result (J), both
// as compact JSON; the expression's error (E, a JSON string), after which it exits.
const (
	frameString = 'S'
	frameJSON   = 'J'
	frameError  = 'E'
)

// Error is an evaluation that failed or was stopped; Bound is "" for the expression's own
// error, else the flag whose bound stopped it.
type Error struct {
	Msg   string
	Bound string
}

func (e *Error) Error() string { return e.Msg }

// Emit receives each result: a string (s, ok) or any other value's compact JSON.
type Emit func(s string, isString bool, js []byte) error

// Run is one evaluation under way: write the JSON values to it, then Close it.
type Run struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	ctx    context.Context
	parent context.Context
	cancel context.CancelFunc
	lim    Limits
	done   chan struct{} // the reader has finished
	mu     sync.Mutex
	failed error // the E frame, or Emit's error
	once   sync.Once
	result error // Close's
}

// Start starts the evaluator for expr (already known to compile) under lim; emit gets the
// results as they come. ctx ends it early (an interrupt).
func Start(ctx context.Context, expr string, lim Limits, emit Emit) (*Run, error) {
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--jq: finding outboxctl's executable to evaluate in: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	cmd := exec.CommandContext(tctx, exe)
	cmd.Env = append(os.Environ(), envExpr+"="+expr, envMaxBytes+"="+strconv.FormatInt(lim.MaxBytes, 10))
	r := &Run{cmd: cmd, ctx: tctx, parent: ctx, cancel: cancel, lim: lim, done: make(chan struct{})}
	// The evaluator's stderr is only the Go runtime's account of a refused allocation:
	// its first line is enough, and a cap keeps a long trace out of memory.
	cmd.Stderr = &capped{buf: &r.stderr, left: 4096}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		cancel()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("--jq: starting the evaluator: %w", err)
	}
	go r.read(stdout, emit)
	return r, nil
}

// read passes the evaluator's frames to emit until its stdout ends or a frame fails.
func (r *Run) read(stdout io.Reader, emit Emit) {
	defer close(r.done)
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 1 {
			if ferr := frame(line[:len(line)-1], emit); ferr != nil {
				r.fail(ferr)
				_, _ = io.Copy(io.Discard, br)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func frame(line []byte, emit Emit) error {
	kind, body := line[0], line[1:]
	switch kind {
	case frameString, frameError:
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return fmt.Errorf("--jq: the evaluator's output: %w", err)
		}
		if kind == frameError {
			return &Error{Msg: s}
		}
		return emit(s, true, nil)
	case frameJSON:
		return emit("", false, body)
	}
	return fmt.Errorf("--jq: the evaluator's output: unknown frame %q", kind)
}

func (r *Run) fail(err error) {
	r.mu.Lock()
	if r.failed == nil {
		r.failed = err
	}
	r.mu.Unlock()
	// Emit's error (stdout gone) or the expression's: nothing more is wanted.
	r.cancel()
}

// Write sends JSON values (whole ones, any number) to the evaluator.
func (r *Run) Write(p []byte) (int, error) {
	if _, err := r.stdin.Write(p); err != nil {
		// The evaluator ended (its error, a bound, or Emit failed): say why.
		if cerr := r.Close(); cerr != nil {
			return 0, cerr
		}
		return 0, err
	}
	return len(p), nil
}

// Close ends the input, waits for the last results and says how the evaluation ended.
func (r *Run) Close() error {
	r.once.Do(func() { r.result = r.close() })
	return r.result
}

func (r *Run) close() error {
	_ = r.stdin.Close()
	<-r.done
	werr := r.cmd.Wait()
	defer r.cancel()
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	var jerr *Error
	switch {
	case failed != nil && !errors.As(failed, &jerr):
		return failed // Emit's own (writing the output)
	case r.parent.Err() != nil:
		return r.parent.Err()
	case errors.Is(r.ctx.Err(), context.DeadlineExceeded):
		return &Error{Bound: "--jq-timeout", Msg: fmt.Sprintf(
			"the expression ran for longer than --jq-timeout %s and was stopped: raise it with --jq-timeout %s if it needs the time",
			r.lim.Timeout, 4*r.lim.Timeout)}
	case failed != nil:
		return failed
	}
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		if exit.ExitCode() == exitMemory || strings.Contains(r.stderr.String(), "out of memory") {
			return &Error{Bound: "--max-jq-bytes", Msg: fmt.Sprintf(
				"the expression needed more than the %s cap on its memory (--max-jq-bytes) and was stopped: raise the cap with --max-jq-bytes %s if the output is that large",
				bytesize.Format(r.lim.MaxBytes), bytesize.Format(4*r.lim.MaxBytes))}
		}
		first, _, _ := strings.Cut(strings.TrimSpace(r.stderr.String()), "\n")
		return &Error{Msg: fmt.Sprintf("the evaluator failed (%v): %s", werr, first)}
	}
	return werr
}

// capped is a writer keeping the first left bytes written to it.
type capped struct {
	buf  *bytes.Buffer
	left int
}

func (c *capped) Write(p []byte) (int, error) {
	n := min(len(p), c.left)
	c.buf.Write(p[:n])
	c.left -= n
	return len(p), nil
}
