package drain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// rewritten rewrites each line's fields with edit (nil: none), then gives each marker the
// checksum of its operation's lines before it when reseal is set: the lines as an outboxctl
// that writes them so would have written them.
func rewritten(t *testing.T, lines []string, reseal bool, edit func(i int, m map[string]any)) []string {
	t.Helper()
	sum := sha256.New()
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(i, m)
		}
		if k := m["kind"]; reseal && (k == KindCommit || k == KindAbort) {
			m["sha256"] = hex.EncodeToString(sum.Sum(nil))
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b)+"\n")
		sum.Write(append(b, '\n'))
	}
	return out
}

// toShard9 moves a row line to shard 9 (an edit the seal exists to catch).
func toShard9(_ int, m map[string]any) {
	if m["kind"] == KindRow {
		m["shard_identifier"] = 9
	}
}

// stripSeal removes the seal's fields from one line.
func stripSeal(m map[string]any) {
	delete(m, "shard")
	delete(m, "checksum")
	delete(m, "sha256")
}

// TestVersion3LinesCarryTheSeal: a version 3 operation whose seal's fields were removed (its
// rows then moved to shard 9) is an edit, not an old archive: refused even with Unverified.
// So is one line of it stripped, or one line's version changed.
func TestVersion3LinesCarryTheSeal(t *testing.T) {
	t.Parallel()
	op, lines := twoBatches(t)
	if !strings.HasPrefix(lines[0], `{"v":3,`) {
		t.Fatalf("a new operation is not written in version 3: %s", lines[0])
	}
	id := op.Meta.ID
	oneLine := func(n int, edit func(m map[string]any)) func(int, map[string]any) {
		return func(i int, m map[string]any) {
			if i == n {
				edit(m)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"AllStripped", testdb.Stripped(t, lines, toShard9), "line 1: a version 3 line without its shard and its checksum fields, which outboxctl writes on every line of operation " + id},
		{"OneRowStripped", rewritten(t, lines, true, oneLine(1, stripSeal)), "line 2: a version 3 line without its shard and its checksum fields, which outboxctl writes on every line of operation " + id},
		{"OneVersionChanged", rewritten(t, lines, true, oneLine(2, func(m map[string]any) { m["v"] = 2 })), "line 3: its format version 2 differs from that of operation " + id + "'s first line (3)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := parseLines(t, tt.lines)
			if p := f.Operations[0].Problem; p == nil || p.Error() != tt.want {
				t.Fatalf("problem %v\nwant %s", p, tt.want)
			}
			var edited *EditedError
			if _, err := PlanRestore(f, RestoreSelection{Unverified: true}); !errors.As(err, &edited) {
				t.Fatalf("PlanRestore with Unverified: %v, want the edit refused", err)
			}
		})
	}
}

// TestUnverifiedOperationsNeedTheFlag: an operation with no checksum (version 2 without the
// seal's fields, or the format before operations) plans only with Unverified, and its plan
// names the shard its rows go into, here the one an edit moved them to.
func TestUnverifiedOperationsNeedTheFlag(t *testing.T) {
	t.Parallel()
	_, lines := twoBatches(t)
	unsealed := testdb.Unsealed(t, lines, toShard9)
	legacy, err := ParseArchive(strings.NewReader(legacyLines), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*ArchiveFile{parseLines(t, unsealed), legacy} {
		f.Path = "a.jsonl"
		o := f.Operations[0]
		if o.Problem != nil || o.Verified() {
			t.Fatalf("%s: problem %v, verified %v", o.ID, o.Problem, o.Verified())
		}
		var ue *UnverifiedError
		_, err := PlanRestore(f, RestoreSelection{All: true})
		if want := "a.jsonl: operation " + o.ID + " " + UnverifiedNote + ", so nothing was restored: compare the plan's shard and ids with what was deleted and pass --unverified to restore it, or choose the file's other operations with --operation"; !errors.As(err, &ue) || err.Error() != want {
			t.Fatalf("%s without Unverified: %v\nwant %s", o.ID, err, want)
		}
	}
	plan, err := PlanRestore(parseLines(t, unsealed), RestoreSelection{Unverified: true})
	if err != nil || len(plan.Operations[0].Rows) != 4 {
		t.Fatalf("with Unverified: %+v %v", plan, err)
	}
	if got := plan.Operations[0].Shards(); len(got) != 1 || got[0].String() != "(scope 0, id 9)" {
		t.Fatalf("shards %v, want the one the rows were moved to", got)
	}
}

// TestSealedVersion2IsVerified: an operation the release before version 3 wrote (version 2,
// with the seal's fields) is checked as before: verified as written, refused when edited.
func TestSealedVersion2IsVerified(t *testing.T) {
	t.Parallel()
	op, lines := twoBatches(t)
	v2 := rewritten(t, lines, true, func(i int, m map[string]any) { m["v"] = 2 })
	f := parseLines(t, v2)
	if o := f.Operations[0]; o.Problem != nil || !o.Verified() {
		t.Fatalf("sealed version 2: problem %v, verified %v", o.Problem, o.Verified())
	}
	if plan, err := PlanRestore(f, RestoreSelection{}); err != nil || len(plan.Operations[0].Rows) != 4 {
		t.Fatalf("sealed version 2: %+v %v", plan, err)
	}
	edited := rewritten(t, v2, false, func(i int, m map[string]any) {
		if i == 1 {
			m["object_identifier"] = 7
		}
	})
	want := "line 4: the checksum of batch 1's commit marker does not match operation " + op.Meta.ID + "'s lines before it (a line of it was edited, removed, added or moved)"
	if p := parseLines(t, edited).Operations[0].Problem; p == nil || p.Error() != want {
		t.Fatalf("edited version 2: %v\nwant %s", p, want)
	}
}
