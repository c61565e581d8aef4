package doctor

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
)

func TestParseChecks(t *testing.T) {
	t.Parallel()
	got, err := ParseChecks([]string{"locks", " Scheduler", "xmin"})
	if err != nil || !reflect.DeepEqual(got, []string{"scheduler", "xmin", "locks"}) {
		t.Fatalf("ParseChecks = %v, %v; want run order with locks last", got, err)
	}
	if all, _ := ParseChecks(nil); !reflect.DeepEqual(all, Names) {
		t.Fatalf("no --check = %v", all)
	}
	if _, err := ParseChecks([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `unknown check "nope"`) {
		t.Fatalf("bad check: %v", err)
	}
}

// TestReplicaFinding grades a standby, which this machine cannot build (no replica runs here).
func TestReplicaFinding(t *testing.T) {
	t.Parallel()
	f64 := func(f float64) *float64 { return &f }
	bytes := int64(4096)
	for _, tt := range []struct {
		recovery bool
		lag      *float64
		want     Severity
		summary  string
	}{
		{false, nil, OK, "primary: repairs can run here"},
		{true, f64(3), OK, "standby, replay lag 3s"},
		{true, f64(120), Warn, "standby, replay lag 2m0s"},
		{true, f64(3600), Crit, "standby, replay lag 1h0m0s"},
		{true, nil, Warn, "standby that has replayed no transaction yet"},
	} {
		f := ReplicaFinding(tt.recovery, tt.lag, &bytes, "outboxctl")
		if f.Severity != tt.want || !strings.HasPrefix(f.Summary, tt.summary) {
			t.Errorf("ReplicaFinding(%v, %v) = %v %q", tt.recovery, tt.lag, f.Severity, f.Summary)
		}
		if tt.recovery && !strings.Contains(f.Summary, "repairs (drain, reschedule, compact, skip, killswitch add/remove/gate) must go to the primary") {
			t.Errorf("standby summary does not send repairs to the primary: %q", f.Summary)
		}
	}
}

func TestGrade(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	d := func(x time.Duration) *time.Duration { return &x }
	for _, tt := range []struct {
		age  *time.Duration
		xids int64
		want Severity
	}{
		{d(time.Minute), 10, OK}, {d(5 * time.Minute), 10, Warn}, {d(time.Hour), 10, Crit},
		{nil, 9_999_999, OK}, {nil, 10_000_000, Warn}, {nil, 100_000_000, Crit}, {d(time.Second), 100_000_000, Crit},
	} {
		if got := c.grade(tt.age, tt.xids); got != tt.want {
			t.Errorf("grade(%v, %d) = %v, want %v", tt.age, tt.xids, got, tt.want)
		}
	}
}

// TestUntrustedTextStaysOnOneLine: names read from the database reach suggested SQL and
// shell commands as one line, quoted, with no raw control bytes.
func TestUntrustedTextStaysOnOneLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":               "'plain'",
		"o'clock":             "'o''clock'",
		"evil\n'; DROP x; --": `E'evil\u000a''; DROP x; --'`,
		"esc\x1b[2Jback\\":    `E'esc\u001b[2Jback\\'`,
	} {
		if got := SQLString(in); got != want {
			t.Errorf("SQLString(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"us": "us", "my cell": "'my cell'", "it's": `'it'\''s'`, "a\nb": `$'a\nb'`, "esc\x1b[2J": `$'esc\x1b[2J'`, "": "''",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := Clean("app\x1b]0;pwned\x07\r\n"); got != "app?]0;pwned???" {
		t.Errorf("Clean = %q", got)
	}
}

func TestFindingsSortAndJSON(t *testing.T) {
	t.Parallel()
	fs := []Finding{
		{Check: "schema", Severity: OK}, {Check: "xmin", Severity: Warn}, {Check: "stuck", Severity: Crit}, {Check: "locks", Severity: Warn},
	}
	Sort(fs)
	var order []string
	for _, f := range fs {
		order = append(order, f.Check)
	}
	if !reflect.DeepEqual(order, []string{"stuck", "xmin", "locks", "schema"}) || Worst(fs) != Crit || Tally(fs) != "1 critical, 2 warning(s), 1 ok" {
		t.Fatalf("order %v, worst %v, tally %q", order, Worst(fs), Tally(fs))
	}
	ev := Evidence{{"z", 1}, {"a", []int64{3, 4}}, {"at", time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)}, {"none", nil}}
	b, err := json.Marshal(ev)
	if err != nil || string(b) != `{"z":1,"a":[3,4],"at":"2026-11-30T01:02:03Z","none":null}` {
		t.Fatalf("evidence JSON = %s, %v; want keys in order", b, err)
	}
	if ev.String() != "z=1, a=[3 4], at=2026-11-30T01:02:03Z, none=null" {
		t.Fatalf("evidence text = %q", ev.String())
	}
}

func TestStalled(t *testing.T) {
	t.Parallel()
	first := map[string]backfill.Cursor{"sentry_organization": {Low: 100, Version: 4}, "auth_user": {Low: 5, Version: 2}}
	second := map[string]backfill.Cursor{"sentry_organization": {Low: 100, Version: 4}, "auth_user": {Low: 900, Version: 2}}
	fs := Stalled(first, second, 30*time.Second, "outboxctl")
	if len(fs) != 1 || fs[0].Evidence[0].Value != "sentry_organization" || fs[0].Severity != Warn ||
		!strings.Contains(fs[0].Summary, "did not move in 30s (low bound 100, version 4)") {
		t.Fatalf("Stalled = %+v, want sentry_organization only", fs)
	}
}
