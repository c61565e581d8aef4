package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestCompactRefusesAnArchiveWithNoRoom: the plan states the archive's size and where it
// goes; when the free space there (a directory of the test's own, given 1 MiB through the
// free-space seam: no disk is filled) cannot take it, compact changes nothing and exits 7
// with one line naming the command that points --archive elsewhere. With room, the same
// compact's plan names its size and runs.
func TestCompactRefusesAnArchiveWithNoRoom(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	big := strings.Repeat("x", 4096)
	var rows []testdb.Row
	for i := range 600 {
		p := fmt.Sprintf(`{"n": %d, "pad": "%s"}`, i, big)
		rows = append(rows, testdb.Row{Scope: 0, Shard: 5, Category: 2, Object: int64(i % 3), Payload: &p})
	}
	testdb.Insert(t, schema, query.CellTable, rows...)
	full := t.TempDir()
	drain.SetFreeSpaceHook(func(dir string) (int64, bool) {
		if strings.HasPrefix(dir, full) {
			return 1 << 20, true
		}
		return 0, false
	})
	t.Cleanup(func() { drain.SetFreeSpaceHook(nil) })
	archive := filepath.Join(full, "c.jsonl")
	code, out, errOut := runCLI(t, schema, "compact", "organization", "5", "--archive", archive, "--reason", "INC-4", "--yes")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if code != cmd.ExitNoRoom || out != "" || !strings.HasPrefix(last, "Error: the archive needs ~") ||
		!strings.Contains(last, "has 1.0 MiB free: nothing was changed; archive on a disk with room: outboxctl --schema "+schema+" compact organization 5 --reason INC-4 --yes --archive DIR/compact-organization-5.jsonl.zst") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(archive); !os.IsNotExist(err) {
		t.Fatalf("the refused compact wrote its archive: %v", err)
	}
	if n := len(tableState(t, schema, query.CellTable)); n != 600 {
		t.Fatalf("the refused compact deleted rows: %d left", n)
	}
	roomy := filepath.Join(t.TempDir(), "c.jsonl.zst")
	_, errOut = mustRun(t, 0, schema, "compact", "organization", "5", "--archive", roomy, "--reason", "INC-4", "--yes")
	if !strings.Contains(errOut, "archive ~") || !strings.Contains(errOut, "(zstd; ") || !strings.Contains(errOut, "in "+roomy+", ") {
		t.Fatalf("the plan does not state the archive:\n%s", errOut)
	}
	if n := len(tableState(t, schema, query.CellTable)); n != 3 {
		t.Fatalf("after compact: %d rows, want 3", n)
	}
}
