package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestLeftoverAndUnknownCategories: on both era fixtures, shards and inspect say of rows of
// category 26 (ORGANIZATION_MEMBER_TEAM_UPDATE, retired in Aug 2026 as UNUSED_EIGHT) that
// they are leftovers Sentry no longer writes, and still print a category this build does
// not know as UNKNOWN(49) with the hint to pass --enums; a live category gets no note.
func TestLeftoverAndUnknownCategories(t *testing.T) {
	t.Parallel()
	const leftover = "category 26 ORGANIZATION_MEMBER_TEAM_UPDATE (retired Aug 2026, as UNUSED_EIGHT)\n  leftover: Sentry no longer writes this category\n"
	const unknown = "category UNKNOWN(49): this build does not know it:\n  pass --enums PATH/category.py from a newer Sentry checkout\n"
	for _, era := range fixture.Eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{Era: era})
			ids := testdb.Insert(t, schema, "sentry_regionoutbox",
				testdb.Row{Scope: 0, Shard: 7, Category: 26, Object: 1},
				testdb.Row{Scope: 0, Shard: 8, Category: 49, Object: 2},
				testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9})
			out, errOut := mustRun(t, cmd.ExitOK, schema, "shards", "-o", "json")
			if !strings.Contains(errOut, leftover) || !strings.Contains(errOut, unknown) || !strings.Contains(out, `"UNKNOWN(49)"`) {
				t.Errorf("shards:\nstdout %s\nstderr %s", out, errOut)
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
