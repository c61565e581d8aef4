//go:build unix

package drain

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestPruneBulkJournals: a journal whose last batch is older than the cutoff is removed; a
// fresh one stays, an old one another process holds (its run or a resume still going) stays,
// and so does a file that is not a journal. Journals never expired before: the state
// directory kept one per bulk run for good.
func TestPruneBulkJournals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-JournalMaxAge - time.Hour)
	write := func(name string, at time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := write("bulk-20261001T000000Z-skip-aaaaaa.jsonl", old)
	write("bulk-20261130T000000Z-skip-bbbbbb.jsonl", time.Now().Add(-time.Hour))
	held := write("bulk-20261002T000000Z-reschedule-cccccc.jsonl", old)
	write("archive-20261001T000000Z-skip-aaaaaa.jsonl", old) // an archive: never removed
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		t.Fatal(err)
	}
	if got := PruneBulkJournals(dir, time.Now().Add(-JournalMaxAge)); !reflect.DeepEqual(got, []string{stale}) {
		t.Fatalf("removed %v, want only %s", got, stale)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 3 {
		t.Fatalf("left %v", left)
	}
}
