package cmd_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDrainProgressMovesInRealTerminal: in a real terminal the drain's progress line moves
// while it delivers (two captures show different counts on the same line), and ends in the
// summary line with exit 0.
func TestDrainProgressMovesInRealTerminal(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for i := range 30 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: int64(i), Payload: testdb.Str(`{"i": 1}`)})
	}
	testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
	s := newTmux(t, 120, 40)
	s.Command(fmt.Sprintf("outboxctl --dsn '%s' --schema %s drain organization 1 --yes --handler 'exec:cat >/dev/null; sleep 0.1' -o json >/dev/null; echo rc=$?", testdb.DSN(), schema))
	line := regexp.MustCompile(`delivered (\d+)/~30`)
	done := regexp.MustCompile(`delivered 30 in `)
	firstN := line.FindStringSubmatch(s.Wait(line))[1]
	s.WaitFor("the progress line to move from "+firstN, func(screen string) bool {
		// On a loaded machine the last frames can pass between two looks: the summary
		// replacing a progress line that showed fewer than 30 is the line moving too.
		m := line.FindStringSubmatch(screen)
		return m != nil && m[1] != firstN || firstN != "30" && done.MatchString(screen)
	})
	screen := s.WaitDone()
	if exitStatus(screen) != "0" || !done.MatchString(screen) {
		t.Fatalf("no summary line or a failure:\n%s", screen)
	}
}
