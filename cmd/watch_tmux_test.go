package cmd_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestShardsWatchInTmux runs `shards --watch 1s` on a real terminal (tmux) against a test
// schema: a frame with the shard and when it was taken, then, after rows are added, the
// change since the last frame; q quits with exit status 0 and the main screen comes back.
func TestShardsWatchInTmux(t *testing.T) {
	t.Parallel()
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
