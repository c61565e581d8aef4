package cmd_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/testtmux"
)

// TestDrainProgressMovesInRealTerminal: in a real terminal the drain's progress line moves
// while it delivers (two captures show different counts on the same line), and ends in the
// summary line with exit 0.
func TestDrainProgressMovesInRealTerminal(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
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

// TestDrainClaimLineInRealTerminal: while the claim's one UPDATE runs (here held up by a
// row lock another session keeps on the shard's last row, as a 2M-row rewrite would take
// tens of seconds), a real terminal shows what drain is doing and the elapsed time, moving,
// before anything is delivered; once the lock goes, the claim's summary and the drain's.
func TestDrainClaimLineInRealTerminal(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for i := range 5 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: int64(i), Payload: testdb.Str(`{"i": 1}`)})
	}
	ids := testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
	ctx := context.Background()
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+schema+".sentry_regionoutbox WHERE id = $1 FOR UPDATE", ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 120, 40)
	s.Command(fmt.Sprintf("outboxctl --dsn '%s' --schema %s drain organization 1 --yes --handler 'exec:cat >/dev/null' >/dev/null; echo rc=$?", testdb.DSN(), schema))
	line := regexp.MustCompile(`drain: claiming ORGANIZATION_SCOPE/1 \(one UPDATE of its ~5 rows\)  ([0-9.]+m?s)`)
	first := line.FindStringSubmatch(s.Wait(line))[1]
	screen := s.WaitFor("the claim's elapsed time to move from "+first, func(screen string) bool {
		m := line.FindStringSubmatch(screen)
		return m != nil && m[1] != first
	})
	if regexp.MustCompile(`(?m)^delivered `).MatchString(screen) {
		t.Fatalf("delivered before the claim ended:\n%s", screen)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	screen = s.WaitDone()
	done := regexp.MustCompile(`drain: claiming ORGANIZATION_SCOPE/1 \(one UPDATE of its ~5 rows\): done in [0-9.]+m?s\s*\ndelivered 5 in `)
	if exitStatus(screen) != "0" || !done.MatchString(screen) {
		t.Fatalf("no claim summary before the drain's, or a failure:\n%s", screen)
	}
}
