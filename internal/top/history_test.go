package top

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/outboxctl/outboxctl/internal/history"
)

// fixedHistory answers every read with h and counts the reads (the queries).
type fixedHistory struct {
	mu sync.Mutex
	h  history.History
	n  int64
}

func (f *fixedHistory) Read(context.Context) history.History {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return f.h
}

func (f *fixedHistory) Queries() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *fixedHistory) reads() int64 { return f.Queries() }

// startWith is start with opt's history readers and a clock the test moves.
func startWith(t *testing.T, src *memSource, opt Options, w, h int) (*Model, func(time.Duration)) {
	t.Helper()
	clock := now
	opt.Interval, opt.Now = time.Millisecond, func() time.Time { return clock }
	m := New(context.Background(), src, opt)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	out := make(chan tea.Msg, 64)
	src.out = out
	m.send = func(msg tea.Msg) { out <- msg }
	drive(t, m, m.Init())
	tick := func(after time.Duration) {
		clock = clock.Add(after)
		_, cmd := m.Update(tickMsg(clock))
		drive(t, m, cmd)
	}
	return m, tick
}

func paneLines(t *testing.T, m *Model, key string) []string {
	t.Helper()
	press(t, m, key)
	return strings.Split(frame(t, m), "\n")
}

// TestHistorySparklines: with a prometheus-url (a Historian) the shards pane shows the
// depth's and the oldest age's sparklines over the window with their latest values, and
// the mailboxes pane the mailboxes' series; the history is read at start and then at most
// once a minute (not at every listing's tick), and the footer counts its queries.
func TestHistorySparklines(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	fh := &fixedHistory{h: history.History{Window: 3 * time.Hour, At: now, Series: map[string][]float64{
		history.Depth:         {0, 2000, 4000, 6000, 8000, 10000, 12345},
		history.Oldest:        {nan, 60, 600, 1800, 3600, 3720, 3720},
		history.MailboxDepth:  {5, 5, 5},
		history.MailboxOldest: {0, 0, 0},
	}}}
	src := &memSource{snaps: []Snapshot{incident()}}
	m, tick := startWith(t, src, Options{Context: "us", History: map[string]Historian{"us": fh}}, 120, 24)
	lines := paneLines(t, m, "2")
	if lines[1] != "depth 3h ▁▂▃▄▆▇█ 12,345  oldest  ▁▂▄███ 1h2m" {
		t.Errorf("shards pane's history line %q\n%s", lines[1], strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[2], "3 shard(s) in backoff") {
		t.Errorf("the listing's line moved: %q", lines[2])
	}
	if f := lines[len(lines)-1]; !strings.Contains(f, "Prometheus queries/min") {
		t.Errorf("footer without the Prometheus cost: %q", f)
	}
	lines = paneLines(t, m, "6")
	if lines[1] != "depth 3h ███ 5  oldest ▁▁▁ 0s" {
		t.Errorf("mailboxes pane's history line %q\n%s", lines[1], strings.Join(lines, "\n"))
	}
	// Ticks every 15 s: the listing each time, the history once a minute.
	for range 3 {
		tick(15 * time.Second)
	}
	if n := fh.reads(); n != 1 {
		t.Errorf("%d history reads within the first minute, want 1 (at start)", n)
	}
	tick(15 * time.Second)
	if n := fh.reads(); n != 2 {
		t.Errorf("%d history reads after a minute, want 2", n)
	}
	m.opt.ASCII = true
	if lines = paneLines(t, m, "2"); lines[1] != "depth 3h _.-:+*# 12,345  oldest  _.:### 1h2m" {
		t.Errorf("ASCII history line %q", lines[1])
	}
}

// TestNoHistoryWithoutPrometheus: without a Historian there is no history line at all,
// nor a Prometheus cost in the footer.
func TestNoHistoryWithoutPrometheus(t *testing.T) {
	t.Parallel()
	m, _ := startWith(t, &memSource{snaps: []Snapshot{incident()}}, Options{Context: "us"}, 120, 24)
	for _, key := range []string{"2", "6"} {
		f := strings.Join(paneLines(t, m, key), "\n")
		if strings.Contains(f, "depth 3h") || strings.Contains(f, "history") || strings.Contains(f, "Prometheus") {
			t.Errorf("pane %s draws history without a prometheus-url:\n%s", key, f)
		}
	}
}

// TestHistoryErrorIsOneLine: a Prometheus that failed is one line in the pane, its
// credentials redacted, and the listing stays; a cell's context (no mailbox series) draws
// nothing on the mailboxes pane; with several contexts each line names its context.
func TestHistoryErrorIsOneLine(t *testing.T) {
	t.Parallel()
	bad := &fixedHistory{h: history.History{Window: time.Hour, Err: errors.New("prometheus: Get \"http://ops:hunter2@prom:9090/\": connection\nrefused")}}
	cell := &fixedHistory{h: history.History{Window: time.Hour, Series: map[string][]float64{history.Depth: {7}, history.Oldest: {0}}}}
	m := NewContexts(context.Background(), []Context{{Name: "a", Source: &memSource{snaps: []Snapshot{incident()}}}, {Name: "b", Source: &memSource{snaps: []Snapshot{incident()}}}},
		Options{Interval: time.Millisecond, Now: func() time.Time { return now }, History: map[string]Historian{"a": bad, "b": cell}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	drive(t, m, m.Init())
	lines := paneLines(t, m, "2")
	if lines[1] != "a: history: prometheus: Get \"http://xxxxx@prom:9090/\": connection refused" || lines[2] != "b: depth 1h █ 7  oldest ▁ 0s" {
		t.Errorf("history lines:\n%s", strings.Join(lines, "\n"))
	}
	if f := strings.Join(paneLines(t, m, "6"), "\n"); strings.Contains(f, "b: ") || !strings.Contains(f, "a: history: prometheus") {
		t.Errorf("mailboxes pane:\n%s", f)
	}
}
