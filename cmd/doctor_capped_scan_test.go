package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// More shards at the 1 h cap than the stuck check reads (1,000): the finding says "at
// least" the shards it read, never that they are all, and its next step selects exactly
// the shards it names, the same count (the round's rule: a printed command selects what
// the finding names).
func TestDoctorCappedBeyondTheScan(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	// 1,203 organization shards, one row each, claimed 10 minutes ago at the 1 h cap.
	execSQL(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added)
SELECT 0, i, 2, i, now() - interval '10 minutes', now() + interval '50 minutes', now() - interval '3 hours' FROM generate_series(1, 1203) AS i`, schema))
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "stuck")
	if code != cmd.ExitWarn { // heads 3 h old: a warning (critical from doctor.StuckCritAge, 24 h)
		t.Fatalf("exit %d: %s %+v", code, errOut, fs)
	}
	stuck := only(fs, "stuck", "table", "sentry_regionoutbox")
	if len(stuck) != 1 {
		t.Fatalf("stuck findings of the cell table: %+v", stuck)
	}
	f := stuck[0]
	if !strings.Contains(f.Summary, "sentry_regionoutbox: receiver outage: at least 1000 (the check reads the first 1000 shards at the cap; these are the ones it read) shard(s) at the 1 h backoff cap") ||
		f.Evidence["capped_read_stopped"] != true || f.Evidence["next_selects_shards"] != float64(1000) || f.Evidence["grouped_shards"] != float64(1000) {
		t.Fatalf("the finding over 1,203 shards at the cap: %q\n%v", f.Summary, f.Evidence)
	}
	// Its next steps name the shards read, by id: none of them the selector that would take
	// all 1,203.
	named := 0
	for _, n := range f.Next {
		if strings.Contains(n, "--stuck --at-cap") {
			t.Fatalf("a next step selects by --stuck --at-cap beyond the shards read: %s", n)
		}
		if strings.Contains(n, "reschedule") {
			named++
		}
	}
	if named == 0 {
		t.Fatalf("no reschedule among the next steps: %q", f.Next)
	}
}
