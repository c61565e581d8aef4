package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // test clock

// fakeClock is a clock and a timer the test advances by hand: every After hands the
// watch a channel the test fires with next.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	ticks chan chan time.Time
}

func newClock() *fakeClock { return &fakeClock{now: t0, ticks: make(chan chan time.Time, 1)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.ticks <- ch
	return ch
}

// next waits for the watch to arm its timer, moves the clock by d and fires the timer.
func (c *fakeClock) next(d time.Duration) {
	ch := <-c.ticks
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	ch <- c.now
}

// syncBuf is a buffer the watch writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func counter() Frame {
	n := 0
	return func(_ context.Context, w io.Writer) error {
		n++
		if n == 2 {
			return errors.New("connection refused")
		}
		fmt.Fprintf(w, "frame %d\n", n)
		return nil
	}
}

// TestWatchPipeAppendsStampedFrames: without a terminal every frame is appended under the
// time it was taken; a failing frame shows its error and the watch goes on; cancelling
// the context (SIGINT) ends it with no error.
func TestWatchPipeAppendsStampedFrames(t *testing.T) {
	t.Parallel()
	clock := newClock()
	out := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch{Out: out, Interval: 2 * time.Second, Title: "outboxctl shards --stuck", Now: clock.Now, After: clock.After}
	done := make(chan error)
	go func() { done <- w.Run(ctx, counter()) }()
	clock.next(2 * time.Second)
	clock.next(2 * time.Second)
	<-clock.ticks // the third frame is drawn and the watch waits again
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	want := "--- 2026-11-30 12:00:00Z  every 2s  outboxctl shards --stuck\nframe 1\n" +
		"--- 2026-11-30 12:00:02Z  every 2s  outboxctl shards --stuck\nError: connection refused\n" +
		"--- 2026-11-30 12:00:04Z  every 2s  outboxctl shards --stuck\nframe 3\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestWatchTerminalRedrawsInPlaceAndQuitsOnQ: on a terminal the watch enters the alternate
// screen, redraws from the top with CR LF line ends, refreshes on r, and q ends it with no
// error and the main screen restored.
func TestWatchTerminalRedrawsInPlaceAndQuitsOnQ(t *testing.T) {
	t.Parallel()
	for _, quit := range []string{"q", "\x03"} {
		clock := newClock()
		out := &syncBuf{}
		keys, press := io.Pipe()
		w := &Watch{Out: out, TTY: true, Keys: keys, Interval: time.Second, Title: "outboxctl depth", Now: clock.Now, After: clock.After}
		done := make(chan error)
		go func() { done <- w.Run(context.Background(), counter()) }()
		<-clock.ticks // frame 1 drawn
		if _, err := press.Write([]byte("r")); err != nil {
			t.Fatal(err)
		}
		<-clock.ticks // frame 2 drawn at once, by r
		if _, err := press.Write([]byte("x" + quit)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("quit %q: Run = %v, want nil", quit, err)
		}
		header := "\x1b[HEvery 1s: outboxctl depth    taken 2026-11-30 12:00:00Z    q to quit, r to refresh\x1b[K\r\n\x1b[K\r\n"
		want := "\x1b[?1049h\x1b[?25l" +
			header + "frame 1\x1b[K\r\n\x1b[J" +
			header + "Error: connection refused\x1b[K\r\n\x1b[J" +
			"\x1b[?25h\x1b[?1049l"
		if got := out.String(); got != want {
			t.Errorf("quit %q: got\n%q\nwant\n%q", quit, got, want)
		}
		press.Close()
	}
}

func TestWatchRejectsZeroInterval(t *testing.T) {
	t.Parallel()
	w := &Watch{Out: io.Discard, Now: time.Now, After: time.After}
	if err := w.Run(context.Background(), counter()); err == nil || err.Error() != "watch interval must be positive" {
		t.Fatalf("Run = %v", err)
	}
}

func TestCRLF(t *testing.T) {
	t.Parallel()
	if got := crlf("a\nb\n"); got != "a\r\nb\r\n" {
		t.Errorf("%q", got)
	}
	if strings.Contains(crlf("x"), "\r") {
		t.Error("no newline, no CR")
	}
}
