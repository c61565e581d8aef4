package gallery_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/sentrysim"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// Shapes a hostile review found (each failed before its fix): deliveries that prove nothing
// about the receiver of the failing heads.

// The control silo: cell de's receiver is down, us's delivers the same category. The
// receivers deliver per cell, so us's deliveries prove nothing about de: de's heads stay
// still_failing and nothing is skipped (before: "de"'s healthy heads were called poison).
func TestGalleryOtherCellDeliveryProvesNothing(t *testing.T) {
	deDown := true
	in := &incident{t: t, schema: testdb.Schema(t, fixture.Options{Era: fixture.EraCurrent}), state: t.TempDir()}
	t.Setenv("XDG_STATE_HOME", in.state)
	in.sims = append(in.sims, sentrysim.New(testdb.Pool(t), in.schema, "sentry_controloutbox", sentrysim.Options{DeadlineRows: 5000,
		Receiver: func(m sentrysim.Message) error {
			if m.Key.Shard.Cell == "de" && deDown {
				return fmt.Errorf("cell de down")
			}
			if in.down {
				return fmt.Errorf("down")
			}
			return nil
		}}))
	start := time.Now().Add(-150 * time.Minute)
	var rows []sentrysim.Row
	for i := int64(1); i <= 6; i++ {
		cell := []string{"us", "de"}[i%2]
		rows = append(rows, row(cell, 1, i, userUpdate, i, `{"ok": 1}`, start.Add(time.Duration(i)*13*time.Minute)))
	}
	in.insert(0, rows...)
	in.snapshot()
	in.down = true
	in.history(start, 10*time.Second)
	in.down = false // us is back; de is still down
	fs := in.follow(4)
	for _, f := range fs {
		t.Logf("finding %s %s next=%q", f.Check, f.cause(), f.Next)
	}
	for _, line := range in.commands {
		t.Logf("cmd: %s", line)
	}
	paths, _ := filepath.Glob(filepath.Join(in.state, "outboxctl", "archive-*.jsonl*"))
	if n := len(sentrysim.ArchivedRows(t, paths...)); n != 0 {
		t.Errorf("%d healthy rows archived", n)
	}
}

// A one-message skip records its group in the ledger: the skipped group's newest row being
// gone is no delivery of its category (before: a later outage of that category was called
// poison because of it).
func TestGallerySkippedGroupIsNoDelivery(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	ids := in.insert(0, row("", 0, 1, authProvider, 1, `{"poison": 1}`, time.Now().Add(-2*time.Minute)))
	if code, out, e := in.main("--schema", in.schema, "reschedule", "organization", "1", "--reason", "x", "--yes"); code != 0 {
		t.Fatalf("%d %s %s", code, out, e)
	}
	in.workers() // fails: poison
	if code, out, e := in.main("--schema", in.schema, "skip", fmt.Sprint(ids[0]), "--reason", "by hand", "--yes"); code != 0 {
		t.Fatalf("%d %s %s", code, out, e)
	}
	in.insert(0, row("", 0, 10, authProvider, 10, `{"ok": 1}`, start), row("", 0, 11, authProvider, 11, `{"ok": 1}`, start.Add(20*time.Minute)))
	in.down = true
	in.history(start, time.Minute)
	in.snapshot()
	in.follow(4)
	for _, line := range in.commands {
		t.Logf("cmd: %s", line)
	}
	paths, _ := filepath.Glob(filepath.Join(in.state, "outboxctl", "archive-*.jsonl*"))
	if n := len(sentrysim.ArchivedRows(t, paths...)); n != 1 {
		t.Errorf("%d rows archived, want 1 (the hand-skipped poison)", n)
	}
}

// A large group that cannot drain within the deadline (here the simulator's 5,000-row
// budget; in production the server's speed decides) is never taken for poison: it is
// compacted, and every group's newest row is delivered (before, with a 10,000-row
// threshold, 7,000 rows were one skip).
func TestGalleryLargeGroupIsNeverPoison(t *testing.T) {
	in := newIncident(t, "sentry_regionoutbox")
	start := time.Now().Add(-3 * time.Hour)
	if _, _, err := in.sims[0].InsertGroup(ctx(t), row("", 0, 7, orgUpdate, 7, `{"v": {n}}`, start), 7000); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		in.insert(0, row("", 0, i, orgUpdate, 100+i, `{"ok": 1}`, start))
	}
	in.down = true
	in.history(start, time.Minute)
	in.down = false
	in.snapshot()
	fs := in.follow(4)
	for _, f := range fs {
		t.Logf("finding %s %s next=%q", f.Check, f.cause(), f.Next)
	}
	for _, line := range in.commands {
		t.Logf("cmd: %s", line)
	}
	for _, line := range in.commands {
		if strings.Contains(line, " skip ") {
			t.Errorf("a large group's timeout taken for poison: %q", line)
		}
	}
	in.check() // compact's older duplicates only: every group's newest delivered or queued
}
