package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestLeftoverAndUnknownCategories: shards and inspect say of rows of category 26
// (ORGANIZATION_MEMBER_TEAM_UPDATE, retired in Aug 2026 as UNUSED_EIGHT) what the catalog's
// era says: leftovers Sentry no longer writes where its replica was torn down (current),
// live where the replica is still here (May 2026); on both they still print a category
// this build does not know as UNKNOWN(49) with the hint to pass --enums; a live category
// gets no note.
func TestLeftoverAndUnknownCategories(t *testing.T) {
	t.Parallel()
	notes := map[fixture.Era]string{
		fixture.EraCurrent: "category 26 ORGANIZATION_MEMBER_TEAM_UPDATE (retired Aug 2026, as UNUSED_EIGHT)\n  leftover: Sentry no longer writes this category\n",
		fixture.EraMay2026: "category 26 ORGANIZATION_MEMBER_TEAM_UPDATE (retired Aug 2026, as UNUSED_EIGHT)\n  live here: this database's Sentry still writes it (its replica is here)\n",
	}
	const unknown = "category UNKNOWN(49): this build does not know it:\n  pass --enums PATH/category.py from a newer Sentry checkout\n"
	for _, era := range fixture.Eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			leftover := notes[era]
			// The replicas as each era has them: here on May 2026, torn down on current.
			schema := testdb.Schema(t, fixture.Options{Era: era, Replicas: true})
			ids := testdb.Insert(t, schema, "sentry_regionoutbox",
				testdb.Row{Scope: 0, Shard: 7, Category: 26, Object: 1},
				testdb.Row{Scope: 0, Shard: 8, Category: 49, Object: 2},
				testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9})
			out, errOut := mustRun(t, cmd.ExitOK, schema, "shards", "-o", "json")
			if !strings.Contains(errOut, leftover) || !strings.Contains(errOut, unknown) || !strings.Contains(out, `"UNKNOWN(49)"`) {
				t.Errorf("shards:\nstdout %s\nstderr %s", out, errOut)
			}
			if era == fixture.EraMay2026 && strings.Contains(errOut, "leftover") {
				t.Errorf("a May-2026 database's category 26 called a leftover: %s", errOut)
			}
			if strings.Contains(errOut, "ORGANIZATION_UPDATE") {
				t.Errorf("a live category got a note: %s", errOut)
			}
			_, errOut = mustRun(t, cmd.ExitOK, schema, "inspect", "shard", "organization", "7")
			if !strings.Contains(errOut, leftover) || strings.Contains(errOut, "UNKNOWN(49)") {
				t.Errorf("inspect shard organization 7:\n%s", errOut)
			}
			_, errOut = mustRun(t, cmd.ExitOK, schema, "inspect", "message", fmt.Sprint(ids[1]))
			if !strings.Contains(errOut, unknown) {
				t.Errorf("inspect message of category 49:\n%s", errOut)
			}
			_, errOut = mustRun(t, cmd.ExitOK, schema, "inspect", "shard", "organization", "9")
			if strings.Contains(errOut, "leftover") {
				t.Errorf("inspect of a live category's shard: %s", errOut)
			}
		})
	}
}
