package live

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

// DefaultEvery is how often a progress line may redraw: several times a second, so it is
// never stale, and not so often that it costs the work anything.
const DefaultEvery = 200 * time.Millisecond

// Progress is a live line on a terminal's stderr for long work (drain, compact, restore,
// demo seed): "delivered 40/~47  85.1%  12.3/s  ETA 1s". On anything but a terminal it
// writes nothing at all. Add and Set are safe from any goroutine.
type Progress struct {
	out    io.Writer
	tty    bool
	now    func() time.Time
	label  string
	total  int64
	approx bool
	// expected, on a line of one long statement (NewElapsed), is how long it should take:
	// the line shows the time elapsed against it, there being no units to count.
	expected time.Duration
	elapsed  bool
	// Every is the least time between two redraws (DefaultEvery).
	Every time.Duration

	done  atomic.Int64
	mu    sync.Mutex
	start time.Time
	drawn time.Time // zero until the first draw
}

// NewProgress starts a progress line of total units (0: unknown; approx marks it "~").
func NewProgress(out io.Writer, tty bool, now func() time.Time, label string, total int64, approx bool) *Progress {
	return &Progress{out: out, tty: tty, now: now, label: label, total: total, approx: approx, Every: DefaultEvery, start: now()}
}

// NewElapsed starts a line for one long statement, which has no units to count: "depth:
// counting ~20000000 rows in one pass  2.1s of ~5s expected". expected 0 leaves it out.
func NewElapsed(out io.Writer, tty bool, now func() time.Time, label string, expected time.Duration) *Progress {
	p := NewProgress(out, tty, now, label, 0, false)
	p.expected, p.elapsed = expected, true
	return p
}

// Add counts n more units done and redraws if the line is due.
func (p *Progress) Add(n int64) {
	p.done.Add(n)
	p.Tick()
}

// Set says how many units are done and redraws if the line is due.
func (p *Progress) Set(n int64) {
	p.done.Store(n)
	p.Tick()
}

// Tick redraws the line if Every has passed since the last draw (the first call draws).
func (p *Progress) Tick() {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.drawn.IsZero() && now.Sub(p.drawn) < p.Every {
		return
	}
	p.drawn = now
	fmt.Fprint(p.out, "\r"+p.line(now)+clearEOL)
}

// Run redraws the line every Every until ctx ends or the returned stop is called, so the
// rate and ETA move even while the work waits on a commit.
func (p *Progress) Run(ctx context.Context) (stop func()) {
	if !p.tty {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(p.Every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.Tick()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Finish replaces the line with a summary ("delivered 47 in 3.8s (12.4/s)") on a terminal
// and returns the summary; on a pipe it writes nothing.
func (p *Progress) Finish() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := p.now().Sub(p.start)
	done := p.done.Load()
	s := fmt.Sprintf("%s %d in %s", p.label, done, render.Duration(elapsed))
	if p.elapsed {
		s = fmt.Sprintf("%s: done in %s", p.label, render.Duration(elapsed))
	}
	if r := rate(done, elapsed); r > 0 {
		s += fmt.Sprintf(" (%s/s)", formatRate(r))
	}
	if p.tty {
		fmt.Fprint(p.out, "\r"+s+clearEOL+"\n")
	}
	return s
}

// line is the progress line at now.
func (p *Progress) line(now time.Time) string {
	done := p.done.Load()
	elapsed := now.Sub(p.start)
	if p.elapsed {
		s := p.label + "  " + render.Duration(elapsed)
		if p.expected > 0 {
			s += " of ~" + render.Duration(p.expected) + " expected"
		}
		return s
	}
	s := p.label + " " + strconv.FormatInt(done, 10)
	if p.total > 0 {
		tilde := ""
		if p.approx {
			tilde = "~"
		}
		s += "/" + tilde + strconv.FormatInt(p.total, 10) + "  " + render.Percent(min(float64(done)/float64(p.total), 1))
	}
	r := rate(done, elapsed)
	s += "  " + formatRate(r) + "/s"
	if p.total > done && r > 0 {
		s += "  ETA " + render.Since(time.Duration(float64(p.total-done)/r*float64(time.Second)))
	}
	return s
}

func rate(done int64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(done) / elapsed.Seconds()
}

func formatRate(r float64) string {
	return strconv.FormatFloat(r, 'f', 1, 64)
}
