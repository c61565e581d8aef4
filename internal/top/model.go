package top

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/render"
)

// kind is what a view shows.
type kind int

const (
	kindFindings kind = iota // the findings pane: every finding, grouped by cause
	kindShards               // the shards pane: the shards in backoff, filtered
	kindFinding              // one finding: its card, its shards, its evidence
	kindShard                // one shard: inspect shard's card, categories and messages
	kindMessage              // one message: its card and its payload
	kindExec                 // a command top runs: a repair's plan, confirmation and summary, or its SQL
	kindPane                 // a pane of a read command's output (kill switches, backfills, …)
	kindHelp                 // the keys
)

// pane is one of top's panes: its name in the title and, for the panes of a read command,
// that command's words (run through the CLI on each context: with several, once a context).
type pane struct {
	name string
	args []string
}

// panes are top's panes, in tab order: the findings and the shards read by the poller, the
// others by their commands when shown and on r.
var panes = []pane{ //nolint:gochecknoglobals // constant table
	{name: "findings"}, {name: "shards"},
	{name: "switches", args: []string{"killswitch", "list"}},
	{name: "backfills", args: []string{"backfill", "status"}},
	{name: "replicas", args: []string{"verify"}},
	{name: "mailboxes", args: []string{"mailboxes"}},
}

// view is one screen of a pane's stack: enter pushes one, esc pops it.
type view struct {
	kind  kind
	title string
	// finding is the key of the finding a kindFinding view shows (it is looked up again in
	// every snapshot, so its shards and evidence stay live).
	finding string
	shard   ShardRef // kindShard, kindMessage
	msgID   int64    // kindMessage
	// doc is what a shard or message view loaded; text a help's or a command's output so
	// far; err what failed.
	doc     render.Doc
	text    []string
	err     error
	loading bool
	// A command's view (kindExec, kindPane): the command line, the run (nil before the
	// first), whether it reads (a pane: nothing typed), what is typed for its stdin, the
	// context's refusal, and its exit status once done.
	command  string
	context  string // the context it runs on ("": the first)
	raw      string
	note     []string
	exec     *Exec
	reads    bool
	input    string
	answered bool
	permits  error
	done     bool
	code     int
	started  time.Time
	// The list's sort column ("": the pane's own order), the cursor's row and the key of
	// the row it is on (a refresh finds the row again by it).
	sortCol string
	desc    bool
	cursor  int
	key     string
	// off is the first line shown; follow keeps the cursor's row in sight (false after a
	// page key scrolled the text away from it).
	off    int
	follow bool
	// parts are a read command's pane over several contexts: one run of its command a
	// context (each a kindPane view with its context, its command line, its run and its
	// status), in the contexts' order; nil with one context, whose pane is its own run.
	parts []*view
}

// Options are top's settings.
type Options struct {
	// Interval is the cheap tier's period (TierShards).
	Interval time.Duration
	// FindingsEvery is the longest the findings go unread (TierFindings): they are read
	// sooner when the listing's shards change (at most once a FindingsMin), after an
	// action, and on r.
	FindingsEvery time.Duration
	// Context names the context (or database) in the title.
	Context string
	// Now is the clock (tests pin it).
	Now func() time.Time
	// Width and Height are the terminal's size when known (0: bubbletea asks the terminal),
	// sent first: an output that is not the terminal's file cannot be asked.
	Width, Height int
	// History are the readers of the contexts' recent history, by context name (a context
	// with a prometheus-url); ASCII draws its sparklines in ASCII (a terminal without
	// Unicode).
	History map[string]Historian
	ASCII   bool
}

// Model is top's state: bubbletea calls Update with each key, window size and poll
// answer, and View to draw.
type Model struct {
	ctx    context.Context //nolint:containedctx // the program's, for the source's reads
	src    Source
	opt    Options
	width  int
	height int

	// pollers are the contexts' polls, one a context (each context's source runs its
	// commands of the panes of read commands); snap, have, pollErr and fullAt are their data
	// merged (merge).
	pollers []*poller
	snap    Snapshot
	have    bool
	pollErr error
	fullAt  time.Time
	// started is when top started: until the first findings arrive, the findings pane says
	// how long it has been reading them.
	started time.Time
	paused  bool

	filter  Filter
	editing bool
	input   string
	status  string // one line: a filter's error, an action without its command

	pane   int // an index of panes
	stacks [][]*view

	// samples are the source's statement counts at each poll, for the rate.
	samples []sample
	// send delivers a running command's output to the loop (the program's Send).
	send func(tea.Msg)
}

type sample struct {
	at time.Time
	n  int64
	q  int64 // the Prometheus queries (history)
}

// sample is the statements and Prometheus queries sent so far.
func (m *Model) sample() sample {
	q, _ := m.historyQueries()
	return sample{m.opt.Now(), m.statements(), q}
}

// The default cadences: the exporter's (its cheap tier every 15 s, its expensive one every
// 5 min), so that an open top costs the database no more than the exporter does.
const (
	DefaultInterval      = 15 * time.Second
	DefaultFindingsEvery = 5 * time.Minute
	// FindingsMin is the shortest time between two reads of the findings that the listing's
	// changes ask for (r and an action read them at once).
	FindingsMin = time.Minute
)

// New is top's model over src, one context (opt.Context names it in the title).
func New(ctx context.Context, src Source, opt Options) *Model {
	return NewContexts(ctx, []Context{{Name: opt.Context, Source: src}}, opt)
}

// NewContexts is top's model over several contexts, each read by its own poller on its own
// source; with more than one, the findings and shards panes name each row's context, an
// action runs on its row's, and a pane of a read command runs it on each context. cs is
// not empty.
func NewContexts(ctx context.Context, cs []Context, opt Options) *Model {
	src := cs[0].Source
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	if opt.FindingsEvery <= 0 {
		opt.FindingsEvery = DefaultFindingsEvery
	}
	m := &Model{ctx: ctx, src: src, opt: opt, width: 80, height: 24}
	for _, c := range cs {
		m.pollers = append(m.pollers, &poller{name: c.Name, src: c.Source, historian: opt.History[c.Name]})
	}
	m.stacks = [][]*view{{{kind: kindFindings, title: "findings", follow: true}}, {{kind: kindShards, title: "shards in backoff", follow: true}}}
	for _, p := range panes[2:] {
		v := &view{kind: kindPane, title: p.name, command: src.Command(p.args...), reads: true, follow: true}
		if len(cs) > 1 {
			// Each context's own command line (its --context), run on its own source.
			v.command = ""
			for _, c := range cs {
				v.parts = append(v.parts, &view{kind: kindPane, title: p.name, context: c.Name, command: c.Source.Command(p.args...), reads: true})
			}
		}
		m.stacks = append(m.stacks, []*view{v})
	}
	m.started = opt.Now()
	m.samples = []sample{m.sample()}
	m.send = func(tea.Msg) {}
	return m
}

// The messages top's commands answer with.
type (
	tickMsg   time.Time
	loadedMsg struct {
		v   *view
		doc render.Doc
		err error
	}
)

// Init starts the first poll and the ticker. The first poll is the listing alone (a few
// statements, where doctor's checks take seconds on a big table): the first frame draws it
// as soon as it comes, and the findings' poll, queued behind it on the poller's one
// connection, fills the findings pane in when it ends.
func (m *Model) Init() tea.Cmd {
	cmd := m.poll(TierShards)
	for _, p := range m.pollers {
		p.queued, p.queuedTier = true, TierFindings
	}
	return tea.Batch(cmd, m.tick(), m.readHistory())
}

// findingsPending says no context's findings were read yet (the first ones are on their
// way).
func (m *Model) findingsPending() bool {
	for _, p := range m.pollers {
		if !p.findingsAt.IsZero() {
			return false
		}
	}
	return true
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opt.Interval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// top is the view on top of the current pane's stack.
func (m *Model) top() *view {
	s := m.stacks[m.pane]
	return s[len(s)-1]
}

func (m *Model) push(v *view) {
	v.follow = true
	m.stacks[m.pane] = append(m.stacks[m.pane], v)
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
	case tickMsg:
		if m.paused {
			return m, m.tick()
		}
		return m, tea.Batch(m.tick(), m.tickPolls(), m.readHistory())
	case historyMsg:
		m.tookHistory(msg)
	case snapshotMsg:
		return m, m.taken(msg.i, msg.s)
	case loadedMsg:
		msg.v.loading, msg.v.doc, msg.v.err = false, msg.doc, redacted(msg.err)
	case execOutMsg:
		if msg.v.exec == msg.e {
			msg.v.raw += msg.chunk
			msg.v.text = terminalText(msg.v.raw)
		}
	case execDoneMsg:
		return m, m.ended(msg)
	case tea.KeyMsg:
		if m.editing {
			return m, m.editKey(msg)
		}
		if v := m.top(); v.kind == kindExec && !v.reads && !v.done && msg.String() != "ctrl+c" {
			return m, m.answerKey(v, msg)
		}
		return m, m.key(msg)
	}
	return m, nil
}

// editKey is a key typed into the filter after /.
func (m *Model) editKey(k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEsc:
		m.editing, m.status = false, ""
	case tea.KeyEnter:
		f, err := ParseFilter(m.input)
		if err != nil {
			m.status = err.Error()
			return nil
		}
		m.editing, m.status, m.filter = false, "", f
		m.pane = 1
		return m.poll(TierShards)
	case tea.KeyBackspace:
		if r := []rune(m.input); len(r) > 0 {
			m.input = string(r[:len(r)-1])
		}
	case tea.KeySpace:
		m.input += " "
	case tea.KeyRunes:
		m.input += string(k.Runes)
	default:
	}
	return nil
}

// key is a key of the screen.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	v := m.top()
	switch s := k.String(); s {
	case "q", "ctrl+c":
		return tea.Quit
	case "?":
		if v.kind == kindHelp {
			m.pop()
		} else {
			m.push(&view{kind: kindHelp, title: "keys", text: helpLines()})
		}
	case "esc":
		m.pop()
	case "tab":
		return m.show((m.pane + 1) % len(panes))
	case "shift+tab":
		return m.show((m.pane + len(panes) - 1) % len(panes))
	case "1", "2", "3", "4", "5", "6":
		return m.show(int(s[0]-'1') % len(panes))
	case "v":
		return m.sql(v)
	case "/":
		m.editing, m.input, m.status = true, m.filter.String(), ""
	case "p":
		m.paused = !m.paused
		if !m.paused {
			return m.tickPolls()
		}
	case "r":
		return tea.Batch(m.poll(TierFull), m.reload(v))
	case "enter":
		return m.enter(v)
	case "o", "O":
		m.cycleSort(v, s == "o")
	case "i":
		v.desc = !v.desc
	case "up", "k":
		m.move(v, -1)
	case "down", "j":
		m.move(v, 1)
	case "pgup", "ctrl+u":
		v.off, v.follow = max(0, v.off-m.bodyHeight()+1), false
	case "pgdown", "ctrl+d", " ":
		v.off, v.follow = v.off+m.bodyHeight()-1, false
	case "home", "g":
		m.move(v, -1<<30)
	case "end", "G":
		m.move(v, 1<<30)
		if _, _, keys := m.list(v); len(keys) == 0 {
			v.off = 1 << 30 // a text view's end: View clamps it
		}
	default:
		for _, a := range actions {
			if s == a.key {
				return m.act(v, a)
			}
		}
	}
	return nil
}

func (m *Model) pop() {
	if s := m.stacks[m.pane]; len(s) > 1 {
		m.stacks[m.pane] = s[:len(s)-1]
	}
	m.status = ""
}

// reload reads a shard's, a message's or a command pane's view again (r); the findings and
// shards panes come with the poll.
func (m *Model) reload(v *view) tea.Cmd {
	switch v.kind {
	case kindShard, kindMessage:
		return m.load(v)
	case kindPane:
		return m.run(v)
	case kindFindings, kindShards, kindFinding, kindExec, kindHelp:
	}
	return nil
}

// load reads what a shard or message view shows, off the loop.
func (m *Model) load(v *view) tea.Cmd {
	v.loading = true
	src, ctx := m.source(v.shard.Context), m.ctx
	return func() tea.Msg {
		var doc render.Doc
		var err error
		if v.kind == kindShard {
			doc, err = src.Shard(ctx, v.shard)
		} else {
			doc, err = src.Message(ctx, v.shard, v.msgID)
		}
		return loadedMsg{v: v, doc: doc, err: err}
	}
}

// list is a view's selectable table (nil: none) and the keys of its rows, in the order
// shown.
func (m *Model) list(v *view) (*render.Table, []int, []string) {
	var t *render.Table
	var keys []string
	switch v.kind {
	case kindFindings:
		fs := shown(m.snap.Findings)
		t = findingsTable(fs, m.multi())
		for _, f := range fs {
			keys = append(keys, findingKey(f))
		}
	case kindShards:
		t = m.snap.Shards
	case kindFinding:
		if f, ok := m.finding(v.finding); ok && m.snap.Shards != nil {
			t = shardsOf(f, m.snap.Shards)
		}
	case kindShard:
		if i := slices.IndexFunc(v.doc, func(s render.Section) bool { return s.Name == "messages" }); i >= 0 {
			t = v.doc[i].Table
		}
	case kindMessage, kindExec, kindPane, kindHelp:
	}
	if t == nil {
		return nil, nil, nil
	}
	if keys == nil {
		for _, r := range t.Rows {
			keys = append(keys, rowKey(t, r))
		}
	}
	order := sorted(t, v.sortCol, v.desc, m.opt.Now())
	ordered := make([]string, len(order))
	for i, j := range order {
		ordered[i] = keys[j]
	}
	return t, order, ordered
}

// rowKey is a listing row's key: its shard, or a message's id.
func rowKey(t *render.Table, r []any) string {
	if k, ok := shardRefOf(t, r); ok {
		return k.String()
	}
	if i := slices.Index(t.Columns, "id"); i >= 0 {
		return fmt.Sprint(r[i])
	}
	return fmt.Sprint(r)
}

// place puts v's cursor on the row of its key (after a refresh or a sort), or keeps its
// index when that row is gone; it returns the cursor.
func (m *Model) place(v *view, keys []string) int {
	if i := slices.Index(keys, v.key); i >= 0 && v.key != "" {
		v.cursor = i
	}
	v.cursor = max(0, min(v.cursor, len(keys)-1))
	if len(keys) > 0 {
		v.key = keys[v.cursor]
	}
	return v.cursor
}

func (m *Model) move(v *view, by int) {
	_, _, keys := m.list(v)
	if len(keys) == 0 {
		// A text view scrolls.
		v.off, v.follow = max(0, v.off+max(-1, min(1, by))*max(1, min(abs(by), m.bodyHeight()))), false
		if by == -1<<30 {
			v.off = 0
		}
		return
	}
	m.place(v, keys)
	v.cursor = max(0, min(len(keys)-1, v.cursor+by))
	v.key, v.follow = keys[v.cursor], true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// cycleSort moves v's sort column to the next (or previous) visible column; the cursor
// stays on its row.
func (m *Model) cycleSort(v *view, next bool) {
	t, _, _ := m.list(v)
	if t == nil {
		return
	}
	cols := append([]string{""}, visibleColumns(t)...)
	i := slices.Index(cols, v.sortCol)
	if next {
		i = (i + 1) % len(cols)
	} else {
		i = (i - 1 + len(cols)) % len(cols)
	}
	v.sortCol, v.follow = cols[i], true
}

// finding is the finding of key in the last snapshot.
func (m *Model) finding(key string) (doctor.Finding, bool) {
	for _, f := range m.snap.Findings {
		if findingKey(f) == key {
			return f, true
		}
	}
	return doctor.Finding{}, false
}

// enter drills down from the cursor's row.
func (m *Model) enter(v *view) tea.Cmd {
	t, order, keys := m.list(v)
	if t == nil || len(keys) == 0 {
		return nil
	}
	c := m.place(v, keys)
	switch v.kind {
	case kindFindings:
		f, _ := m.finding(keys[c])
		m.push(&view{kind: kindFinding, title: "finding " + causeOf(f) + " " + f.Target, finding: keys[c]})
	case kindShards, kindFinding:
		k, ok := shardRefOf(t, t.Rows[order[c]])
		if !ok {
			return nil
		}
		nv := &view{kind: kindShard, title: "shard " + m.shardLabel(t, t.Rows[order[c]], k), shard: k}
		m.push(nv)
		return m.load(nv)
	case kindShard:
		i := slices.Index(t.Columns, "id")
		if i < 0 {
			return nil
		}
		id, ok := asInt(t.Rows[order[c]][i])
		if !ok {
			return nil
		}
		nv := &view{kind: kindMessage, title: fmt.Sprintf("message %d", id), shard: v.shard, msgID: id}
		m.push(nv)
		return m.load(nv)
	case kindMessage, kindExec, kindPane, kindHelp:
	}
	return nil
}

// shardLabel is a shard as people read it: SCOPE/ID (with the cell in the control silo).
func (m *Model) shardLabel(t *render.Table, r []any, k ShardRef) string {
	label := fmt.Sprint(k.Scope)
	for _, name := range []string{"shard_scope_name", "scope"} {
		if i := slices.Index(t.Columns, name); i >= 0 {
			label = render.CellText(r[i], m.opt.Now())
			break
		}
	}
	label = fmt.Sprintf("%s/%d", label, k.ID)
	if k.Cell != "" {
		label = k.Cell + " " + label
	}
	if k.Context != "" {
		label = k.Context + " " + label
	}
	return label
}

// act runs the command of a's verb on the cursor's row: the finding's printed command
// (its next, then its then lines, the first of that verb) in the findings pane or a
// finding's view; the verb's command of the shard in the shards pane or a shard's view. The
// command runs as on a terminal: it prints its plan and asks for its confirmation, which
// the operator types; nothing is changed before that.
func (m *Model) act(v *view, a action) tea.Cmd {
	command, name, why := m.actionCommand(v, a)
	if command == "" {
		m.status = why
		return nil
	}
	m.status = ""
	src := m.source(name)
	nv := &view{kind: kindExec, title: command, command: command, context: name, permits: src.Permits(command)}
	if f, ok := m.finding(v.finding); ok && v.kind == kindFinding || v.kind == kindFindings {
		if v.kind == kindFindings {
			f, _ = m.finding(v.key)
		}
		if command == f.Next {
			// What doctor counted for its next command (next_selects_shards, …): the plan's
			// counts should say the same.
			for _, kv := range f.Evidence {
				if strings.HasPrefix(kv.Key, "next_selects_") {
					nv.note = append(nv.note, "doctor counted what it selects: "+doctor.Evidence{kv}.String())
				}
			}
		}
	}
	m.push(nv)
	return m.run(nv)
}

// actionCommand is the command a's key runs from v and the context it runs on (its
// finding's, or its shard's: its printed command names it), or "" and why there is none.
func (m *Model) actionCommand(v *view, a action) (string, string, string) {
	switch v.kind {
	case kindFindings, kindFinding:
		key := v.finding
		if v.kind == kindFindings {
			_, _, keys := m.list(v)
			if len(keys) == 0 {
				return "", "", "no finding to act on"
			}
			key = keys[m.place(v, keys)]
		}
		f, ok := m.finding(key)
		if !ok {
			return "", "", "this finding is gone from the last refresh"
		}
		if c := commandFor(f, a.verb); c != "" {
			return c, findingContext(f), ""
		}
		return "", "", fmt.Sprintf("this finding printed no %s command (next: %s)", a.verb, f.Next)
	case kindShards, kindShard:
		if a.shardArgs == nil {
			return "", "", fmt.Sprintf("%s works on a finding (its printed command): open the findings pane", a.key)
		}
		k, label, ok := m.cursorShard(v)
		if !ok {
			return "", "", "no shard to act on"
		}
		return m.source(k.Context).Command(append(slices.Clone(a.shardArgs), label, fmt.Sprint(k.ID))...), k.Context, ""
	case kindMessage, kindExec, kindPane, kindHelp:
	}
	return "", "", a.key + " works on a finding or a shard"
}

// cursorShard is the shard of v: a shard view's, or the cursor's row of the shards pane,
// with its scope's name.
func (m *Model) cursorShard(v *view) (ShardRef, string, bool) {
	if v.kind == kindShard {
		label := strings.TrimPrefix(v.title, "shard ")
		if i := strings.LastIndex(label, " "); i >= 0 {
			label = label[i+1:]
		}
		scope, _, _ := strings.Cut(label, "/")
		return v.shard, scope, true
	}
	t, order, keys := m.list(v)
	if t == nil || len(keys) == 0 {
		return ShardRef{}, "", false
	}
	r := t.Rows[order[m.place(v, keys)]]
	k, ok := shardRefOf(t, r)
	if !ok {
		return ShardRef{}, "", false
	}
	scope := fmt.Sprint(k.Scope)
	if i := slices.Index(t.Columns, "scope"); i >= 0 {
		scope = render.CellText(r[i], m.opt.Now())
	}
	return k, scope, true
}

// run starts v's command (again, for a pane's refresh); a pane over several contexts
// starts its command on each context.
func (m *Model) run(v *view) tea.Cmd {
	for _, p := range v.parts {
		m.run(p)
	}
	if v.parts != nil {
		return nil
	}
	v.raw, v.text, v.done, v.answered, v.input, v.err = "", nil, false, false, "", nil
	v.started = m.opt.Now()
	v.exec = m.source(v.context).Run(m.ctx, v.command, m.width)
	follow(v, v.exec, m.send)
	return nil
}

// show makes pane i the current one, running its command the first time.
func (m *Model) show(i int) tea.Cmd {
	m.pane = i
	if v := m.top(); v.kind == kindPane && unread(v) {
		return m.run(v)
	}
	return nil
}

// unread says a pane's command has not run since it was last marked to be read again (on
// any of its contexts).
func unread(v *view) bool {
	for _, p := range v.parts {
		if p.exec == nil {
			return true
		}
	}
	return v.parts == nil && v.exec == nil
}

// sql opens the SQL of an action's command (v): the command with --print-sql, which never
// writes.
func (m *Model) sql(v *view) tea.Cmd {
	if v.kind != kindExec || v.reads || strings.HasSuffix(v.command, " --print-sql") {
		return nil
	}
	if !v.done && !v.answered {
		// The plan waits for its answer: v shows the SQL above it, and esc comes back.
		v.answered = true
		v.exec.Answer("")
		m.status = "the plan was answered no to show its SQL: run the action again to apply it"
	}
	nv := &view{kind: kindExec, title: v.command + " --print-sql", command: v.command, context: v.context, reads: true}
	m.push(nv)
	nv.started = m.opt.Now()
	nv.exec = m.source(v.context).Run(m.ctx, v.command, m.width, "--print-sql")
	follow(nv, nv.exec, m.send)
	return nil
}

// answerKey is a key typed while a command waits for its answer: enter sends the line, esc
// answers no (an empty line: every confirmation's default), anything else is typed.
func (m *Model) answerKey(v *view, k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEnter:
		v.exec.Answer(v.input)
		v.answered, v.input = true, ""
	case tea.KeyEsc:
		if !v.answered {
			v.exec.Answer("")
			v.answered = true
		}
	case tea.KeyBackspace:
		if r := []rune(v.input); len(r) > 0 {
			v.input = string(r[:len(r)-1])
		}
	case tea.KeyRunes:
		if string(k.Runes) == "v" && v.input == "" {
			return m.sql(v)
		}
		if len(v.input) < 32 {
			v.input += string(k.Runes)
		}
	case tea.KeyUp, tea.KeyDown, tea.KeyPgUp, tea.KeyPgDown, tea.KeyHome, tea.KeyEnd:
		return m.key(k)
	default:
	}
	return nil
}

// ended is a command's end: an action's view says its status, and the findings of its
// context are read again (the finding re-evaluates; the other contexts, which it did not
// touch, keep their cadence) with the panes of commands marked to be read again.
func (m *Model) ended(msg execDoneMsg) tea.Cmd {
	v := msg.v
	if v.exec != msg.e {
		return nil
	}
	v.done, v.code = true, msg.code
	if v.kind != kindExec || v.reads {
		return nil
	}
	for i := 2; i < len(m.stacks); i++ {
		pv := m.stacks[i][0]
		pv.exec = nil
		for _, p := range pv.parts {
			p.exec = nil
		}
	}
	return m.pollOne(m.pollerOf(v.context), TierFindings)
}

// lastLine is the last of lines ("" for none): a chunk of output continues it.
func lastLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// payloadLines are a message's payload as the viewer shows it: its secrets redacted as
// inspect mailbox redacts a request's body (keys named secret at any depth, secret-shaped
// values anywhere), then pretty-printed when it is JSON.
func payloadLines(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "(no payload)"
	case render.JSONText:
		s = string(x)
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		s = string(b)
	}
	s = mailbox.RedactBody(s)
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "", "  "); err == nil {
		return out.String()
	}
	return s
}

func helpLines() []string {
	return []string{
		"up/down    move (k/j); home/end (g/G); pgup/pgdn scroll (ctrl+u/ctrl+d, space)",
		"enter      drill down: finding → its shards → shard → message payload",
		"esc        back",
		"o / O      sort by the next / previous column; i reverses the order",
		"/          filter the shards: at-cap scope:NAME category:NAME (enter applies, esc cancels)",
		"r          refresh now, every doctor check (the expensive tier)",
		"p          pause / resume the refresh",
		"R S C K D  on a finding: run its printed reschedule, skip, compact, killswitch or",
		"           drain command; on a shard: reschedule, compact, killswitch add (R C K).",
		"           The command prints its plan and asks: type y (or the count) and enter;",
		"           esc answers no; v shows its SQL (--print-sql)",
		"1-6, tab   the panes: findings, shards, switches, backfills, replicas, mailboxes",
		"?          this help; q quits",
	}
}
