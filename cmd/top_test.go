package cmd_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedTopDemo seeds the demo incident (a poison shard at the cap, a kill-switched shard,
// unclaimed due shards) in a schema of its own.
func seedTopDemo(t *testing.T) string {
	t.Helper()
	testdb.Require(t)
	schema := randomName("outboxctl_top_")
	t.Cleanup(func() { execSQL(t, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	runCLIExpect(t, 0, "--dsn", testdb.DSN(), "--schema", schema, "demo", "seed", "--rows", "2000", "--shards", "200", "--yes")
	return schema
}

// TestTopFirstFrameShowsTheSeededIncident: top's first frame, against real PostgreSQL,
// lists the seeded incident's findings (the shard at the 1 h cap first, critical, under
// its cause) and fits 80×24 and 120×30 exactly.
func TestTopFirstFrameShowsTheSeededIncident(t *testing.T) {
	t.Parallel()
	schema := seedTopDemo(t)
	for _, size := range [][2]int{{80, 24}, {120, 30}} {
		out, _ := runCLIExpect(t, 0, "--dsn", testdb.DSN(), "--schema", schema, "top", "--once",
			"--width", fmt.Sprint(size[0]), "--height", fmt.Sprint(size[1]))
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != size[1] {
			t.Fatalf("%d×%d: %d lines:\n%s", size[0], size[1], len(lines), out)
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > size[0] {
				t.Fatalf("%d×%d: line wider than the screen: %q", size[0], size[1], l)
			}
		}
		cursor := regexp.MustCompile(`(?m)^> crit +outage_or_poison +.*1 h cap`)
		if !cursor.MatchString(out) || !strings.Contains(out, "killswitch") || !regexp.MustCompile(`data \ds old`).MatchString(out) {
			t.Fatalf("%d×%d: the first frame lacks the capped shard's cause under the cursor, the kill switch or the data's age:\n%s", size[0], size[1], out)
		}
		if size[0] == 120 && !strings.Contains(out, "ORGANIZATION_SCOPE/4242") {
			t.Fatalf("120 columns: no target column:\n%s", out)
		}
	}
}

// TestTopUsageErrors: top without a terminal, or with a bad flag, is a one-line usage error.
func TestTopUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"top"}, "top needs a terminal: for a script, use --once"},
		{[]string{"top", "--once", "--interval", "100ms"}, "`--interval` must be at least 1s"},
		{[]string{"top", "--once", "--width", "10"}, "`--width` must be at least 20"},
		{[]string{"top", "--print-sql"}, "--print-sql"},
	} {
		_, errOut := runCLIExpect(t, cmd.ExitUsage, append([]string{"--dsn", "postgres://postgres@127.0.0.1:1/x"}, c.args...)...)
		if !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut, c.want)
		}
	}
}

// TestTopInTmux plays top on a real 80-column terminal over a read-only context: the
// finding, its shard, the plan of the reschedule it printed (its --dry-run) with the
// context's refusal; the database is unchanged and q restores the screen with exit 0.
func TestTopInTmux(t *testing.T) {
	t.Parallel()
	schema := seedTopDemo(t)
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %s\n    schema: %s\n    readonly: true\n", testdb.DSN(), schema))
	before := countRows(t, schema)
	s := newTmux(t, 80, 24)
	s.Command("printf 'main screen\\n'")
	s.Command(fmt.Sprintf("OUTBOXCTL_CONFIG=%s outboxctl --context us top --interval 1s; echo rc=$?", config))
	s.Wait(regexp.MustCompile(`(?m)^> crit +outage_or_poison`))
	s.Keys("Enter")
	s.Wait(regexp.MustCompile(`its shards \(enter inspects one\)`))
	s.Keys("Enter")
	s.Wait(regexp.MustCompile(`Messages \(the head, then the newest\)`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`its shards`))
	s.Keys("R")
	screen := s.Wait(regexp.MustCompile(`What it would do`))
	s.Keys("G") // the plan's end
	screen += s.Wait(regexp.MustCompile(`dry run: nothing was changed`))
	for _, want := range []string{"--context us reschedule --stuck --at-cap", "first shards: ORGANIZATION_SCOPE/4242", "This context would refuse it: context us is read-only"} {
		if !strings.Contains(strings.ReplaceAll(screen, "\n", ""), want) {
			t.Fatalf("plan view lacks %q:\n%s", want, screen)
		}
	}
	s.Keys("q")
	screen = s.WaitDone()
	if exitStatus(screen) != "0" || !strings.Contains(screen, "main screen") {
		t.Fatalf("not exit 0 with the main screen restored:\n%s", screen)
	}
	if after := countRows(t, schema); after != before {
		t.Fatalf("top changed the outbox: %d rows, were %d", after, before)
	}
}
