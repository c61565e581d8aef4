package top

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Historian reads a context's recent history from the Prometheus server its prometheus-url
// names (the exporter's series, over the window it was made with): nil without one, and
// top then draws no history line at all.
type Historian interface {
	Read(ctx context.Context) history.History
	// Queries is how many queries it has sent Prometheus (the footer's cost).
	Queries() int64
}

// HistoryEvery is how often a context's history is read again: at most once a minute,
// whatever --interval (a three-hour sparkline moves by one point every nine minutes).
const HistoryEvery = time.Minute

// historyMsg is poller i's history.
type historyMsg struct {
	i int
	h history.History
}

// readHistory reads the history of each context that has a Historian and whose last read
// is HistoryEvery old (none running), off the loop.
func (m *Model) readHistory() tea.Cmd {
	var cmds []tea.Cmd
	now := m.opt.Now()
	for i, p := range m.pollers {
		if p.historian == nil || p.histReading || !p.histAt.IsZero() && now.Sub(p.histAt) < HistoryEvery {
			continue
		}
		p.histReading, p.histAt = true, now
		hs, ctx := p.historian, m.ctx
		cmds = append(cmds, func() tea.Msg { return historyMsg{i: i, h: hs.Read(ctx)} })
	}
	return tea.Batch(cmds...)
}

// tookHistory keeps poller i's history (its error too: the pane says it in one line).
func (m *Model) tookHistory(msg historyMsg) {
	p := m.pollers[msg.i]
	p.histReading, p.hist, p.haveHist = false, msg.h, true
	p.hist.Err = redacted(p.hist.Err)
}

// historyLines are a pane's history lines, one a context with a Historian: the series
// depth and oldest as sparklines with their latest values, or why there are none.
func (m *Model) historyLines(depth, oldest string, mailbox bool) []string {
	var lines []string
	for _, p := range m.pollers {
		if p.historian == nil {
			continue
		}
		prefix := ""
		if m.multi() {
			prefix = p.name + ": "
		}
		h := p.hist
		_, hasDepth := h.Series[depth]
		switch {
		case !p.haveHist:
			lines = append(lines, prefix+"history: reading Prometheus…")
		case h.Err != nil:
			lines = append(lines, prefix+"history: "+oneLine(h.Err))
		case !hasDepth && mailbox:
			// A cell's exporter has no mailbox series: nothing to say on its mailboxes pane.
		case !hasDepth:
			lines = append(lines, prefix+"history: Prometheus has no outboxctl_outbox_rows series of this context (is its exporter scraped there?)")
		default:
			span := render.Since(h.Window)
			d, o := h.Series[depth], h.Series[oldest]
			lines = append(lines, fmt.Sprintf("%sdepth %s %s %s  oldest %s %s", prefix, span,
				render.Sparkline(d, m.opt.ASCII), latest(h, depth, func(v float64) string { return render.Count(int64(math.Round(v))) }),
				render.Sparkline(o, m.opt.ASCII), latest(h, oldest, func(v float64) string { return render.Since(time.Duration(v * float64(time.Second))) })))
		}
	}
	return lines
}

// latest is series name's last value as f writes it, "n/a" when the window's end had no
// sample (the exporter is not scraped now).
func latest(h history.History, name string, f func(float64) string) string {
	if v, ok := h.Latest(name); ok {
		return f(v)
	}
	return "n/a"
}

// historyQueries are the queries every context's Historian has sent.
func (m *Model) historyQueries() (int64, bool) {
	var n int64
	var any bool
	for _, p := range m.pollers {
		if p.historian != nil {
			n, any = n+p.historian.Queries(), true
		}
	}
	return n, any
}

// historyRate is the Prometheus queries a minute over the last minute, as rate counts the
// statements ("" without a Historian).
func (m *Model) historyRate() string {
	last, ok := m.historyQueries()
	if !ok {
		return ""
	}
	now := m.opt.Now()
	first := m.samples[0]
	for _, s := range m.samples {
		if now.Sub(s.at) < time.Minute {
			break
		}
		first = s
	}
	span := max(now.Sub(first.at), time.Minute)
	return strings.TrimSpace(fmt.Sprintf("%.0f Prometheus queries/min", float64(last-first.q)/span.Minutes()))
}
