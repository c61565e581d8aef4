package top

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Context is one context top reads (--context a,b, --all-contexts): its name and its
// source, one poller on one connection of its own.
type Context struct {
	Name   string
	Source Source
}

// poller is one context's polls: its last good data, its cadence and its queue. A context
// that cannot be reached fails its own polls and no other's.
type poller struct {
	name string
	src  Source

	snap    Snapshot // the last good data
	have    bool
	err     error // the last poll's failure
	polling bool
	// queued is a poll asked for while one ran (a new filter, r), of queuedTier.
	queued     bool
	queuedTier Tier
	fullAt     time.Time // when the last full (expensive) poll ran
	// findingsAt is when the findings were last read, and findingsOf the listing's shards
	// then: a listing whose shards differ asks for the findings again.
	findingsAt time.Time
	findingsOf string
	// The history's reader (nil: none), its last answer, whether one is being read, and
	// when the last read started.
	historian   Historian
	hist        history.History
	haveHist    bool
	histReading bool
	histAt      time.Time
}

// snapshotMsg is poller i's answer.
type snapshotMsg struct {
	i int
	s Snapshot
}

// multi says top reads several contexts: the panes then have a context column.
func (m *Model) multi() bool { return len(m.pollers) > 1 }

// poll reads a snapshot of tier from every context, each off the program's loop (a key is
// never blocked by a refresh) and on its own connection.
func (m *Model) poll(tier Tier) tea.Cmd {
	cmds := make([]tea.Cmd, len(m.pollers))
	for i := range m.pollers {
		cmds[i] = m.pollOne(i, tier)
	}
	return tea.Batch(cmds...)
}

// pollOne reads poller i's snapshot of tier; one poll at a time a context: another asked
// for meanwhile is queued (the higher tier).
func (m *Model) pollOne(i int, tier Tier) tea.Cmd {
	p := m.pollers[i]
	if p.polling {
		p.queued, p.queuedTier = true, max(p.queuedTier, tier)
		return nil
	}
	p.polling = true
	f, src, ctx := m.filter, p.src, m.ctx
	return func() tea.Msg { return snapshotMsg{i: i, s: src.Poll(ctx, f, tier)} }
}

// tickPolls are what a tick reads: each context's tickTier.
func (m *Model) tickPolls() tea.Cmd {
	cmds := make([]tea.Cmd, len(m.pollers))
	for i, p := range m.pollers {
		cmds[i] = m.pollOne(i, m.tickTier(p))
	}
	return tea.Batch(cmds...)
}

// tickTier is what a tick reads of p: the listing, and the findings when they are
// FindingsEvery old, or when the listing's shards changed since they were read and they are
// FindingsMin old.
func (m *Model) tickTier(p *poller) Tier {
	age := m.opt.Now().Sub(p.findingsAt)
	if p.findingsAt.IsZero() || age >= m.opt.FindingsEvery || age >= FindingsMin && listingKeys(p.snap.Shards) != p.findingsOf {
		return TierFindings
	}
	return TierShards
}

// listingKeys are the shards of a listing, in key order, as one string.
func listingKeys(t *render.Table) string {
	if t == nil {
		return ""
	}
	keys := make([]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		keys = append(keys, rowKey(t, r))
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// taken keeps poller i's answer: the data when it read any, the error either way; merges
// the contexts' data for the panes; and starts the poll queued meanwhile.
func (m *Model) taken(i int, s Snapshot) tea.Cmd {
	p := m.pollers[i]
	p.polling = false
	s.Err = redacted(s.Err)
	p.err = s.Err
	if s.Findings != nil || s.Shards != nil || s.Err == nil {
		if s.Shards == nil && p.have {
			s.Shards = p.snap.Shards
		}
		read := s.Findings != nil || s.Tier >= TierFindings && s.Err == nil
		if !read {
			s.Findings, s.FindingsAt = p.snap.Findings, p.snap.FindingsAt
		} else {
			s.FindingsAt = s.At
		}
		p.snap, p.have = s, true
		if read {
			p.findingsAt, p.findingsOf = s.At, listingKeys(s.Shards)
		}
		if read && s.Tier == TierFull {
			p.fullAt = s.At
		}
	}
	m.merge()
	m.samples = append(m.samples, m.sample())
	if len(m.samples) > 100 {
		m.samples = m.samples[len(m.samples)-100:]
	}
	if p.queued {
		tier := p.queuedTier
		p.queued, p.queuedTier = false, TierShards
		return m.pollOne(i, tier)
	}
	return nil
}

// statements are what every context's poller has sent.
func (m *Model) statements() int64 {
	var n int64
	for _, p := range m.pollers {
		n += p.src.Statements()
	}
	return n
}

// merge is the panes' data: one context's as it read it; several contexts' with the
// context named (a column of the shards, each finding's evidence context), each context's
// rows in its own order, the contexts in the order given. The data's age is the oldest
// context's.
func (m *Model) merge() {
	if !m.multi() {
		p := m.pollers[0]
		m.snap, m.have, m.pollErr, m.fullAt = p.snap, p.have, p.err, p.fullAt
		return
	}
	var snap Snapshot
	var tables []*render.Table
	var names []string
	var errs []error
	m.have, m.fullAt = false, time.Time{}
	for _, p := range m.pollers {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", p.name, p.err))
		}
		if !p.have {
			continue
		}
		m.have = true
		if snap.At.IsZero() || p.snap.At.Before(snap.At) {
			snap.At = p.snap.At
		}
		if !p.findingsAt.IsZero() && (snap.FindingsAt.IsZero() || p.snap.FindingsAt.Before(snap.FindingsAt)) {
			snap.FindingsAt = p.snap.FindingsAt
		}
		if p.fullAt.After(m.fullAt) {
			m.fullAt = p.fullAt
		}
		for _, f := range p.snap.Findings {
			f.Evidence = append(doctor.Evidence{{Key: "context", Value: p.name}}, f.Evidence...)
			snap.Findings = append(snap.Findings, f)
		}
		if p.snap.Shards != nil {
			tables, names = append(tables, p.snap.Shards), append(names, p.name)
		}
	}
	if len(tables) > 0 {
		snap.Shards = mergeTables(tables, names)
	}
	m.snap, m.pollErr = snap, errors.Join(errs...)
}

// mergeTables is the contexts' listings as one table: a context column first, then every
// column of any of them (a cell's and the control silo's listings differ), each context's
// rows in its own order.
func mergeTables(ts []*render.Table, names []string) *render.Table {
	out := &render.Table{Columns: []string{"context"}, Labels: map[string]string{}, MachineOnly: map[string]bool{}, HumanOnly: map[string]bool{}, Priority: map[string]int{}}
	for _, t := range ts {
		for _, c := range t.Columns {
			if !slices.Contains(out.Columns, c) {
				out.Columns = append(out.Columns, c)
			}
		}
		for k, v := range t.Labels {
			out.Labels[k] = v
		}
		for k, v := range t.MachineOnly {
			out.MachineOnly[k] = v
		}
		for k, v := range t.HumanOnly {
			out.HumanOnly[k] = v
		}
		for k, v := range t.Priority {
			out.Priority[k] = v
		}
	}
	for i, t := range ts {
		for _, r := range t.Rows {
			row := make([]any, len(out.Columns))
			row[0] = names[i]
			for j, c := range t.Columns {
				row[slices.Index(out.Columns, c)] = r[j]
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// findingContext is the context a finding came from ("" with one context).
func findingContext(f doctor.Finding) string {
	if v, ok := evidence(f, "context"); ok {
		return fmt.Sprint(v)
	}
	return ""
}

// pollerOf is the index of context name's poller (the first context's for "", as source).
func (m *Model) pollerOf(name string) int {
	for i, p := range m.pollers {
		if p.name == name {
			return i
		}
	}
	return 0
}

// source is the source of context name (the first context's for ""; a pane of a read
// command runs on it).
func (m *Model) source(name string) Source { return m.pollers[m.pollerOf(name)].src }

// contextLines are the findings pane's lines of the contexts that have no findings to show
// (several contexts only): one that cannot be reached, or whose last refresh failed, with
// its error; one whose findings are still being read.
func (m *Model) contextLines() []string {
	if !m.multi() {
		return nil
	}
	var lines []string
	for _, p := range m.pollers {
		switch {
		case p.err != nil && !p.have:
			lines = append(lines, "context "+p.name+": cannot read it: "+oneLine(p.err))
		case p.err != nil:
			lines = append(lines, "context "+p.name+": last refresh failed (its data kept): "+oneLine(p.err))
		case p.findingsAt.IsZero():
			lines = append(lines, "context "+p.name+": reading doctor's findings…")
		}
	}
	return lines
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// redacted is err as every other read shows a context's error (the fan-out's "context
// gone" line): its text through db.RedactDSN, so that a connection string's password in it
// reaches neither the findings pane nor the status line. It wraps err, so that what err
// means (a usage error, exit 2) is kept for top --once's exit. nil stays nil.
func redacted(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: db.RedactDSN(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Failed is a context top --once could not read, and why (its error redacted).
type Failed struct {
	Context string
	Err     error
}

// failed are the contexts whose last poll failed, in the order given.
func (m *Model) failed() []Failed {
	var out []Failed
	for _, p := range m.pollers {
		if p.err != nil {
			out = append(out, Failed{Context: p.name, Err: p.err})
		}
	}
	return out
}

// frameOf is the first frame of cs at width × height with the findings: every context read
// once at TierFindings, concurrently (top --once); and the contexts that could not be read.
func frameOf(ctx context.Context, m *Model) (string, []Failed) {
	answers := make(chan snapshotMsg, len(m.pollers))
	for i, p := range m.pollers {
		p.polling = true
		go func() { answers <- snapshotMsg{i: i, s: p.src.Poll(ctx, m.filter, TierFindings)} }()
	}
	for range m.pollers {
		msg := <-answers
		m.taken(msg.i, msg.s)
	}
	return m.View(), m.failed()
}
