package drain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// twoBatches writes an operation of two committed batches and returns its lines.
func twoBatches(t *testing.T) (*Operation, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	op, err := OpenOperation(path, meta("compact"))
	if err != nil {
		t.Fatal(err)
	}
	for _, first := range []int64{1, 10} {
		b, err := op.Stage(archiveRows(first, 2))
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	op.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	return op, lines[:len(lines)-1]
}

func parseLines(t *testing.T, lines []string) *ArchiveFile {
	t.Helper()
	f, err := ParseArchive(strings.NewReader(strings.Join(lines, "")), 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMarkersChainTheOperation: each marker's checksum covers every line of its operation
// before it, earlier markers included, so removing batch 1's commit marker (which would hide
// its rows from restore) is caught at batch 2's; lines of another operation in between change
// nothing.
func TestMarkersChainTheOperation(t *testing.T) {
	t.Parallel()
	op, lines := twoBatches(t)
	if f := parseLines(t, lines); f.Operations[0].Problem != nil || !f.Operations[0].Verified() {
		t.Fatalf("as written: %v", f.Operations[0].Problem)
	}
	_, other := twoBatches(t)
	interleaved := append(append([]string{other[0]}, lines[:3]...), append(other[1:], lines[3:]...)...)
	for _, o := range parseLines(t, interleaved).Operations {
		if o.Problem != nil {
			t.Fatalf("interleaved with another operation: %s: %v", o.ID, o.Problem)
		}
	}
	f := parseLines(t, append(append([]string(nil), lines[:3]...), lines[4:]...))
	want := "line 6: the checksum of batch 2's commit marker does not match operation " + op.Meta.ID + "'s lines before it (a line of it was edited, removed, added or moved)"
	if p := f.Operations[0].Problem; p == nil || p.Error() != want {
		t.Fatalf("marker removed: %v\nwant %s", p, want)
	}
	if _, err := PlanRestore(f, RestoreSelection{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("PlanRestore: %v", err)
	}
}

// TestUnsealedOperationKeepsItsShard: an operation written before archives recorded a shard
// takes its first row's, so one row edited into another shard is still refused.
func TestUnsealedOperationKeepsItsShard(t *testing.T) {
	t.Parallel()
	_, lines := twoBatches(t)
	old := testdb.Unsealed(t, lines, func(i int, m map[string]any) {
		if i == 5 {
			m["shard_identifier"] = 43
		}
	})
	o := parseLines(t, old[:5]).Operations[0]
	if o.Problem != nil || o.Verified() {
		t.Fatalf("old operation: problem %v, verified %v", o.Problem, o.Verified())
	}
	o = parseLines(t, old).Operations[0]
	if want := "line 6: row 11 is in shard (scope 0, id 43), not in operation " + o.ID + "'s shard (scope 0, id 42)"; o.Problem == nil || o.Problem.Error() != want {
		t.Fatalf("problem %v\nwant %s", o.Problem, want)
	}
}

// TestStageRefusesRowsOfAnotherShard: the writer never records a row outside the operation's
// shard, so restore's check can only fire on an edit.
func TestStageRefusesRowsOfAnotherShard(t *testing.T) {
	t.Parallel()
	op, err := OpenOperation(filepath.Join(t.TempDir(), "a.jsonl"), meta("compact"))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	rows := archiveRows(1, 2)
	rows[1].ShardID = 7
	if _, err := op.Stage(rows); err == nil || err.Error() != "archive: row 2 is not in the operation's shard (scope 0, id 42); refusing to delete it" {
		t.Fatalf("Stage: %v", err)
	}
}
