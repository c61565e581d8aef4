package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedBulkShards seeds organization shards 1..n with rows rows each of ORGANIZATION_UPDATE
// (2, objects 1..rows), in backoff, and returns the schema.
func seedBulkShards(t *testing.T, n, rows int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 2, i, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, %d) s, generate_series(1, %d) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize(), n, rows)); err != nil {
		t.Fatal(err)
	}
	return schema
}

// auditLine is the audit line of command in stderr, decoded.
func auditLine(t *testing.T, errOut, command string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(errOut, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["audit"] == "outboxctl" && m["command"] == command {
			return m
		}
	}
	t.Fatalf("no audit line of %s in:\n%s", command, errOut)
	return nil
}

// TestRestoreAuditOfABulkRunIsCapped: restoring a bulk skip of 8 shards (8 operations) writes
// an audit line naming the file, the count and the first 5 operation ids only; the summary
// still says every row came back.
func TestRestoreAuditOfABulkRunIsCapped(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 8, 2)
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	out, _ := mustRun(t, 0, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--archive", archive, "--yes", "-o", "json")
	var skip struct {
		Summary struct {
			Operation  string `json:"operation"`
			Operations int    `json:"operations"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &skip); err != nil || skip.Summary.Operations != 8 {
		t.Fatalf("skip (%v):\n%s", err, out)
	}
	out, errOut := mustRun(t, 0, schema, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 16`) {
		t.Fatalf("restore:\n%s", out)
	}
	a := auditLine(t, errOut, "restore")
	ops, _ := a["operations"].([]any)
	if a["operation_count"] != float64(8) || len(ops) != 5 || a["archive"] != archive {
		t.Fatalf("audit line %v: want 8 operations counted, 5 named, the archive", a)
	}
	for i, op := range ops { // a shard's operation is the run's id .N
		if want := fmt.Sprintf("%s.%d", skip.Summary.Operation, i+1); op != want {
			t.Errorf("operation %d = %v, want %s", i, op, want)
		}
	}
}
