package live

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressThrottlesRedraws: Add redraws at most once per Every, the line carries
// done/total, percentage, rate and ETA, and Finish leaves a summary line.
func TestProgressThrottlesRedraws(t *testing.T) {
	t.Parallel()
	clock := newClock()
	var out bytes.Buffer
	p := NewProgress(&out, true, clock.Now, "delivered", 47, true)
	advance := func(d time.Duration) { clock.mu.Lock(); clock.now = clock.now.Add(d); clock.mu.Unlock() }
	advance(time.Second)
	p.Add(10) // draws: the first draw is never held back
	advance(50 * time.Millisecond)
	p.Add(2) // held back: 50ms after the last draw
	advance(100 * time.Millisecond)
	p.Add(2) // held back: 150ms
	advance(100 * time.Millisecond)
	p.Tick() // 250ms: draws, with the count the Adds left
	advance(3 * time.Second)
	p.Set(47)
	want := "\rdelivered 10/~47  21.3%  10.0/s  ETA 3s\x1b[K" +
		"\rdelivered 14/~47  29.8%  11.2/s  ETA 2s\x1b[K" +
		"\rdelivered 47/~47  100.0%  11.1/s\x1b[K"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	if s := p.Finish(); s != "delivered 47 in 4s (11.1/s)" || out.String() != "\r"+s+"\x1b[K\n" {
		t.Errorf("Finish = %q, wrote %q", s, out.String())
	}
}

// TestProgressSilentOnAPipe: nothing of the line or the summary reaches a pipe.
func TestProgressSilentOnAPipe(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := NewProgress(&out, false, newClock().Now, "seeded", 0, false)
	p.Add(5)
	p.Tick()
	stop := p.Run(t.Context())
	stop()
	if s := p.Finish(); s != "seeded 5 in 0s" || out.Len() != 0 {
		t.Errorf("Finish = %q, wrote %q", s, out.String())
	}
}

// TestProgressUnknownTotal: with no total, the line shows the count and rate only.
func TestProgressUnknownTotal(t *testing.T) {
	t.Parallel()
	clock := newClock()
	var out bytes.Buffer
	p := NewProgress(&out, true, clock.Now, "archived", 0, false)
	clock.now = clock.now.Add(2 * time.Second)
	p.Add(9)
	if got := out.String(); got != "\rarchived 9  4.5/s\x1b[K" {
		t.Errorf("got %q", got)
	}
}

// TestProgressRunRedrawsWithoutWork: the ticker redraws while no unit completes, so the
// rate and ETA do not go stale between commits (real clock, a short Every).
func TestProgressRunRedrawsWithoutWork(t *testing.T) {
	t.Parallel()
	var out syncBuf
	p := NewProgress(&out, true, time.Now, "drained", 100, false)
	p.Every = 5 * time.Millisecond
	stop := p.Run(t.Context())
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\r") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	if n := strings.Count(out.String(), "\r"); n < 3 {
		t.Errorf("%d redraws in 5s with Every 5ms", n)
	}
}

// TestElapsedLine: a line for one long statement shows the time elapsed against the time
// expected, and its summary the time it took; on a pipe nothing.
func TestElapsedLine(t *testing.T) {
	t.Parallel()
	clock := newClock()
	var out bytes.Buffer
	p := NewElapsed(&out, true, clock.Now, "depth: counting ~20000000 rows in one pass", 5*time.Second)
	p.Tick()
	clock.now = clock.now.Add(2100 * time.Millisecond)
	p.Tick()
	clock.now = clock.now.Add(1400 * time.Millisecond)
	p.Finish()
	want := "\rdepth: counting ~20000000 rows in one pass  0s of ~5s expected\x1b[K" +
		"\rdepth: counting ~20000000 rows in one pass  2s of ~5s expected\x1b[K" +
		"\rdepth: counting ~20000000 rows in one pass: done in 4s\x1b[K\n"
	if got := out.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var pipe bytes.Buffer
	q := NewElapsed(&pipe, false, clock.Now, "depth", time.Second)
	q.Tick()
	q.Finish()
	if pipe.Len() != 0 {
		t.Errorf("on a pipe: %q", pipe.String())
	}
}
