package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestReplicateFromRefusesNegativeIDs: --from checks each object_id as the command line
// checks an ID (a non-negative integer): `object_id: -5`, in JSON or JSONL, is a usage error
// (exit 2) naming the row, and no outbox row is written (issue 36 item 10: it wrote one with
// shard -5).
func TestReplicateFromRefusesNegativeIDs(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	dir := t.TempDir()
	for name, text := range map[string]string{
		"drift.json":  `{"summary": [], "drift": [{"pair": "organization", "drift": "missing", "object_id": 1}, {"pair": "organization", "drift": "missing", "object_id": -5}]}`,
		"drift.jsonl": "{\"pair\": \"organization\", \"drift\": \"orphan\", \"object_id\": -5}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut := mustRun(t, cmd.ExitUsage, schema, "replicate", "--from", path, "--yes")
		if !strings.Contains(errOut, "object_id -5 is not an id: want a non-negative integer") {
			t.Errorf("%s: %s", name, errOut)
		}
		if n := len(cellOutbox(t, schema, "id")); n != 0 {
			t.Errorf("%s: %d outbox row(s) written", name, n)
		}
	}
}
