package gallery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/sentrysim"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The incident gallery: each test seeds an incident shape (reference §8, §10.5), builds its
// history by replaying Sentry's workers (internal/sentrysim) over virtual hours that end now,
// then plays the on-call engineer: run doctor, run the commands its findings print (Next,
// then Then, adding --yes where a prompt would be answered), let Sentry's workers have their
// go, and doctor again. It asserts what the issue asks of every shape: no healthy message is
// lost (every coalesce group's newest row delivered or still queued), only the poison is
// archived (or older duplicates Sentry would never deliver), every printed plan selects the
// count its finding states, and the incident ends within its budget of commands.

// The categories the shapes use (internal/enums' registry).
const (
	orgUpdate    = 2  // ORGANIZATION_UPDATE, object = the organization
	memberUpdate = 3  // ORGANIZATION_MEMBER_UPDATE
	projectUpd   = 8  // PROJECT_UPDATE
	authProvider = 24 // AUTH_PROVIDER_UPDATE
	userUpdate   = 0  // USER_UPDATE (user scope)
	authIdentity = 25 // AUTH_IDENTITY_UPDATE (user scope)
)

type finding struct {
	Check    string         `json:"check"`
	Severity string         `json:"severity"`
	Summary  string         `json:"summary"`
	Evidence map[string]any `json:"evidence"`
	Next     []string       `json:"next"`
}

func (f finding) cause() string { s, _ := f.Evidence["cause"].(string); return s }

// incident is one shape being played.
type incident struct {
	t      *testing.T
	schema string
	state  string
	sims   []*sentrysim.Sim
	seeded []sentrysim.Snapshot
	// down makes the receiver fail every message (an outage) while true.
	down bool
	// commands are the command lines run, doctor included, in order.
	commands []string
}

// poisonous: the receiver fails a payload that says so, and everything while down.
func (in *incident) receiver(m sentrysim.Message) error {
	if in.down {
		return fmt.Errorf("receiver down")
	}
	if m.Payload != nil && strings.Contains(*m.Payload, "poison") {
		return fmt.Errorf("poison payload")
	}
	return nil
}

func newIncident(t *testing.T, tables ...string) *incident {
	t.Helper()
	return newIncidentOn(t, fixture.Options{Era: fixture.EraCurrent}, tables...)
}

// newIncidentOn plays on a schema of the given Sentry era (reference §10: a self-hosted
// operator may run either side of each change).
func newIncidentOn(t *testing.T, o fixture.Options, tables ...string) *incident {
	t.Helper()
	in := &incident{t: t, schema: testdb.Schema(t, o), state: t.TempDir()}
	t.Setenv("XDG_STATE_HOME", in.state) // the archives and the ledger, where printed commands put them
	for _, tbl := range tables {
		in.sims = append(in.sims, sentrysim.New(testdb.Pool(t), in.schema, tbl, sentrysim.Options{Receiver: in.receiver, DeadlineRows: 5000}))
	}
	return in
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return c
}

var thePayload = func(s string) *string { return &s }

// row is a row Sentry saved at at.
func row(cell string, scope int, shard int64, cat int, obj int64, payload string, at time.Time) sentrysim.Row {
	return sentrysim.Row{Key: sentrysim.GroupKey{Shard: sentrysim.Shard{Cell: cell, Scope: scope, ID: shard}, Category: cat, Object: obj},
		Payload: thePayload(payload), DateAdded: at}
}

func (in *incident) insert(sim int, rows ...sentrysim.Row) []int64 {
	in.t.Helper()
	ids, err := in.sims[sim].Insert(ctx(in.t), rows...)
	if err != nil {
		in.t.Fatal(err)
	}
	return ids
}

// history replays Sentry's workers from from until a minute ago, every step.
func (in *incident) history(from time.Time, step time.Duration) {
	in.t.Helper()
	for _, s := range in.sims {
		if err := s.Run(ctx(in.t), from, time.Now().Add(-time.Minute), step); err != nil {
			in.t.Fatal(err)
		}
	}
}

// snapshot records every group's newest row: what must not be lost.
func (in *incident) snapshot() {
	in.t.Helper()
	in.seeded = nil
	for _, s := range in.sims {
		g, err := s.Groups(ctx(in.t))
		if err != nil {
			in.t.Fatal(err)
		}
		in.seeded = append(in.seeded, g)
	}
}

// workers are Sentry's workers having their go now (two ticks, a couple of seconds apart).
func (in *incident) workers() {
	in.t.Helper()
	for i := 1; i <= 2; i++ {
		now := time.Now().Add(time.Duration(i) * time.Second)
		for _, s := range in.sims {
			if err := s.Tick(ctx(in.t), now); err != nil {
				in.t.Fatal(err)
			}
		}
	}
}

// main runs outboxctl in process against the incident's schema.
func (in *incident) main(args ...string) (int, string, string) {
	io, out, errOut := render.Test()
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := cmd.Main(c, append([]string{"--dsn", testdb.DSN(), "--connect-timeout", "5s"}, args...), io)
	return code, out.String(), errOut.String()
}

// doctor runs doctor as printed (the queue's checks) and decodes its findings.
func (in *incident) doctor() []finding {
	in.t.Helper()
	in.commands = append(in.commands, "outboxctl doctor")
	_, out, errOut := in.main("--schema", in.schema, "doctor", "--check", "scheduler,stuck,killswitch", "-o", "json")
	var fs []finding
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		in.t.Fatalf("doctor: %v\n%s\n%s", err, out, errOut)
	}
	return fs
}

// actionable are the findings an operator acts on now: not ok, not waiting for Sentry.
func actionable(fs []finding) []finding {
	var out []finding
	for _, f := range fs {
		if f.Severity != "ok" && (f.Check == "stuck" || f.Check == "killswitch") && f.cause() != "made_due_not_attempted" {
			out = append(out, f)
		}
	}
	return out
}

var (
	planShards   = regexp.MustCompile(`: (\d+) shard\(s\) holding`)
	planMessages = regexp.MustCompile(`skip (\d+) message\(s\)`)
	planOne      = regexp.MustCompile(`skip message \d+:`)
)

// readOnly reports whether a printed command only reads.
func readOnly(words []string) bool {
	for _, w := range words {
		switch w {
		case "inspect", "shards", "doctor", "list", "check", "verify":
			return true
		case "reschedule", "skip", "compact", "remove", "add", "drain":
			return false
		}
	}
	return true
}

// run runs one printed command line as an operator would: a mutation first as a dry run,
// then with --yes. It returns the command's verb and how many shards (or messages) its plan
// selected (-1 for a read).
func (in *incident) run(line string) (string, int) {
	in.t.Helper()
	words, err := shellWords(line)
	if err != nil || len(words) == 0 || words[0] != "outboxctl" {
		in.t.Fatalf("printed command %q: %v", line, err)
	}
	in.commands = append(in.commands, line)
	if readOnly(words) {
		if code, out, errOut := in.main(words[1:]...); code == cmd.ExitUsage {
			in.t.Fatalf("%s: exit %d\n%s\n%s", line, code, out, errOut)
		}
		return "", -1
	}
	_, _, plan := in.main(append(slices.Clone(words[1:]), "--dry-run")...)
	got, verb := -1, ""
	for _, v := range []string{"reschedule", "skip", "compact", "remove"} {
		if slices.Contains(words, v) && verb == "" {
			verb = v
		}
	}
	switch {
	case planShards.MatchString(plan):
		got, _ = strconv.Atoi(planShards.FindStringSubmatch(plan)[1])
	case planMessages.MatchString(plan):
		got, _ = strconv.Atoi(planMessages.FindStringSubmatch(plan)[1])
	case planOne.MatchString(plan):
		got = 1
	case verb == "remove":
		got = len(words) - slices.Index(words, "remove") - 4 // SCOPE ID... --reason R
	case verb == "reschedule" || verb == "compact":
		got = 1 // SCOPE ID: one shard
	}
	code, out, errOut := in.main(append(slices.Clone(words[1:]), "--yes", "-o", "json")...)
	if code != 0 {
		in.t.Fatalf("%s: exit %d\n%s\n%s", line, code, out, errOut)
	}
	return verb, got
}

// act runs a finding's printed commands (Next, then Then; doctor is the next round's) and
// checks that what its first mutation's commands select, summed, is the count it states.
func (in *incident) act(f finding) {
	in.t.Helper()
	sums := map[string]int{}
	first := ""
	for _, line := range f.Next {
		if strings.HasSuffix(line, " doctor") {
			continue
		}
		verb, n := in.run(line)
		if verb != "" && first == "" {
			first = verb
		}
		sums[verb] += n
	}
	for _, k := range []string{"next_selects_shards", "next_selects_groups"} {
		if want, ok := f.Evidence[k].(float64); ok && sums[first] != int(want) {
			in.t.Errorf("finding %s says its commands select %d (%s); their plans (%s) select %d: %q", f.cause(), int(want), k, first, sums[first], f.Next)
		}
	}
}

// follow plays rounds of doctor → printed commands → Sentry's workers until doctor has
// nothing to act on (or rounds run out), and returns the last findings.
func (in *incident) follow(rounds int) []finding {
	in.t.Helper()
	var fs []finding
	for range rounds {
		fs = in.doctor()
		act := actionable(fs)
		if len(act) == 0 {
			if slices.ContainsFunc(fs, func(f finding) bool { return f.cause() == "made_due_not_attempted" }) {
				in.workers()
				continue
			}
			return fs
		}
		for _, f := range act {
			if f.cause() == "still_failing" {
				return fs // the receiver is the operator's to fix: the shape decides
			}
			in.act(f)
		}
		in.workers()
	}
	return fs
}

// check asserts the invariants every shape keeps: nothing healthy lost or archived, and the
// poison (if any) archived.
func (in *incident) check(poison ...sentrysim.GroupKey) {
	in.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(in.state, "outboxctl", "archive-*.jsonl*"))
	archived := sentrysim.ArchivedRows(in.t, paths...)
	for i, s := range in.sims {
		s.CheckNoHealthyLost(in.t, in.seeded[i], poison...)
		s.CheckArchivedOnly(in.t, archived, poison...)
	}
	got := map[sentrysim.GroupKey]bool{}
	for _, a := range archived {
		got[a.Key] = true
	}
	for _, p := range poison {
		if !got[p] {
			in.t.Errorf("poison group %+v was not archived", p)
		}
	}
}

// commandsAtMost fails when the incident took more than n commands, doctor included; the
// last doctor, which only confirms it is over, is not one of them.
func (in *incident) commandsAtMost(n int) {
	in.t.Helper()
	if len(in.commands) > n+1 || len(in.commands) == n+1 && in.commands[n] != "outboxctl doctor" {
		in.t.Errorf("the incident took %d commands, want at most %d:\n%s", len(in.commands), n, strings.Join(in.commands, "\n"))
	}
}

func clean(t *testing.T, fs []finding) {
	t.Helper()
	for _, f := range fs {
		if f.Severity != "ok" && (f.Check == "stuck" || f.Check == "killswitch") {
			t.Errorf("doctor still reports: %s: %s", f.Check, f.Summary)
		}
	}
}

func byCause(fs []finding, cause string) []finding {
	var out []finding
	for _, f := range fs {
		if f.cause() == cause {
			out = append(out, f)
		}
	}
	return out
}

// seedOutageOver is the outage that is over (§10.5 #1): 40 organization and user shards,
// heads of four categories, every payload fine, failed together for three hours while the
// receiver was down and at the 1 h cap; the receiver was fixed a minute ago.
func (in *incident) seedOutageOver() {
	start := time.Now().Add(-3 * time.Hour)
	var rows []sentrysim.Row
	for i := int64(1); i <= 40; i++ {
		scope, cat := 0, []int{orgUpdate, memberUpdate, projectUpd}[i%3]
		if i%4 == 0 {
			scope, cat = 1, userUpdate
		}
		rows = append(rows, row("", scope, i, cat, i*10, `{"ok": 1}`, start), row("", scope, i, cat, i*10+1, `{"ok": 2}`, start))
	}
	in.insert(0, rows...)
	in.snapshot()
	in.down = true
	in.history(start, time.Minute)
	in.down = false // the receiver was fixed a minute ago
}

// seedPoisonAmongAnOutage is one poison message (shard 4's auth-provider head) among the
// 10 shards of an outage that is over: the same history, the receiver fixed a minute ago.
func (in *incident) seedPoisonAmongAnOutage() {
	start := time.Now().Add(-3 * time.Hour)
	var rows []sentrysim.Row
	for i := int64(1); i <= 10; i++ {
		p := `{"ok": 1}`
		if i == 4 {
			p = `{"poison": "bad slug"}`
		}
		rows = append(rows, row("", 0, i, authProvider, i, p, start), row("", 0, i, orgUpdate, i, `{"ok": 1}`, start))
	}
	in.insert(0, rows...)
	in.snapshot()
	in.down = true
	in.history(start, time.Minute)
	in.down = false
}

// An outage that is over (§10.5 #1): 40 organization and user shards, heads of four
// categories, failed together while the receiver was down and sit at the 1 h cap; every
// payload is fine. doctor names the outage and prints one reschedule of exactly those
// shards; nothing is skipped; the incident ends in three commands.
func TestGalleryOutageOver(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	in.seedOutageOver()
	fs := in.doctor()
	outage := byCause(fs, "receiver_outage")
	if len(outage) != 1 || outage[0].Evidence["grouped_shards"] != float64(40) || !strings.Contains(outage[0].Next[0], " reschedule ") {
		t.Fatalf("doctor: want one receiver_outage finding of 40 shards leading with a reschedule, got %+v", actionable(fs))
	}
	for _, line := range outage[0].Next {
		if strings.Contains(line, " skip ") {
			t.Fatalf("an outage's finding prints a skip: %q", line)
		}
	}
	in.commands = nil
	clean(t, in.follow(3))
	in.check()
	in.commandsAtMost(3)
}

// Poison heads beside leftover kill switches (the first shape, scaled): 12
// organization shards whose ORGANIZATION_MEMBER_UPDATE head is poison, with healthy rows
// behind, and 4 shards held by a kill switch written three days ago, their heads healthy
// ORGANIZATION_MEMBER_UPDATEs. The kill switch is one finding whose commands release exactly
// its 4 shards; the 12 are undecided until a fresh attempt fails them again while the
// released shards deliver the same category; then exactly their 12 head groups are skipped.
func TestGalleryPoisonBesideLeftoverKillswitch(t *testing.T) {
	for _, o := range []fixture.Options{{Era: fixture.EraCurrent}, {Era: fixture.EraMay2026, Payload: fixture.PayloadText, OptionValue: fixture.PayloadText}} {
		t.Run(string(o.Era)+"-"+string(o.Payload), func(t *testing.T) { poisonBesideLeftoverKillswitch(t, o) })
	}
}

func poisonBesideLeftoverKillswitch(t *testing.T, o fixture.Options) {
	in := newIncidentOn(t, o, "sentry_regionoutbox")
	start := time.Now().Add(-4 * time.Hour)
	var rows []sentrysim.Row
	var poison []sentrysim.GroupKey
	for i := int64(1); i <= 12; i++ {
		at := start.Add(time.Duration(i) * 7 * time.Minute) // written apart: their attempts spread
		rows = append(rows, row("", 0, i, memberUpdate, 1000+i, `{"poison": true}`, at),
			row("", 0, i, orgUpdate, i, `{"ok": 1}`, at), row("", 0, i, memberUpdate, 2000+i, `{"ok": 1}`, at))
		poison = append(poison, sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: i}, Category: memberUpdate, Object: 1000 + i})
	}
	for i := int64(101); i <= 104; i++ {
		rows = append(rows, row("", 0, i, memberUpdate, 3000+i, `{"ok": 1}`, start), row("", 0, i, orgUpdate, i, `{"ok": 1}`, start))
	}
	in.insert(0, rows...)
	if err := in.sims[0].SetKillSwitch(ctx(t), options.DisabledOrgShards, []int64{101, 102, 103, 104}, time.Now().Add(-72*time.Hour), "ops-oncall"); err != nil {
		t.Fatal(err)
	}
	in.history(start, time.Minute)
	in.snapshot()
	fs := in.doctor()
	ks := byCause(fs, "killswitch_left_on")
	if len(ks) != 1 || ks[0].Evidence["grouped_shards"] != float64(4) || !strings.Contains(ks[0].Next[0], " killswitch remove organization 101 102 103 104 ") ||
		!strings.Contains(ks[0].Summary, "by ops-oncall") {
		t.Fatalf("doctor: want one kill-switch finding of the 4 shards, with its age and author, releasing them: %+v", ks)
	}
	for _, f := range fs {
		for _, line := range f.Next {
			if strings.Contains(line, " skip ") {
				t.Fatalf("doctor prints a skip before any fresh attempt: %s: %q", f.cause(), line)
			}
		}
	}
	in.commands = nil
	clean(t, in.follow(4))
	in.check(poison...)
	in.commandsAtMost(8) // two causes: doctor, remove, reschedule ×2, doctor, skip, doctor
}

// A hot shard (§10.5 #3): one organization saved 12,000 times (one coalesce group larger
// than Sentry's drain deletes within its deadline) with 30 healthy groups interleaved.
// doctor calls it hot, not poison, and prints compact; the newest update of every group is
// delivered.
func TestGalleryHotShard(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	if _, _, err := in.sims[0].InsertGroup(ctx(t), row("", 0, 7, orgUpdate, 7, `{"v": {n}}`, start), 12000); err != nil {
		t.Fatal(err)
	}
	var rows []sentrysim.Row
	for i := int64(1); i <= 30; i++ {
		rows = append(rows, row("", 0, 7, memberUpdate, i, `{"ok": 1}`, start.Add(time.Second)))
	}
	in.insert(0, rows...)
	if _, _, err := in.sims[0].InsertGroup(ctx(t), row("", 0, 7, orgUpdate, 7, `{"v": "last {n}"}`, start.Add(2*time.Second)), 1); err != nil {
		t.Fatal(err)
	}
	in.history(start, time.Minute)
	in.snapshot()
	fs := in.doctor()
	hot := byCause(fs, "hot_shard")
	if len(hot) != 1 || !strings.Contains(hot[0].Next[0], " compact organization 7 ") {
		t.Fatalf("doctor: want the hot shard with compact, got %+v", actionable(fs))
	}
	for _, f := range fs {
		if f.cause() == "poison" || strings.Contains(strings.Join(f.Next, " "), " skip ") {
			t.Fatalf("a hot shard called poison: %+v", f)
		}
	}
	in.commands = nil
	clean(t, in.follow(3))
	in.check()
	in.commandsAtMost(3)
}

// One poison message among the shards of an outage: the outage's shards deliver after the
// reschedule, the poison head fails again while its category delivers elsewhere, and only
// its group is skipped.
func TestGalleryPoisonAmongAnOutage(t *testing.T) {
	for _, o := range []fixture.Options{{Era: fixture.EraCurrent}, {Era: fixture.EraMay2026, Payload: fixture.PayloadText, OptionValue: fixture.PayloadText}} {
		t.Run(string(o.Era)+"-"+string(o.Payload), func(t *testing.T) { poisonAmongAnOutage(t, o) })
	}
}

func poisonAmongAnOutage(t *testing.T, o fixture.Options) {
	in := newIncidentOn(t, o, "sentry_regionoutbox")
	in.seedPoisonAmongAnOutage()
	in.commands = nil
	clean(t, in.follow(4))
	in.check(sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: 4}, Category: authProvider, Object: 4})
	in.commandsAtMost(4) // doctor, reschedule, doctor, skip (then doctor says it is over)
}

// An outage that is not over when the operator acts: the fresh attempt fails every head
// again and no head of their categories delivers. doctor says the evidence cannot tell a
// receiver still down from poison, and prints nothing that removes a message; once the
// receiver is fixed, its printed reschedule ends the incident with nothing lost.
func TestGalleryOutageNotOver(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	var rows []sentrysim.Row
	for i := int64(1); i <= 15; i++ {
		rows = append(rows, row("", 0, i, []int{orgUpdate, memberUpdate}[i%2], i, `{"ok": 1}`, start))
	}
	in.insert(0, rows...)
	in.snapshot()
	in.down = true
	in.history(start, time.Minute)
	fs := in.follow(3) // the receiver stays down
	still := byCause(fs, "still_failing")
	if len(still) != 1 || still[0].Evidence["grouped_shards"] != float64(15) {
		t.Fatalf("want one still_failing finding of 15 shards, got %+v", actionable(fs))
	}
	for _, line := range still[0].Next {
		if strings.Contains(line, " skip ") || strings.Contains(line, " compact ") {
			t.Fatalf("still failing prints a removal: %q", line)
		}
	}
	in.down = false // fixed: the operator runs the finding's reschedule
	for _, line := range still[0].Next[1:] {
		in.run(line)
	}
	in.workers()
	clean(t, in.follow(2))
	in.check()
}

// A head whose group got a newer row after its last attempt (the object was saved again,
// say with the fix): the newest row has not failed, so no skip is printed even though the
// head failed again after a fresh attempt while its category delivered elsewhere; the next
// attempt delivers the new payload.
func TestGalleryNewerRowNotYetTried(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	in.insert(0, row("", 0, 5, orgUpdate, 5, `{"poison": 1}`, start), row("", 0, 6, orgUpdate, 6, `{"ok": 1}`, start))
	in.down = true
	in.history(start, time.Minute)
	in.down = false
	fs := in.doctor()
	for _, f := range actionable(fs) {
		in.act(f) // the fresh attempt: shard 6 delivers, shard 5's head fails again
	}
	in.workers()
	// Saved after the attempt (the workers' last tick ran 2 s ahead of the clock).
	in.insert(0, row("", 0, 5, orgUpdate, 5, `{"fixed": 1}`, time.Now().Add(5*time.Second)))
	in.snapshot()
	for _, f := range in.doctor() {
		if strings.Contains(strings.Join(f.Next, " "), " skip ") {
			t.Fatalf("a skip printed for a group whose newest row has not been tried: %+v", f)
		}
	}
	clean(t, in.follow(3))
	in.check()
}

// Workers stopped after an upgrade (§10.5 #4): due shards nobody claims. doctor names the
// taskworker namespace to look at and prints nothing that changes the outbox; once the
// workers run again, the shards drain.
func TestGalleryWorkersStopped(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox", "sentry_controloutbox")
	at := time.Now().Add(-40 * time.Minute)
	var rows []sentrysim.Row
	for i := int64(1); i <= 12; i++ {
		rows = append(rows, row("", 0, i, orgUpdate, i, `{"ok": 1}`, at))
	}
	in.insert(0, rows...)
	in.insert(1, row("us", 1, 3, userUpdate, 3, `{"ok": 1}`, at))
	in.snapshot()
	fs := in.doctor()
	var cell, control bool
	for _, f := range fs {
		if f.Check == "scheduler" && f.Severity != "ok" {
			cell = cell || strings.Contains(f.Summary, "namespace hybridcloud ")
			control = control || strings.Contains(f.Summary, "namespace hybridcloud.control ")
			for _, line := range f.Next {
				if words, _ := shellWords(line); !readOnly(words) {
					t.Fatalf("stopped workers: a printed command changes the outbox: %q", line)
				}
			}
		}
	}
	if !cell || !control {
		t.Fatalf("the scheduler findings do not name the taskworker namespaces: %+v", fs)
	}
	in.workers() // the workers are started again
	clean(t, in.doctor())
	in.check()
}

// A kill switch set ten minutes ago may be an incident's own: doctor names it, its age and
// author, and leads with the read-only listing, not a removal.
func TestGalleryRecentKillswitchIsNotRemovedFirst(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	at := time.Now().Add(-30 * time.Minute)
	in.insert(0, row("", 0, 9, orgUpdate, 9, `{"ok": 1}`, at), row("", 0, 10, orgUpdate, 10, `{"ok": 1}`, at))
	if err := in.sims[0].SetKillSwitch(ctx(t), options.DisabledOrgShards, []int64{9, 10}, time.Now().Add(-10*time.Minute), "incident-bot"); err != nil {
		t.Fatal(err)
	}
	in.history(at, time.Minute)
	ks := byCause(in.doctor(), "killswitch_left_on")
	if len(ks) != 1 || ks[0].Evidence["switch_recent"] != true || !strings.HasSuffix(ks[0].Next[0], " killswitch list") ||
		!strings.Contains(ks[0].Summary, "by incident-bot") {
		t.Fatalf("recent kill switch: %+v", ks)
	}
}

// The control silo: an outage that is over in two cells. Each cell's finding names its
// --cell and reschedules exactly its shards.
func TestGalleryControlSiloOutage(t *testing.T) {
	in := newIncident(t, "sentry_controloutbox")
	start := time.Now().Add(-150 * time.Minute)
	var rows []sentrysim.Row
	for i := int64(1); i <= 20; i++ {
		cell := []string{"us", "de"}[i%2]
		rows = append(rows, row(cell, 1, i, []int{userUpdate, authIdentity}[i%3%2], i, `{"ok": 1}`, start))
	}
	in.insert(0, rows...)
	in.snapshot()
	in.down = true
	in.history(start, 10*time.Second)
	in.down = false
	fs := in.doctor()
	outage := byCause(fs, "receiver_outage")
	if len(outage) != 2 {
		t.Fatalf("want one outage finding per cell, got %+v", actionable(fs))
	}
	for _, f := range outage {
		if f.Evidence["grouped_shards"] != float64(10) || !strings.Contains(f.Next[0], " --cell "+f.Evidence["cell"].(string)+" ") {
			t.Fatalf("cell finding: %+v", f)
		}
	}
	in.commands = nil
	clean(t, in.follow(3))
	in.check()
	in.commandsAtMost(4) // doctor, reschedule per cell, doctor
}

// Several causes at once: a hot shard, an outage that is over and a leftover kill switch,
// with one poison message among the outage's shards.
func TestGallerySeveralCausesAtOnce(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	if _, _, err := in.sims[0].InsertGroup(ctx(t), row("", 0, 500, orgUpdate, 500, `{"v": {n}}`, start), 11000); err != nil {
		t.Fatal(err)
	}
	var rows []sentrysim.Row
	for i := int64(1); i <= 8; i++ {
		p := `{"ok": 1}`
		if i == 3 {
			p = `{"poison": 3}`
		}
		rows = append(rows, row("", 0, i, memberUpdate, i, p, start), row("", 1, 100+i, userUpdate, i, `{"ok": 1}`, start))
	}
	rows = append(rows, row("", 0, 600, memberUpdate, 600, `{"ok": 1}`, start))
	in.insert(0, rows...)
	if err := in.sims[0].SetKillSwitch(ctx(t), options.DisabledOrgShards, []int64{600}, time.Now().Add(-48*time.Hour), "cli"); err != nil {
		t.Fatal(err)
	}
	in.snapshot()
	in.down = true
	in.history(start, time.Minute)
	in.down = false
	in.commands = nil
	clean(t, in.follow(4))
	in.check(sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: 3}, Category: memberUpdate, Object: 3})
}

// A backoff the head did not earn: the poison head was skipped by hand (its shard kept at
// the cap), so the new head was written after the last attempt: doctor says so and makes
// the shard due; nothing more is removed.
func TestGalleryBackoffNotEarned(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	in.insert(0, row("", 0, 1, orgUpdate, 1, `{"poison": 1}`, start))
	in.history(start, time.Minute)
	in.insert(0, row("", 0, 1, memberUpdate, 5, `{"ok": 1}`, time.Now().Add(-20*time.Second)))
	execSQL(t, fmt.Sprintf("DELETE FROM %s.sentry_regionoutbox WHERE category = %d", in.schema, orgUpdate))
	execSQL(t, fmt.Sprintf("UPDATE %s.sentry_regionoutbox SET scheduled_from = now() - interval '10 minutes', scheduled_for = now() + interval '50 minutes'", in.schema))
	in.snapshot()
	fs := in.doctor()
	if un := byCause(fs, "backoff_not_earned"); len(un) != 1 {
		t.Fatalf("want backoff_not_earned, got %+v", actionable(fs))
	}
	in.commands = nil
	clean(t, in.follow(3))
	in.check()
}

func execSQL(t *testing.T, sql string) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(ctx(t), sql); err != nil {
		t.Fatal(err)
	}
}

// shellWords splits a printed command line as a POSIX shell would: words, '…' (no escapes)
// and $'…' (backslash escapes), which is all outboxctl's quoting writes.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			in = true
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			i, in = i+1+j, true
		case c == '$' && i+1 < len(line) && line[i+1] == '\'':
			i += 2
			for ; i < len(line) && line[i] != '\''; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
					w.WriteByte(map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r'}[line[i]] | map[bool]byte{true: line[i]}[!strings.ContainsRune("tnr", rune(line[i]))])
					continue
				}
				w.WriteByte(line[i])
			}
			in = true
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// A lock holder (§10.5 #6): a session holds the head row of a shard at the cap (a drain
// delivering it right now looks the same). No attempt has failed on it since, so doctor
// names the hold and prints nothing that changes the outbox, even with a fresh attempt on
// record and its category delivering elsewhere.
func TestGalleryHeadHeldByATransaction(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	in.insert(0, row("", 0, 1, orgUpdate, 1, `{"ok": 1}`, start), row("", 0, 2, orgUpdate, 2, `{"ok": 1}`, start))
	in.down = true
	in.history(start, time.Minute)
	in.down = false
	in.snapshot()
	tx, err := testdb.Pool(t).Begin(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx(t), fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_identifier = 1 ORDER BY id LIMIT 1 FOR UPDATE", in.schema)); err != nil {
		t.Fatal(err)
	}
	fs := in.doctor()
	held := byCause(fs, "head_held")
	if len(held) != 1 || held[0].Evidence["grouped_shards"] != float64(1) || !strings.HasSuffix(held[0].Next[0], " doctor --check locks,xmin") {
		t.Fatalf("want the held head named, got %+v", actionable(fs))
	}
	for _, f := range fs {
		for _, line := range f.Next {
			if words, _ := shellWords(line); !readOnly(words) && f.cause() == "head_held" {
				t.Fatalf("a held head's finding changes the outbox: %q", line)
			}
		}
	}
	_ = tx.Rollback(ctx(t)) // the holder ends
	clean(t, in.follow(3))
	in.check()
}

// The object is saved again (with the fix) between doctor's poison finding and the
// operator's skip: the printed skip removes only the rows that failed, and Sentry delivers
// the new one, so the organization's newest update is not lost.
func TestGallerySkipLeavesARowWrittenAfterDoctor(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	in.insert(0, row("", 0, 1, authProvider, 1, `{"poison": 1}`, start), row("", 0, 2, authProvider, 2, `{"ok": 1}`, start))
	in.down = true
	in.history(start, time.Minute)
	in.down = false
	for _, f := range actionable(in.doctor()) {
		in.act(f) // the fresh attempt: shard 2 delivers, shard 1's head fails again
	}
	in.workers()
	poison := byCause(in.doctor(), "poison")
	if len(poison) != 1 || !strings.Contains(poison[0].Next[0], " skip ") {
		t.Fatalf("want the poison finding with its skip, got %+v", poison)
	}
	in.insert(0, row("", 0, 1, authProvider, 1, `{"fixed": 1}`, time.Now().Add(5*time.Second)))
	in.snapshot()
	in.run(poison[0].Next[0])
	in.workers()
	clean(t, in.follow(2))
	in.check() // the group is not poison any more: its newest row must be delivered
	delivered := false
	for _, m := range in.sims[0].Delivered() {
		delivered = delivered || m.Payload != nil && strings.Contains(*m.Payload, "fixed")
	}
	if !delivered {
		t.Fatalf("the row written after doctor's finding was not delivered")
	}
}

// A poison head behind a kill switch, beside healthy shards the same switch holds: the
// switch is released and the shards made due; the healthy ones deliver the category, the
// poison head fails again, and only its group is skipped.
func TestGalleryPoisonBehindAKillswitch(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	var rows []sentrysim.Row
	for i := int64(21); i <= 24; i++ {
		p := `{"ok": 1}`
		if i == 22 {
			p = `{"poison": "behind the switch"}`
		}
		rows = append(rows, row("", 0, i, memberUpdate, i, p, start), row("", 0, i, orgUpdate, i, `{"ok": 1}`, start))
	}
	in.insert(0, rows...)
	if err := in.sims[0].SetKillSwitch(ctx(t), options.DisabledOrgShards, []int64{21, 22, 23, 24}, time.Now().Add(-50*time.Hour), "cli"); err != nil {
		t.Fatal(err)
	}
	in.history(start, time.Minute)
	in.snapshot()
	in.commands = nil
	clean(t, in.follow(4))
	in.check(sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: 22}, Category: memberUpdate, Object: 22})
}

// One poison head alone: no other shard of its category was made due to compare with, so
// the fresh attempt proves nothing. doctor never guesses: the finding stays still_failing,
// with nothing printed that removes a message, and nothing is archived.
func TestGalleryLonePoisonIsNeverGuessed(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	in.insert(0, row("", 0, 9, authProvider, 9, `{"poison": 1}`, start), row("", 0, 9, orgUpdate, 9, `{"ok": 1}`, start))
	in.history(start, time.Minute)
	in.snapshot()
	fs := in.follow(4)
	if still := byCause(fs, "still_failing"); len(still) != 1 {
		t.Fatalf("want the lone head still_failing, got %+v", actionable(fs))
	}
	for _, line := range in.commands {
		if strings.Contains(line, " skip ") || strings.Contains(line, " compact ") {
			t.Fatalf("a removal was printed without proof: %q", line)
		}
	}
	in.sims[0].CheckNoHealthyLost(t, in.seeded[0], sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: 9}, Category: authProvider, Object: 9})
	paths, _ := filepath.Glob(filepath.Join(in.state, "outboxctl", "archive-*.jsonl*"))
	if len(sentrysim.ArchivedRows(t, paths...)) != 0 {
		t.Fatalf("rows archived without proof")
	}
}
