package cmd_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/testtmux"
)

// TestShardsWatchInTmux runs `shards --watch 1s` on a real terminal (tmux) against a test
// schema: a frame with the shard and when it was taken, then, after rows are added, the
// change since the last frame; q quits with exit status 0 and the main screen comes back.
func TestShardsWatchInTmux(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 7})
	s := newTmux(t, 200, 20)
	s.Command("printf 'main screen\\n'")
	s.Command(fmt.Sprintf("outboxctl --dsn '%s' --schema %s shards --watch 1s; echo rc=$?", testdb.DSN(), schema))
	screen := s.Wait(regexp.MustCompile(`ORGANIZATION_SCOPE`))
	if !strings.Contains(screen, "Every 1s: shards") || !strings.Contains(screen, "taken 20") || strings.Contains(screen, "main screen") {
		t.Fatalf("no frame on the alternate screen saying when it was taken:\n%s", screen)
	}
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 8},
		testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 9})
	// The shard's row: scope, shard, depth 3, +2 since the last frame, then the rate.
	s.Wait(regexp.MustCompile(`(?m)^ORGANIZATION_SCOPE\s+42\s+3\s+\+2\s`))
	s.Keys("q") // the watch reads raw keys from before its first frame
	screen = s.WaitDone()
	if exitStatus(screen) != "0" || !strings.Contains(screen, "main screen") || strings.Contains(screen, "Every 1s") {
		t.Fatalf("not exit 0 with the main screen restored:\n%s", screen)
	}
}

// TestWatchKeepsColumnsInPlaceInTmux: a fan-out watch over a cell context and a control one
// puts region_name (the control context's alone) where the control context prints it,
// right after the context column; when the cell context fails for a frame, and when it
// answers again, every column stays where the first frame had it.
func TestWatchKeepsColumnsInPlaceInTmux(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	us, de := testdb.Schema(t, fixture.Options{}), testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, us, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 7})
	testdb.Insert(t, de, "sentry_controloutbox", testdb.Row{Scope: 1, Shard: 9, Category: 0, Object: 9, Cell: "de"})
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  de:\n    dsn: %[1]s\n    schema: %[3]s\n    silo: control\n",
		testdb.DSN(), us, de))
	s := newTmux(t, 250, 20)
	s.Command(fmt.Sprintf("OUTBOXCTL_CONFIG=%s outboxctl --context us,de shards --watch 1s; echo rc=$?", config))
	usRow, deRow := regexp.MustCompile(`(?m)^us\s+ORGANIZATION_SCOPE\s+42\s`), regexp.MustCompile(`(?m)^de\s+(de\s+)?USER_SCOPE\s+9\s`)
	header := regexp.MustCompile(`(?m)^CONTEXT\s+CELL\s+SCOPE\s+SHARD\s+DEPTH\s`)
	check := func(when string, screen string) {
		t.Helper()
		if !header.MatchString(screen) {
			t.Fatalf("%s: the columns moved (want CONTEXT CELL SCOPE SHARD DEPTH …):\n%s", when, screen)
		}
	}
	check("both contexts", s.WaitFor("a frame with both contexts", func(sc string) bool { return usRow.MatchString(sc) && deRow.MatchString(sc) }))
	rename := func(from, to string) {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf("ALTER TABLE %s.%s RENAME TO %s", us, from, to)); err != nil {
			t.Fatal(err)
		}
	}
	rename("sentry_regionoutbox", "sentry_regionoutbox_away")
	check("the cell context gone", s.WaitFor("a frame with the cell context gone", func(sc string) bool {
		return !usRow.MatchString(sc) && deRow.MatchString(sc) && strings.Contains(sc, "context gone: us")
	}))
	rename("sentry_regionoutbox_away", "sentry_regionoutbox")
	check("the cell context back", s.WaitFor("a frame with the cell context back", func(sc string) bool {
		return usRow.MatchString(sc) && deRow.MatchString(sc) && !strings.Contains(sc, "context gone")
	}))
	s.Keys("q")
	if screen := s.WaitDone(); exitStatus(screen) != "0" {
		t.Fatalf("q: not exit 0:\n%s", screen)
	}
}
