package backfill

import (
	"errors"
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

// TestSentryScenarios feeds the stored cursor and option of Sentry's own backfill tests
// (reference §4.2) to Classify and checks the state outboxctl reports for each.
func TestSentryScenarios(t *testing.T) {
	t.Parallel()
	tables := Registered(nil)
	org, _ := Lookup(tables, "sentry_organization") // coded 4
	authIdentity, _ := Lookup(tables, "sentry_authidentity")
	user, _ := Lookup(tables, "auth_user")
	for _, tt := range []struct {
		name  string
		in    Input
		state State
		done  bool
	}{
		// B1: the option at its default 0 gates every backfill; set to the coded version, it runs.
		{"B1-OptionDefault", Input{Table: org}, StateGated, false},
		{"B1-OptionAtCoded", Input{Table: org, Option: i64(4)}, StateNotStarted, false},
		// B3: a finished walk stores coded + 1; a second run without a version bump does nothing.
		{"B3-Finished", Input{Table: authIdentity, Option: i64(2), Cursor: &Cursor{0, 3}}, StateComplete, true},
		// B3, second half: the coded version raised (to 10000) and the option with it: restart.
		{"B3-Bumped", Input{Table: Table{Name: "sentry_authidentity", Silo: Control, Coded: 10000}, Option: i64(10000), Cursor: &Cursor{0, 3}}, StatePending, false},
		// B6: an advancing batch writes (up + 1, version).
		{"B6-Advancing", Input{Table: user, Option: i64(2), Cursor: &Cursor{3, 2}, MaxID: i64(5)}, StateInProgress, false},
		// B7: a missing row reads as (0, 1).
		{"B7-Missing", Input{Table: user, Option: i64(2)}, StateNotStarted, false},
		// B8: (10, 1) then (20, 2) in place: at target 2 it is in progress.
		{"B8-InPlace", Input{Table: user, Option: i64(2), Cursor: &Cursor{20, 2}, MaxID: i64(100)}, StateInProgress, false},
		// B10: stored (0, coded + 1): the walk stops.
		{"B10-Finished", Input{Table: org, Option: i64(4), Cursor: &Cursor{0, 5}}, StateComplete, true},
		// B11: stored (10^9, 0) with the target at the coded version: the walk restarts below 10^9.
		{"B11-Bump", Input{Table: user, Option: i64(2), Cursor: &Cursor{1_000_000_000, 0}, MaxID: i64(3)}, StatePending, false},
		// Self-hosted bypasses the option.
		{"SelfHosted", Input{Table: org, SelfHosted: true}, StateNotStarted, false},
		// The option below the coded version holds a half-done walk.
		{"GatedMidWalk", Input{Table: org, Option: i64(3), Cursor: &Cursor{500, 4}}, StateGated, false},
		// A cursor past max(id): the next batch would mark the table complete having done nothing.
		{"BeyondMax", Input{Table: user, Option: i64(2), Cursor: &Cursor{900, 2}, MaxID: i64(10)}, StateBeyondMax, false},
		{"Malformed", Input{Table: user, Option: i64(2), CursorErr: errors.New("not a JSON [low, version] pair")}, StateMalformed, false},
	} {
		got := Classify(tt.in)
		if got.State != tt.state || got.Complete != tt.done {
			t.Errorf("%s: %+v, want %s (complete %v)", tt.name, got, tt.state, tt.done)
		}
	}
}

func TestTarget(t *testing.T) {
	t.Parallel()
	org := Table{Name: "sentry_organization", Coded: 4}
	if got := Target(Input{Table: org, Option: i64(99)}); got != 4 {
		t.Errorf("min(option, coded) = %d", got)
	}
	if got := Target(Input{Table: org}); got != 0 {
		t.Errorf("unset option = %d, want 0", got)
	}
}

func TestRegisteredAndOverrides(t *testing.T) {
	t.Parallel()
	tables := Registered(nil)
	if len(tables) != 22 {
		t.Fatalf("%d registered tables, want 22", len(tables))
	}
	for name, want := range map[string]int64{"sentry_organization": 4, "sentry_apikey": 3, "sentry_authidentity": 2, "auth_user": 2, "sentry_team": 1} {
		if tb, _ := Lookup(tables, name); tb.Coded != want {
			t.Errorf("%s coded %d, want %d", name, tb.Coded, want)
		}
	}
	over, err := ParseCoded([]string{"sentry_team=3", "sentry_newthing=2"})
	if err != nil {
		t.Fatal(err)
	}
	tables = Registered(over)
	if tb, _ := Lookup(tables, "sentry_team"); tb.Coded != 3 {
		t.Error("override ignored")
	}
	if _, ok := Lookup(tables, "sentry_newthing"); !ok {
		t.Error("new table not added")
	}
	for _, bad := range []string{"x", "x=", "=2", "x=0", "x=y"} {
		if _, err := ParseCoded([]string{bad}); err == nil {
			t.Errorf("--coded %q accepted", bad)
		}
	}
}

func TestParseRedisCursor(t *testing.T) {
	t.Parallel()
	if c, err := ParseRedisCursor("[12345,3]"); err != nil || c != (Cursor{12345, 3}) {
		t.Fatal(c, err)
	}
	for _, bad := range []string{"", "[1]", "[1,2,3]", `["a",1]`, "{}", "[1.5,2]"} {
		if _, err := ParseRedisCursor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCompleteSaysWhatRan covers the example (stored (0, 5), option 3, coded 4) and
// what the stored state can and cannot tell about the version a completed walk ran at.
func TestCompleteSaysWhatRan(t *testing.T) {
	t.Parallel()
	org := Table{Name: "sentry_organization", Silo: Cell, Coded: 4}
	finished := time.Date(2026, 9, 20, 12, 0, 0, 0, time.UTC)
	before, after := finished.Add(-time.Hour), finished.Add(time.Hour)
	for _, tt := range []struct {
		name   string
		in     Input
		state  State
		done   bool
		walked int64 // -1: not known
		note   string
	}{
		{"OptionUnchangedBelowCoded", Input{Table: org, Option: i64(3), Cursor: &Cursor{0, 5}, OptionUpdated: before, CursorUpdated: finished},
			StateSkipped, false, 3, "the walk ran at version 3 (option 3, unchanged since it finished) but stored 5 = coded 4 + 1: version 4's walk will never run; raising the option does not start it (only a new coded version or resetting the cursor to (0, 4) does)"},
		{"OptionChangedSince", Input{Table: org, Option: i64(3), Cursor: &Cursor{0, 5}, OptionUpdated: after, CursorUpdated: finished},
			StateComplete, true, -1, "the walk's version is not stored: if the option was already 3 when it finished, it ran at version 3 and version 4's walk will never run (raising the option does not start it)"},
		{"RedisNoDates", Input{Table: org, Option: i64(3), Cursor: &Cursor{0, 5}},
			StateComplete, true, -1, "the walk's version is not stored: if the option was already 3 when it finished, it ran at version 3 and version 4's walk will never run (raising the option does not start it)"},
		{"OptionAtCodedUnchanged", Input{Table: org, Option: i64(4), Cursor: &Cursor{0, 5}, OptionUpdated: before, CursorUpdated: finished},
			StateComplete, true, 4, ""},
		{"OptionAboveCodedUnchanged", Input{Table: org, Option: i64(9), Cursor: &Cursor{0, 5}, OptionUpdated: before, CursorUpdated: finished},
			StateComplete, true, 4, ""},
		{"OptionAtCodedRedis", Input{Table: org, Option: i64(4), Cursor: &Cursor{0, 5}},
			StateComplete, true, -1, "the walk's version is not stored: 4, or lower if the option was below 4 when it finished"},
		{"SelfHosted", Input{Table: org, SelfHosted: true, Cursor: &Cursor{0, 5}}, StateComplete, true, 4, ""},
		{"UnsetOption", Input{Table: org, Cursor: &Cursor{0, 5}, CursorUpdated: finished},
			StateComplete, true, -1, "the walk's version is not stored: if the option was already 0 when it finished, it ran at version 0 and version 4's walk will never run (raising the option does not start it)"},
	} {
		got := Classify(tt.in)
		walked := int64(-1)
		if got.Walked != nil {
			walked = *got.Walked
		}
		if got.State != tt.state || got.Complete != tt.done || walked != tt.walked || got.Note != tt.note {
			t.Errorf("%s: %s complete=%v walked=%d note=%q\nwant %s complete=%v walked=%d note=%q", tt.name, got.State, got.Complete, walked, got.Note, tt.state, tt.done, tt.walked, tt.note)
		}
	}
}

func TestParseRedisCursorErrors(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"[0,1]": "", "[12345, 3]": "", " [1,2]\n": "",
		"[1, 2] x": "text after the JSON [low, version] pair", "[1,2][3,4]": "text after the JSON [low, version] pair",
		"not json": "not a JSON [low, version] pair", "[1]": "not a JSON [low, version] pair", "[1,2,3]": "not a JSON [low, version] pair",
		`["1",2]`: "not a pair of integers", "[1.5,2]": "not a pair of integers", "[1,99999999999999999999]": "not a pair of integers",
		"": "not a JSON [low, version] pair", "null": "not a JSON [low, version] pair",
	} {
		_, err := ParseRedisCursor(raw)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ParseRedisCursor(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestGateOf(t *testing.T) {
	four, two := int64(4), int64(2)
	org := Table{Name: "sentry_organization", Silo: Cell, Coded: 4}
	cases := []struct {
		name string
		in   Input
		want Gate
	}{
		{"unset: Sentry's default 0 holds it", Input{Table: org}, Gate{Held: true, Default: true, Value: 0, Target: 0, Coded: 4}},
		{"set below coded", Input{Table: org, Option: &two}, Gate{Held: true, Value: 2, Target: 2, Coded: 4}},
		{"set at coded", Input{Table: org, Option: &four}, Gate{Held: false, Value: 4, Target: 4, Coded: 4}},
		{"self-hosted ignores the option", Input{Table: org, SelfHosted: true}, Gate{Held: false, Default: true, Target: 4, Coded: 4}},
		{"a finished walk stays gated", Input{Table: org, Option: &two, Cursor: &Cursor{Low: 0, Version: 5}}, Gate{Held: true, Value: 2, Target: 2, Coded: 4}},
	}
	for _, c := range cases {
		if got := GateOf(c.in); got != c.want {
			t.Errorf("%s: GateOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}
