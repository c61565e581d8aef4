package top

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/render"
)

// bodyHeight is the lines between the title line and the two lines below.
func (m *Model) bodyHeight() int { return max(1, m.height-3) }

// View draws the screen: a title line, the top view of the current pane, a status line
// and the footer. Every line fits the width; nothing depends on colour.
func (m *Model) View() string {
	v := m.top()
	body := m.body(v)
	h := m.bodyHeight()
	cursor := -1
	if c, ok := m.cursorLine(v); ok {
		cursor = c
	}
	if v.follow && cursor >= 0 {
		if cursor < v.off+1 {
			v.off = max(0, cursor-1)
		} else if cursor >= v.off+h {
			v.off = cursor - h + 1
		}
	}
	if v.kind == kindExec && v.follow {
		// A command's view follows its output: the question it asks is its last line.
		v.off = len(body)
	}
	v.off = max(0, min(v.off, len(body)-h))
	lines := []string{m.titleLine(v)}
	for i := v.off; i < v.off+h; i++ {
		if i < len(body) {
			lines = append(lines, body[i])
		} else {
			lines = append(lines, "")
		}
	}
	lines = append(lines, m.statusLine(), m.footer())
	for i, l := range lines {
		lines[i] = render.ScreenLine(l, m.width)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) titleLine(v *view) string {
	names := make([]string, len(panes))
	for i, p := range panes {
		names[i] = p.name
	}
	names[m.pane] = "[" + names[m.pane] + "]"
	title := "outboxctl top"
	if m.opt.Context != "" {
		title += " · " + m.opt.Context
	}
	if m.multi() {
		names := make([]string, len(m.pollers))
		for i, p := range m.pollers {
			names[i] = p.name
		}
		title += " · " + strings.Join(names, ",")
	}
	if all := strings.Join(names, " "); len(all) <= m.width/2 {
		title += " · " + all
	} else {
		// A narrow screen names the pane shown and its number (1-6 and tab go to the others).
		title += fmt.Sprintf(" · [%s] %d/%d", panes[m.pane].name, m.pane+1, len(panes))
	}
	if len(m.stacks[m.pane]) > 1 {
		title += " › " + v.title
	}
	if v.sortCol != "" {
		dir := "↑"
		if v.desc {
			dir = "↓"
		}
		title += " · sort " + v.sortCol + dir
	}
	if f := m.filter.String(); f != "" {
		title += " · /" + f
	}
	return render.Escape(title)
}

func (m *Model) statusLine() string {
	switch {
	case m.editing && m.status != "":
		return "/" + render.Escape(m.input) + "█  " + render.Escape(m.status)
	case m.editing:
		return "/" + render.Escape(m.input) + "█  (at-cap scope:NAME category:NAME; enter applies, esc cancels)"
	case m.status != "":
		return render.Escape(m.status)
	case m.pollErr != nil:
		return render.Escape("last refresh failed: " + m.pollErr.Error())
	}
	return ""
}

// footer says how old the data is, which tier it is, and what the poller costs.
func (m *Model) footer() string {
	now := m.opt.Now()
	var parts []string
	switch {
	case !m.have:
		parts = append(parts, "reading…")
	case m.have:
		parts = append(parts, "data "+render.Duration(now.Sub(m.snap.At).Truncate(time.Second))+" old")
		if m.findingsPending() {
			parts = append(parts, "findings reading…")
		} else if !m.snap.FindingsAt.IsZero() && !m.snap.FindingsAt.Equal(m.snap.At) {
			parts = append(parts, "findings "+render.Duration(now.Sub(m.snap.FindingsAt).Truncate(time.Second))+" old")
		}
	}
	if !m.fullAt.IsZero() {
		parts = append(parts, "all checks "+render.Duration(now.Sub(m.fullAt).Truncate(time.Second))+" ago")
	}
	parts = append(parts, m.rate())
	if q := m.historyRate(); q != "" {
		parts = append(parts, q)
	}
	parts = append(parts, "every "+render.Duration(m.opt.Interval))
	if m.paused {
		parts = append(parts, "PAUSED (p)")
	}
	return strings.Join(append(parts, "? keys · q quit"), " · ")
}

// rate is the statements the source sent per minute: from the last sample a minute or more
// old (or the first) to now, so a paused top's rate falls.
func (m *Model) rate() string {
	now := m.opt.Now()
	first, last := m.samples[0], m.samples[len(m.samples)-1]
	for _, s := range m.samples {
		if now.Sub(s.at) < time.Minute {
			break
		}
		first = s
	}
	span := now.Sub(first.at)
	if span < time.Second {
		return fmt.Sprintf("%d statements", last.n)
	}
	// Under a minute open, the statements sent so far (a first poll's would read as a rate
	// many times the steady one).
	return fmt.Sprintf("%.0f statements/min", float64(last.n-first.n)/max(span, time.Minute).Minutes())
}

// cursorLine is the body line of v's cursor, when v has a list with rows.
func (m *Model) cursorLine(v *view) (int, bool) {
	_, _, keys := m.list(v)
	if len(keys) == 0 {
		return 0, false
	}
	return len(m.head(v)) + 1 + m.place(v, keys), true
}

// head are the lines above a view's list (its text, for a view without one).
func (m *Model) head(v *view) []string {
	w := m.width
	switch v.kind {
	case kindFindings:
		if m.findingsPending() {
			return append(m.contextLines(), m.pendingLines()...)
		}
		fs := shown(m.snap.Findings)
		n := map[string]bool{}
		for _, f := range fs {
			n[causeOf(f)] = true
		}
		if len(fs) == 0 {
			return append(m.contextLines(), fmt.Sprintf("no findings: %d check results, all ok", len(m.snap.Findings)))
		}
		return append(m.contextLines(), fmt.Sprintf("%d finding(s) of %d cause(s); enter shows one", len(fs), len(n)))
	case kindShards:
		if m.snap.Shards == nil {
			return []string{"reading the shards…"}
		}
		return append(m.historyLines(history.Depth, history.Oldest, false), fmt.Sprintf("%d shard(s) in backoff (shards --stuck); enter inspects one", len(m.snap.Shards.Rows)))
	case kindFinding:
		f, ok := m.finding(v.finding)
		if !ok {
			return []string{"this finding is gone from the last refresh (resolved, or below its threshold)"}
		}
		lines := findingLines(f, w)
		if t, _, _ := m.list(v); t == nil || len(t.Rows) == 0 {
			lines = append(lines, "", "no shard of the listing is this finding's")
		} else if _, more := namedShards(f); more > 0 {
			lines = append(lines, "", fmt.Sprintf("its shards that doctor names, %d more left out (enter inspects one; 2: every shard):", more))
		} else {
			lines = append(lines, "", "its shards (enter inspects one):")
		}
		return lines
	case kindShard:
		return m.loadedHead(v, func(s render.Section) bool { return s.Name != "messages" })
	case kindMessage:
		return m.messageText(v)
	case kindExec, kindPane:
		if v.kind == kindPane && v.title == "mailboxes" {
			return append(m.historyLines(history.MailboxDepth, history.MailboxOldest, true), m.execText(v)...)
		}
		return m.execText(v)
	case kindHelp:
		return v.text
	}
	return nil
}

// pendingLines are the findings pane before its first findings: that they are being read,
// for how long, and the listing meanwhile (how old it is), drawn as the shards pane draws
// it but not selectable (pane 2 moves among them).
func (m *Model) pendingLines() []string {
	now := m.opt.Now()
	lines := []string{"reading doctor's findings… (for " + render.Duration(now.Sub(m.started).Truncate(time.Second)) + ")"}
	t := m.snap.Shards
	if !m.have && m.pollErr != nil && !m.multi() {
		// Nothing read yet, and the last try failed (the status line says why): the poller
		// tries again every --interval.
		return append(lines, "nothing read yet: the last try failed (below); tried again every "+render.Duration(m.opt.Interval))
	}
	if !m.have || t == nil {
		return append(lines, "reading the shards…")
	}
	lines = append(lines, fmt.Sprintf("meanwhile %d shard(s) in backoff, read %s ago (2: the shards pane)", len(t.Rows), render.Duration(now.Sub(m.snap.At).Truncate(time.Second))))
	if len(t.Rows) == 0 {
		return lines
	}
	header, rows := render.ScreenTable(t, m.width-2, now)
	lines = append(lines, "  "+header)
	for _, r := range rows {
		lines = append(lines, "  "+r)
	}
	return lines
}

// execText is a command's view: the command, the context's refusal, what it printed so far,
// the answer being typed, and its end.
func (m *Model) execText(v *view) []string {
	if v.parts != nil {
		return m.partsText(v)
	}
	var lines []string
	if v.kind == kindPane {
		lines = append(lines, "$ "+v.command)
	} else {
		lines = append(lines, "$ "+v.command, "")
	}
	if v.permits != nil {
		lines = append(lines, "This context refuses it: "+v.permits.Error(), "")
	}
	if len(v.note) > 0 {
		lines = append(append(lines, v.note...), "")
	}
	lines = append(lines, v.text...)
	switch {
	case v.exec == nil:
		lines = append(lines, "(not read yet: r reads it)")
	case !v.done && !v.reads && !v.answered:
		lines = append(lines, "", "answer: "+v.input+"█   (type what it asks, enter sends; esc answers no; v: its SQL)")
	case !v.done:
		lines = append(lines, "(running…)")
	case v.kind == kindPane:
		lines = append(lines, "", fmt.Sprintf("(read %s ago, exit %d; r reads it again)", render.Duration(m.opt.Now().Sub(v.started).Truncate(time.Second)), v.code))
	case v.reads:
		lines = append(lines, "", fmt.Sprintf("(exit %d; esc goes back)", v.code))
	default:
		lines = append(lines, "", fmt.Sprintf("(exit %d; esc goes back: the findings are read again)", v.code))
	}
	var out []string
	for _, l := range lines {
		out = append(out, render.ScreenText(l, m.width)...)
	}
	return out
}

// partsText is a pane over several contexts: each context's run of its command, one after
// another in the contexts' order, under a heading line naming the context, each with its
// own command line, output and status (running, or its exit). A context whose command
// failed shows its error (the command's own Error line, redacted as the CLI prints it) and
// exit under its heading; the others are drawn as usual.
func (m *Model) partsText(v *view) []string {
	var lines []string
	for i, p := range v.parts {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, m.contextHeading(p.context))
		lines = append(lines, m.execText(p)...)
	}
	return lines
}

// contextHeading is the line above a context's part of a pane (ASCII dashes on a terminal
// without Unicode, as the sparklines are).
func (m *Model) contextHeading(name string) string {
	rule := "──"
	if m.opt.ASCII {
		rule = "--"
	}
	return rule + " context " + render.Escape(name) + " " + rule
}

// loadedHead is a loaded document's sections that keep says, as lines.
func (m *Model) loadedHead(v *view, keep func(render.Section) bool) []string {
	switch {
	case v.loading:
		return []string{"reading…"}
	case v.err != nil:
		return render.ScreenText(v.err.Error(), m.width)
	}
	var doc render.Doc
	for _, s := range v.doc {
		if keep(s) {
			doc = append(doc, s)
		}
	}
	lines := render.ScreenDoc(doc, m.width, m.opt.Now())
	if i := slices.IndexFunc(v.doc, func(s render.Section) bool { return s.Name == "messages" }); i >= 0 {
		lines = append(lines, "", render.Escape(v.doc[i].Title)+" (enter shows one's payload)")
	}
	return lines
}

// messageText is a message's card (its payload left out) and then its payload, redacted,
// pretty-printed and wrapped.
func (m *Model) messageText(v *view) []string {
	if v.loading || v.err != nil || len(v.doc) == 0 {
		return m.loadedHead(v, func(render.Section) bool { return true })
	}
	card := v.doc[0]
	var payload any
	var rest []render.Field
	for _, f := range card.Card {
		if f.Key == "payload" {
			payload = f.Value
			continue
		}
		rest = append(rest, f)
	}
	card.Card = rest
	lines := render.ScreenDoc(render.Doc{card}, m.width, m.opt.Now())
	lines = append(lines, "", "payload (secrets redacted):")
	return append(lines, render.ScreenText(payloadLines(payload), m.width)...)
}

// body is the view's lines: its head, then its list's header and rows (the cursor's
// marked "> ": no colour needed), then a finding's evidence.
func (m *Model) body(v *view) []string {
	lines := m.head(v)
	t, order, keys := m.list(v)
	if t != nil && len(t.Rows) > 0 {
		c := m.place(v, keys)
		sortedT := &render.Table{Columns: t.Columns, Labels: t.Labels, MachineOnly: t.MachineOnly, HumanOnly: t.HumanOnly, Priority: t.Priority}
		for _, i := range order {
			sortedT.Rows = append(sortedT.Rows, t.Rows[i])
		}
		header, rows := render.ScreenTable(sortedT, m.width-2, m.opt.Now())
		lines = append(lines, "  "+header)
		for i, r := range rows {
			mark := "  "
			if i == c {
				mark = "> "
			}
			lines = append(lines, mark+r)
		}
	}
	if v.kind == kindFinding {
		if f, ok := m.finding(v.finding); ok {
			lines = append(lines, evidenceLines(f, m.width)...)
		}
	}
	return lines
}

// Run shows top on in and out until q (or ctx ends).
func Run(ctx context.Context, cs []Context, opt Options, in io.Reader, out io.Writer) error {
	m := NewContexts(ctx, cs, opt)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	m.send = p.Send
	if opt.Width > 0 && opt.Height > 0 {
		// The renderer erases what a shorter line leaves only when it knows the width.
		go p.Send(tea.WindowSizeMsg{Width: opt.Width, Height: opt.Height})
	}
	_, err := p.Run()
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}

// Frame is the first frame top draws at width × height: one poll, then the screen (top
// --once, and the tests); and the contexts that could not be read (their lines are in the
// frame), for the exit code.
func Frame(ctx context.Context, cs []Context, opt Options, width, height int) (string, []Failed) {
	m := NewContexts(ctx, cs, opt)
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return frameOf(ctx, m)
}
