package cmd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestNotKillswitchedLeavesTheSwitchedShardsOut: --not-killswitched takes the disabled shards
// out of the selection itself, the same in every command that takes the selector: shards
// lists, and a bulk reschedule's and a bulk drain's plans count, only the shards no kill
// switch holds (organization 9 is disabled, 7 and 8 are not; all three are stuck).
func TestNotKillswitchedLeavesTheSwitchedShardsOut(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	for _, shard := range []int64{7, 8, 9} {
		testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: shard, Category: 2, Object: shard,
			ScheduledFrom: now.Add(-10 * time.Minute), ScheduledFor: now.Add(50 * time.Minute), DateAdded: now.Add(-time.Hour)})
	}
	execSQL(t, "INSERT INTO "+schema+".sentry_option (key, value, last_updated, last_updated_by) VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[9]', now(), 'cli')")

	out, _ := mustRun(t, 0, schema, "shards", "--stuck", "--not-killswitched", "--json", "shard_identifier")
	if strings.Contains(out, `"shard_identifier": 9`) || !strings.Contains(out, `"shard_identifier": 7`) || !strings.Contains(out, `"shard_identifier": 8`) {
		t.Fatalf("shards --stuck --not-killswitched:\n%s", out)
	}
	_, plan := mustRun(t, 0, schema, "reschedule", "--stuck", "--not-killswitched", "--dry-run")
	if !strings.Contains(plan, "2 shard(s) holding 2 row(s), selected by: stuck, not kill-switched (1 disabled shard(s) left out)") {
		t.Fatalf("reschedule --stuck --not-killswitched --dry-run:\n%s", plan)
	}
	_, plan = mustRun(t, 0, schema, "drain", "--stuck", "--not-killswitched", "--handler", "discard", "--dry-run")
	if !strings.Contains(plan, "drain 2 shard(s)") || strings.Contains(plan, "kill switch:") {
		t.Fatalf("drain --stuck --not-killswitched --dry-run:\n%s", plan)
	}
	// Without the flag the disabled shard is selected (and the drain leaves it alone).
	_, plan = mustRun(t, 0, schema, "reschedule", "--stuck", "--dry-run")
	if !strings.Contains(plan, "3 shard(s) holding 3 row(s)") {
		t.Fatalf("reschedule --stuck --dry-run:\n%s", plan)
	}
}
