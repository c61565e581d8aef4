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

// listedIDs are the shard_identifier of each row of shards -o json.
func listedIDs(t *testing.T, out string) []int64 {
	t.Helper()
	var rows []struct {
		ID int64 `json:"shard_identifier"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// TestShardsFromReadsBulkSummaries: a bulk repair's -o json and -o jsonl summaries, shards
// -o json and SCOPE ID lines all feed --shards-from, which selects exactly the shards they
// list; a summary's card is not a shard, and a file of neither is refused (exit 2).
func TestShardsFromReadsBulkSummaries(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 6, 2)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonOut, _ := mustRun(t, 0, schema, "reschedule", "--scope", "organization", "--limit", "3", "--yes", "-o", "json")
	jsonlOut, _ := mustRun(t, 0, schema, "reschedule", "--shards-from", write("first.json", jsonOut), "--yes", "-o", "jsonl")
	if n := strings.Count(jsonlOut, `"section":"shards"`); n != 3 || !strings.Contains(jsonlOut, `"section":"summary"`) {
		t.Fatalf("reschedule --shards-from a summary: %d shards\n%s", n, jsonlOut)
	}
	shardsOut, _ := mustRun(t, 0, schema, "shards", "--min-depth", "2", "--limit", "2", "-o", "json")
	for _, tt := range []struct {
		name, text string
		want       []int64
	}{
		{"summary.json", jsonOut, []int64{1, 2, 3}},
		{"summary.jsonl", jsonlOut, []int64{1, 2, 3}},
		{"shards.json", shardsOut, []int64{1, 2}},
		{"lines.txt", "# incident\norganization 5\n0 6\n", []int64{5, 6}},
	} {
		out, _ := mustRun(t, 0, schema, "shards", "--shards-from", write(tt.name, tt.text), "-o", "json")
		if got := listedIDs(t, out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: shards %v, want %v", tt.name, got, tt.want)
		}
	}
	_, errOut := mustRun(t, 2, schema, "shards", "--shards-from", write("card.json", `{"selected": 3, "done": 3}`))
	if !strings.Contains(errOut, "has no shard_scope or shard_identifier") {
		t.Errorf("a card alone: %s", errOut)
	}
}
