package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedSkipShards seeds organization shards 1 and 2, each two ORGANIZATION_UPDATE rows (its
// head among them) then an ORGANIZATION_MEMBER_UPDATE row, in backoff: ids 1-3 and 4-6.
func seedSkipShards(t *testing.T) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, CASE WHEN i < 3 THEN 2 ELSE 3 END, i, ('{"n": ' || s || '}')::jsonb, now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, 2) s, generate_series(1, 3) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	return schema
}

// withoutMarkers is the archive at path with every commit marker removed, as a kill between
// each batch's DELETE and its marker (or a full disk at the marker) leaves it.
func withoutMarkers(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if !strings.Contains(l, `"kind":"commit"`) {
			kept = append(kept, l)
		}
	}
	out := filepath.Join(t.TempDir(), "unmarked.jsonl")
	if err := os.WriteFile(out, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreCard is restore's JSON summary.
type restoreCard struct {
	Inserted          int64              `json:"inserted"`
	Skipped           int64              `json:"skipped"`
	CommittedUnmarked int                `json:"committed_unmarked"`
	LeftOut           []drain.LeftOutRow `json:"left_out"`
}

func readRestoreCard(t *testing.T, out string) restoreCard {
	t.Helper()
	var c restoreCard
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("restore's JSON: %v\n%s", err, out)
	}
	return c
}

// TestRestoreSettlesUnmarkedBatchesAgainstTheTable (#36 High 1): a bulk skip over 2 shards
// whose commit markers are gone (a kill after each DELETE committed): restore --all
// --include-skipped, with no other flag, finds every id of each batch gone from the table, so
// their DELETE committed: it restores them (committed_unmarked 4, the plan says so) and the
// table is as seeded. Then, one row of a batch restored alone (with --include-uncommitted), the
// batch reads mixed (one id in the table, one not): restore leaves the other out, names it in
// left_out with its reason, and exits 6; --include-uncommitted restores it.
func TestRestoreSettlesUnmarkedBatchesAgainstTheTable(t *testing.T) {
	t.Parallel()
	schema := seedSkipShards(t)
	before := tableState(t, schema, query.CellTable)
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	mustRun(t, 0, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--keep-backoff", "--batch-shards", "1", "--archive", archive, "--yes", "-o", "json")
	unmarked := withoutMarkers(t, archive)

	// A plan of the unmarked file, read before settling (as a dry run shows it).
	out, errOut := mustRun(t, 0, schema, "restore", unmarked, "--all", "--include-skipped", "--yes", "-o", "json")
	if c := readRestoreCard(t, out); c.Inserted != 4 || c.CommittedUnmarked != 4 || len(c.LeftOut) != 0 {
		t.Fatalf("restore of committed unmarked batches: %+v\n%s\n%s", c, out, errOut)
	}
	if !strings.Contains(errOut, "2 staged row(s) with no commit marker (ids 1-2) restored: every row their batch staged is gone from the table, so its DELETE committed (settled against the table)") {
		t.Errorf("the plan does not say it settled the batch:\n%s", errOut)
	}
	sameState(t, "after restoring the unmarked batches", tableState(t, schema, query.CellTable), before)

	// Deleted again, and one row of shard 1's batch put back alone: the batch is mixed.
	mustRun(t, 0, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--keep-backoff", "--batch-shards", "1", "--archive", archive, "--yes", "-o", "json")
	second := withoutMarkers(t, archive)
	f, err := drain.ReadArchiveFile(second, 0)
	if err != nil {
		t.Fatal(err)
	}
	op := f.Operations[len(f.Operations)-2].ID // the second run's shard 1
	mustRun(t, 0, schema, "restore", second, "--operation", op, "--id", "1", "--include-uncommitted", "--yes")
	code, out, errOut := runCLI(t, schema, "restore", second, "--operation", op, "--yes", "-o", "json")
	c := readRestoreCard(t, out)
	if code != 6 || c.Inserted != 0 || len(c.LeftOut) != 1 || c.LeftOut[0] != (drain.LeftOutRow{Operation: op, ID: 2, Reason: drain.ReasonUnsettled}) {
		t.Fatalf("restore of a mixed unmarked batch: exit %d, %+v\n%s\n%s", code, c, out, errOut)
	}
	if !strings.HasSuffix(errOut, "Error: restore: 1 row(s) left out though the table lacks them (ids 2; -o json names each with its reason in left_out): their batch has no commit marker and restore cannot tell whether its DELETE committed; check them, then restore them with --include-uncommitted\n") {
		t.Errorf("the error line:\n%s", errOut)
	}
	out, _ = mustRun(t, 0, schema, "restore", second, "--operation", op, "--include-uncommitted", "--yes", "-o", "json")
	if c := readRestoreCard(t, out); c.Inserted != 1 || len(c.LeftOut) != 0 {
		t.Errorf("--include-uncommitted: %+v", c)
	}
}
