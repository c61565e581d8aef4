package drain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

const journalOp = "20261201T101500Z-skip-3fa9c1"

// writeJournal writes a journal of journalOp as CreateBulkJournal does (sealed header, then
// batch lines), at a path of its own, and returns the path.
func writeJournal(t *testing.T, tail string) string {
	t.Helper()
	h := BulkJournalHeader{V: BulkJournalVersion, Op: journalOp, Command: "skip", Target: "postgres@db/test, sentry_regionoutbox", Flags: json.RawMessage(`{"Category":"ORGANIZATION_UPDATE"}`),
		Archive: "/tmp/a.jsonl", Started: time.Date(2026, 12, 1, 10, 15, 0, 123456789, time.UTC), Shards: [][2]int64{{0, 1}, {0, 2}, {0, 3}}}
	var err error
	if h.SHA256, err = h.seal(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bulk-"+journalOp+".jsonl")
	if err := os.WriteFile(path, append(append(b, '\n'), tail...), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readJournalFile(t *testing.T, path string) (*BulkResume, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readBulkJournal(f, path, journalOp)
}

// TestJournalToleratesACutLastLine (#36 Medium 5): a journal whose last batch line a kill cut
// short is read without it (Truncated: its shards are not finished), as an archive's cut last
// line is; the resume's journal cuts the line off before it appends, so the journal reads
// whole again with the resume's batch.
func TestJournalToleratesACutLastLine(t *testing.T) {
	t.Parallel()
	path := writeJournal(t, `{"finished":[[0,1]],"operations":1}`+"\n"+`{"finished":[[0,2]],"oper`)
	r, err := readJournalFile(t, path)
	if err != nil {
		t.Fatalf("a cut last line: %v", err)
	}
	if !r.Truncated || !reflect.DeepEqual(r.Remaining(), []query.ShardRef{{Scope: 0, ID: 2}, {Scope: 0, ID: 3}}) || r.Operations != 1 {
		t.Fatalf("read %+v: want truncated, shards 2 and 3 left, 1 operation", r)
	}
	j, err := r.OpenJournal()
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Record([]BulkShard{{Scope: 0, ID: 2, Outcome: BulkDone}, {Scope: 0, ID: 3, Outcome: BulkDone}}, 3); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	r, err = readJournalFile(t, path)
	if err != nil || r.Truncated || len(r.Remaining()) != 0 || r.Operations != 3 {
		t.Fatalf("after the resume's batch: %+v, %v", r, err)
	}
}

// TestJournalHeaderEditRefused (#36 Low 13): a journal header edited after outboxctl wrote it
// (its target, its archive, its shards) is refused, naming the line, as an edited archive
// is; so is one of the version before the seal (which cannot be checked).
func TestJournalHeaderEditRefused(t *testing.T) {
	t.Parallel()
	path := writeJournal(t, "")
	if _, err := readJournalFile(t, path); err != nil {
		t.Fatalf("the journal as written: %v", err)
	}
	b, _ := os.ReadFile(path)
	for name, edit := range map[string][2]string{
		"target":  {"postgres@db/test", "postgres@other/test"},
		"archive": {"/tmp/a.jsonl", "/tmp/b.jsonl"},
		"shards":  {"[0,3]", "[0,4]"},
		"version": {`"v":2`, `"v":1`},
	} {
		edited := filepath.Join(t.TempDir(), "bulk-"+journalOp+".jsonl")
		if err := os.WriteFile(edited, []byte(strings.Replace(string(b), edit[0], edit[1], 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := readJournalFile(t, edited)
		if err == nil || !strings.HasPrefix(err.Error(), edited+":1: ") {
			t.Errorf("%s edited: %v, want a refusal naming line 1", name, err)
		}
	}
}
