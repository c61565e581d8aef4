package gallery_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The gallery's webhook mailbox shapes (#41, reference §10.4): hybridcloud_webhookpayload's
// mailboxes, drained head-of-line by Sentry's drain_mailbox, replayed here by mailboxSim (from
// the reference, not from outboxctl). The operator runs doctor --check mailboxes and follows
// only the commands it printed. The rule every shape keeps: a printed command that removes
// payloads must be proven by evidence and select exactly what its finding names; doctor's
// mailbox findings carry no such evidence (a failing head is the receiver's to fix, and
// Sentry itself drops it at MAX_DELIVERY_AGE), so none of their commands removes a payload.

// mailboxSim replays Sentry's webhook drain on one schema: per mailbox, the head (lowest id)
// when due; delivered, it is deleted and the next is tried (up to MAX_MAILBOX_DRAIN 300 a
// run); failed, attempts + 1 and schedule_for = now + 3 × 1.4^attempts minutes capped at 60,
// and the mailbox waits (its provider blocks), unless the provider skips failures, when
// the drain goes on to the next payload (what becomes of the skipped one is UNVERIFIED:
// here it stays, retried on its own schedule). A head past MAX_DELIVERY_AGE (3 days) or
// MAX_ATTEMPTS (10) is dropped undelivered.
type mailboxSim struct {
	t         *testing.T
	schema    string
	receiver  func(mailbox string, id int64) error
	skips     []string         // providers that skip failures (Sentry's default since Aug 2026)
	delivered map[int64]bool   // ids delivered
	dropped   map[int64]string // ids Sentry dropped undelivered, and why
}

func newMailboxSim(t *testing.T, schema string, receiver func(mailbox string, id int64) error) *mailboxSim {
	return &mailboxSim{t: t, schema: schema, receiver: receiver, skips: []string{"github", "github_enterprise", "bitbucket", "bitbucket_server", "gitlab"},
		delivered: map[int64]bool{}, dropped: map[int64]string{}}
}

func (m *mailboxSim) exec(q string, args ...any) {
	m.t.Helper()
	if _, err := testdb.Pool(m.t).Exec(ctx(m.t), strings.ReplaceAll(q, "{{W}}", pgx.Identifier{m.schema, "hybridcloud_webhookpayload"}.Sanitize()), args...); err != nil {
		m.t.Fatal(err)
	}
}

// seed inserts n payloads of mailbox (provider:identifier) received from at, step apart
// (ids increase with date_added, as Sentry writes them), the first failed attempts times.
func (m *mailboxSim) seed(mailbox string, n int, at time.Time, step time.Duration, attempts int, next time.Time) {
	m.t.Helper()
	provider, _, _ := strings.Cut(mailbox, ":")
	m.exec(`INSERT INTO {{W}} (mailbox_name, provider, destination_type, region_name, integration_id, date_added, schedule_for, attempts,
	                      request_method, request_path, request_headers, request_body)
	        SELECT $1, $2, 'sentry_region', 'us', 1, $3::timestamptz + g * $4::interval,
	               CASE WHEN g = 0 AND $5 > 0 THEN $6::timestamptz ELSE '2016-08-01 00:00:00+00' END, CASE WHEN g = 0 THEN $5 ELSE 0 END,
	               'POST', '/extensions/webhook/', '{"Content-Type":"application/json"}', '{"n":' || g || '}'
	          FROM generate_series(0, $7 - 1) g ORDER BY g`,
		mailbox, provider, at, step.String(), attempts, next, n)
}

// ids are the payload ids now queued, per mailbox.
func (m *mailboxSim) ids() map[string][]int64 {
	m.t.Helper()
	rows, err := testdb.Pool(m.t).Query(ctx(m.t), `SELECT mailbox_name, array_agg(id ORDER BY id) FROM `+pgx.Identifier{m.schema, "hybridcloud_webhookpayload"}.Sanitize()+` GROUP BY 1`)
	if err != nil {
		m.t.Fatal(err)
	}
	out := map[string][]int64{}
	for rows.Next() {
		var name string
		var ids []int64
		if err := rows.Scan(&name, &ids); err != nil {
			m.t.Fatal(err)
		}
		out[name] = ids
	}
	return out
}

// tick is one run of Sentry's drain over every mailbox at now.
func (m *mailboxSim) tick(now time.Time) {
	m.t.Helper()
	type head struct {
		id       int64
		mailbox  string
		provider string
		added    time.Time
		due      time.Time
		attempts int
	}
	for name := range m.ids() {
		skipped := []int64{} // not nil: id <> ALL(NULL) is never true
		for range 300 {
			var h head
			err := testdb.Pool(m.t).QueryRow(ctx(m.t), `SELECT id, mailbox_name, coalesce(provider, ''), date_added, schedule_for, attempts FROM `+
				pgx.Identifier{m.schema, "hybridcloud_webhookpayload"}.Sanitize()+` WHERE mailbox_name = $1 AND id <> ALL($2) ORDER BY id LIMIT 1`, name, skipped).
				Scan(&h.id, &h.mailbox, &h.provider, &h.added, &h.due, &h.attempts)
			if err == pgx.ErrNoRows {
				break
			}
			if err != nil {
				m.t.Fatal(err)
			}
			if now.Sub(h.added) >= 72*time.Hour || h.attempts >= 10 {
				m.dropped[h.id] = fmt.Sprintf("age %s, %d attempts", now.Sub(h.added).Round(time.Minute), h.attempts)
				m.exec(`DELETE FROM {{W}} WHERE id = $1`, h.id)
				continue
			}
			if h.due.After(now) {
				break // head-of-line: the mailbox waits for its head
			}
			if err := m.receiver(h.mailbox, h.id); err != nil {
				backoff := min(3*math.Pow(1.4, float64(h.attempts)), 60)
				m.exec(`UPDATE {{W}} SET attempts = attempts + 1, schedule_for = $2 WHERE id = $1`, h.id, now.Add(time.Duration(backoff*float64(time.Minute))))
				if slices.Contains(m.skips, h.provider) {
					skipped = append(skipped, h.id)
					continue
				}
				break
			}
			m.delivered[h.id] = true
			m.exec(`DELETE FROM {{W}} WHERE id = $1`, h.id)
		}
	}
}

// mailboxFindings runs doctor --check mailboxes and decodes its findings.
func (in *incident) mailboxFindings() []finding {
	in.t.Helper()
	in.commands = append(in.commands, "outboxctl doctor --check mailboxes")
	_, out, errOut := in.main("--schema", in.schema, "doctor", "--check", "mailboxes", "-o", "json")
	var fs []finding
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		in.t.Fatalf("doctor: %v\n%s\n%s", err, out, errOut)
	}
	return fs
}

// removes says a printed command line would remove payloads.
func removes(line string) bool {
	for _, w := range []string{" skip ", " delete", " drain ", " compact "} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// checkPrinted asserts the rule on every printed command: none removes a payload (no
// mailbox finding carries evidence that proves a removal), and the first is a read.
func checkPrinted(t *testing.T, fs []finding) {
	t.Helper()
	for _, f := range fs {
		for i, line := range f.Next {
			if removes(line) {
				t.Errorf("finding %q prints a command that removes payloads without evidence: %q", f.Summary, line)
			}
			words, err := shellWords(line)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && !readOnly(words) {
				t.Errorf("finding %q's next command is not a read: %q", f.Summary, line)
			}
		}
	}
}

func mailboxesOf(fs []finding, short string) []finding {
	var out []finding
	for _, f := range fs {
		if f.Check == "mailboxes" && strings.Contains(f.Summary, short) {
			out = append(out, f)
		}
	}
	return out
}

// A mailbox blocked behind a failing head: jira:7's head failed 5 times while the receiver
// was down, 20 healthy payloads wait behind it; slack:1 delivers meanwhile. doctor names the
// mailbox with a read first (inspect mailbox), then the reschedule's dry run; the operator,
// the receiver fixed, runs them (the reschedule with --yes), Sentry's drain delivers, and no
// healthy payload is lost: every seeded payload was delivered, none dropped, none archived.
func TestGalleryMailboxBlockedBehindHead(t *testing.T) {
	for _, era := range fixture.Eras {
		t.Run(string(era), func(t *testing.T) {
			in := &incident{t: t, schema: testdb.Schema(t, fixture.Options{Era: era}), state: t.TempDir()}
			t.Setenv("XDG_STATE_HOME", in.state)
			down := true // jira's receiver
			sim := newMailboxSim(t, in.schema, func(mailbox string, _ int64) error {
				if down && mailbox == "jira:7" {
					return fmt.Errorf("receiver down")
				}
				return nil
			})
			now := time.Now()
			sim.seed("jira:7", 21, now.Add(-2*time.Hour), time.Minute, 5, now.Add(40*time.Minute))
			sim.seed("slack:1", 5, now.Add(-10*time.Minute), time.Minute, 0, time.Time{})
			seeded := sim.ids()
			sim.tick(now)
			if len(sim.ids()["jira:7"]) != 21 || len(sim.ids()["slack:1"]) != 0 {
				t.Fatalf("before the operator: jira:7 blocked, slack:1 delivered: %v", sim.ids())
			}
			fs := in.mailboxFindings()
			blocked := mailboxesOf(fs, "has been blocked behind head")
			if len(blocked) != 1 || !strings.Contains(blocked[0].Summary, "mailbox jira:7") || blocked[0].Severity != "warn" ||
				blocked[0].Evidence["head_id"] != float64(seeded["jira:7"][0]) || blocked[0].Evidence["depth"] != float64(21) {
				t.Fatalf("doctor: want one blocked-mailbox finding for jira:7's head: %+v", fs)
			}
			checkPrinted(t, fs)
			if len(blocked[0].Next) != 2 || !strings.Contains(blocked[0].Next[0], " inspect mailbox jira:7") || !strings.Contains(blocked[0].Next[1], " reschedule --mailbox jira:7 ") {
				t.Fatalf("blocked mailbox's commands: %q", blocked[0].Next)
			}
			down = false // the receiver is fixed
			for _, line := range blocked[0].Next {
				in.run(strings.Replace(line, " --dry-run", "", 1))
			}
			sim.tick(time.Now().Add(time.Second))
			if left := sim.ids(); len(left) != 0 {
				t.Fatalf("payloads left after the reschedule and a drain: %v", left)
			}
			for _, id := range append(seeded["jira:7"], seeded["slack:1"]...) {
				if !sim.delivered[id] {
					t.Errorf("payload %d was not delivered (dropped: %q)", id, sim.dropped[id])
				}
			}
			for _, f := range in.mailboxFindings() {
				if f.Severity != "ok" {
					t.Errorf("doctor still reports: %s", f.Summary)
				}
			}
		})
	}
}

// A provider that skips failures: github:9's head failed 3 times and the drain went on past
// it (12 behind it delivered). It is not called blocked: doctor warns that heads of a
// skipping provider are failing (its payloads are at risk, not held), and prints a listing.
func TestGalleryMailboxSkippingProviderIsNotBlocked(t *testing.T) {
	in := &incident{t: t, schema: testdb.Schema(t, fixture.Options{Era: fixture.EraCurrent}), state: t.TempDir()}
	t.Setenv("XDG_STATE_HOME", in.state)
	now := time.Now()
	var failing int64
	sim := newMailboxSim(t, in.schema, func(_ string, id int64) error {
		if id == failing {
			return fmt.Errorf("receiver rejects this payload")
		}
		return nil
	})
	sim.seed("github:9", 13, now.Add(-90*time.Minute), time.Minute, 3, now.Add(-time.Minute))
	failing = sim.ids()["github:9"][0]
	sim.tick(now)
	if got := sim.ids()["github:9"]; len(got) != 1 || got[0] != failing {
		t.Fatalf("the drain should skip the failing head and deliver the rest: %v", got)
	}
	fs := in.mailboxFindings()
	if b := mailboxesOf(fs, "has been blocked"); len(b) != 0 {
		t.Fatalf("a skipping provider's mailbox is called blocked: %+v", b)
	}
	skip := mailboxesOf(fs, "providers that skip failures, are failing")
	if len(skip) != 1 || skip[0].Severity != "warn" || !strings.Contains(skip[0].Summary, "github") || len(skip[0].Next) != 1 ||
		!strings.Contains(skip[0].Next[0], " mailboxes --provider github") {
		t.Fatalf("doctor: want the skip-on-failure warning listing github's mailboxes: %+v", fs)
	}
	checkPrinted(t, fs)
	in.run(skip[0].Next[0])
	if got := sim.ids()["github:9"]; len(got) != 1 {
		t.Fatalf("a printed read changed the mailbox: %v", got)
	}
}

// INC-2324's shape: a GitHub check_suite backlog of 30,000 payloads in one mailbox, received
// within the hour, draining slower than it fills. doctor names it a large mailbox, counted
// exactly up to --mailbox-large; every printed command is a read, and running them all
// deletes nothing.
func TestGalleryMailboxBacklog(t *testing.T) {
	in := &incident{t: t, schema: testdb.Schema(t, fixture.Options{Era: fixture.EraCurrent}), state: t.TempDir()}
	t.Setenv("XDG_STATE_HOME", in.state)
	sim := newMailboxSim(t, in.schema, func(string, int64) error { return nil })
	sim.seed("github:4242", 30_000, time.Now().Add(-time.Hour), 100*time.Millisecond, 0, time.Time{})
	fs := in.mailboxFindings()
	large := mailboxesOf(fs, "mailbox github:4242 holds about")
	if len(large) != 1 || large[0].Severity != "warn" || large[0].Evidence["depth_at_least_or_estimated"].(float64) < 10_000 {
		t.Fatalf("doctor: want github:4242 as a large mailbox: %+v", fs)
	}
	checkPrinted(t, fs)
	for _, f := range fs {
		for _, line := range f.Next {
			in.run(line)
		}
	}
	if n := len(sim.ids()["github:4242"]); n != 30_000 {
		t.Fatalf("the printed commands removed payloads: %d left of 30000", n)
	}
	// --mailbox-large moves the threshold: at 50,000 the backlog is no finding.
	_, out, _ := in.main("--schema", in.schema, "doctor", "--check", "mailboxes", "--mailbox-large", "50000", "-o", "json")
	if strings.Contains(out, "holds about") {
		t.Fatalf("--mailbox-large 50000 still reports the 30,000-payload mailbox:\n%s", out)
	}
}

// A head near the 3-day MAX_DELIVERY_AGE: slack:3's head arrived 2 days 20 hours ago and
// keeps failing. doctor says Sentry drops it undelivered within hours (critical), first with
// a read; nothing it prints removes it. Past the age, Sentry's drain drops it itself.
func TestGalleryMailboxNearDrop(t *testing.T) {
	in := &incident{t: t, schema: testdb.Schema(t, fixture.Options{Era: fixture.EraMay2026}), state: t.TempDir()}
	t.Setenv("XDG_STATE_HOME", in.state)
	sim := newMailboxSim(t, in.schema, func(string, int64) error { return fmt.Errorf("receiver down") })
	now := time.Now()
	sim.seed("slack:3", 4, now.Add(-68*time.Hour), time.Minute, 9, now.Add(30*time.Minute))
	head := sim.ids()["slack:3"][0]
	fs := in.mailboxFindings()
	var near []finding
	for _, f := range fs {
		if f.Severity == "crit" && strings.Contains(f.Summary, "slack:3") {
			near = append(near, f)
		}
	}
	if len(near) != 1 || near[0].Evidence["head_id"] != float64(head) || !strings.Contains(near[0].Next[0], " inspect mailbox slack:3") {
		t.Fatalf("doctor: want one critical finding for slack:3's head near the drop: %+v", fs)
	}
	checkPrinted(t, fs)
	// With --mailbox-near-drop 1h the head (4 hours from its drop) is no longer critical for
	// its age alone.
	_, out, _ := in.main("--schema", in.schema, "doctor", "--check", "mailboxes", "--mailbox-near-drop", "1h", "-o", "json")
	if strings.Contains(out, "Sentry drops it undelivered") {
		t.Fatalf("--mailbox-near-drop 1h still reports the head 4 hours from its drop:\n%s", out)
	}
	sim.tick(now.Add(5 * time.Hour))
	if _, ok := sim.dropped[head]; !ok {
		t.Fatalf("Sentry's drain did not drop the head past MAX_DELIVERY_AGE: %v", sim.ids())
	}
}
