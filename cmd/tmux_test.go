package cmd_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/testtmux"
)

// newTmux is a real terminal of width × height running an interactive sh that has printed
// its first prompt, with outboxctl (the test binary, put there by testscript.Main) on PATH.
func newTmux(t *testing.T, width, height int) *testtmux.Session {
	t.Helper()
	if _, err := exec.LookPath("outboxctl"); err != nil {
		t.Fatalf("outboxctl is not on PATH (testscript.Main puts the test binary there): %v", err)
	}
	return testtmux.Shell(t, width, height, "NO_COLOR=1")
}

// exitStatus is the status `echo rc=$?` printed last on screen (the typed command that
// contains it does not match), or "" when there is none.
func exitStatus(screen string) string {
	m := exited.FindAllStringSubmatch(screen, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

var exited = regexp.MustCompile(`(?m)^rc=([0-9]+)$`)

// seedDemo seeds the demo incident in a schema of its own, dropped when the test ends.
func seedDemo(t *testing.T) string {
	t.Helper()
	schema := testdb.NewSchemaName()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fixture.Seed(ctx, testdb.Pool(t), fixture.DemoOptions{Schema: schema, Rows: 20000, Shards: 2000}); err != nil {
		t.Fatalf("seeding demo: %v", err)
	}
	t.Cleanup(func() { testdb.Drop(t, schema) })
	return schema
}

// TestShardsFitRealTerminal runs `shards --stuck` in real terminals of 80, 120 and 200
// columns: no line is wider than the terminal, and what a narrow one hides is named.
func TestShardsFitRealTerminal(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	schema := seedDemo(t)
	// Whether the state sentence fits 120 columns depends on the demo's random times; at 80
	// it never does (the narrow columns dropped before it come back), at 200 it always does.
	for _, tt := range []struct {
		width  int
		hidden string // how the stderr note starts
		exact  bool   // whether the note is exactly hidden
		detail string // whether the state sentence is shown: yes, no or either
	}{
		{80, "-o wide shows 3 hidden column(s): category_names, coalesce_groups, detail", true, "no"},
		{120, "-o wide shows ", false, "either"},
		{200, "-o wide shows 1 hidden column(s): category_names", true, "yes"},
	} {
		s := newTmux(t, tt.width, 60)
		s.Command(fmt.Sprintf("outboxctl --dsn '%s' --schema %s shards --stuck --limit 10; echo rc=$?", testdb.DSN(), schema))
		screen := s.WaitDone()
		if exitStatus(screen) != "0" || !strings.Contains(screen, "SCOPE") || !strings.Contains(screen, "4242") {
			t.Errorf("%d columns: no listing:\n%s", tt.width, screen)
		}
		for _, line := range strings.Split(screen, "\n") {
			if strings.Contains(line, "outboxctl --dsn") {
				continue // the typed command line, not output
			}
			if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > tt.width {
				t.Errorf("%d columns: a line of %d:\n%s", tt.width, n, line)
			}
		}
		note := tt.hidden
		if tt.exact {
			note += "\n"
		}
		// The capped shard's state survives any narrowing (STATE is never dropped).
		if !strings.Contains(screen, "at 1 h cap: poison message?") {
			t.Errorf("%d columns: the poison shard's state lost its cap flag:\n%s", tt.width, screen)
		}
		if !strings.Contains(screen, "\n"+note) || !strings.Contains(screen, "category_names") || tt.detail != "either" && strings.Contains(screen, "DETAIL") != (tt.detail == "yes") {
			t.Errorf("%d columns: want note %q, detail %s:\n%s", tt.width, tt.hidden, tt.detail, screen)
		}
	}
}

// TestPromptInRealTerminal answers reschedule's prompt through the keyboard: N changes
// nothing (one cancel line, exit 2), y makes every row of the shard due (THE_PAST).
func TestPromptInRealTerminal(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	schema := seedDemo(t)
	schedule := func() string {
		var s string
		q := fmt.Sprintf("SELECT string_agg(scheduled_for::text, ',' ORDER BY id) FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d",
			pgx.Identifier{schema}.Sanitize(), fixture.DemoPoisonShard)
		if err := testdb.Pool(t).QueryRow(context.Background(), q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := schedule()
	if strings.Contains(before, "2016-08-01") {
		t.Fatalf("the poison shard is not in backoff: %s", before)
	}
	prompt := regexp.MustCompile(`(?m)^Proceed\? \[y/N\] *$`)
	s := newTmux(t, 120, 40)
	command := fmt.Sprintf("outboxctl --dsn '%s' --schema %s reschedule organization %d --reason t; echo rc=$?", testdb.DSN(), schema, fixture.DemoPoisonShard)
	s.Command(command)
	s.Wait(prompt)
	s.Type("n")
	screen := s.WaitDone()
	if !strings.Contains(screen, "Proceed? [y/N] n\nError: cancelled: nothing was changed\nrc=2") || strings.Contains(screen, "--help") || schedule() != before {
		t.Fatalf("declined: schedule changed or wrong output:\n%s", screen)
	}
	s.Command("clear")
	s.Command(command)
	s.Wait(prompt)
	s.Type("y")
	screen = s.WaitDone()
	after := schedule()
	n := strings.Count(before, ",") + 1
	if exitStatus(screen) != "0" || after != strings.TrimSuffix(strings.Repeat("2016-08-01 00:00:00+00,", n), ",") {
		t.Fatalf("accepted: schedule %q, screen:\n%s", after, screen)
	}
}

// TestPromptTakesNoConsentFromAPipe: `yes | outboxctl compact …` in a real terminal has a
// terminal on stderr only; the prompt must not read its y from the pipe (both ends must be
// terminals), so compact refuses with the --yes usage error, exit 2, and deletes nothing.
func TestPromptTakesNoConsentFromAPipe(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	schema := seedDemo(t)
	rows := func() int {
		var n int
		q := fmt.Sprintf("SELECT count(*) FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d",
			pgx.Identifier{schema}.Sanitize(), fixture.DemoHotShard)
		if err := testdb.Pool(t).QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := rows()
	s := newTmux(t, 200, 40)
	s.Command(fmt.Sprintf("yes | outboxctl --dsn '%s' --schema %s compact organization %d --reason t; echo rc=$?", testdb.DSN(), schema, fixture.DemoHotShard))
	screen := s.WaitDone()
	if exitStatus(screen) != "2" || !strings.Contains(screen, "Error: `--yes` required when not running interactively") || strings.Contains(screen, "Proceed?") || rows() != before {
		t.Fatalf("rows %d → %d, screen:\n%s", before, rows(), screen)
	}
}
