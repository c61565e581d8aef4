package drain

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// cutLine appends to path the first half of a line of operation op's format without its
// newline: what a kill mid-write leaves (a row staged for batch 4).
func cutLine(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"v":3,"kind":"row","op":"x","batch":4,"id":99,"payl`); err != nil {
		t.Fatal(err)
	}
}

// TestTornLineBeforeAResumeIsSkipped: a kill cut the archive's last line short, then a
// later run (a --resume, or any repair naming the same --archive) appended its own
// operation. Before, the next run's header was glued to the cut line: restore refused the
// whole file ("22: not an archive line"), the first operation's committed rows included.
// Now the next open seals the cut line (a newline and a torn line): both operations read
// back whole, and the cut line is reported, skipped.
func TestTornLineBeforeAResumeIsSkipped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	first := writeOperation(t, path, "compact", 1)
	cutLine(t, path)
	f, err := ReadArchiveFile(path, 0)
	if err != nil || !f.Truncated || len(f.Torn) != 0 {
		t.Fatalf("before the resume: %+v %v", f, err)
	}
	cut := bytes.Count(mustRead(t, path), []byte("\n")) + 1 // the cut line's number
	second := writeOperation(t, path, "compact", 101)
	f, err = ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatalf("after the resume: %v", err)
	}
	if f.Truncated || !reflect.DeepEqual(f.Torn, []int{cut}) || len(f.Operations) != 2 {
		t.Fatalf("truncated %v, torn %v (want [%d]), %d operations", f.Truncated, f.Torn, cut, len(f.Operations))
	}
	for i, want := range []*Operation{first, second} {
		got := f.Operations[i]
		if got.ID != want.Meta.ID || got.Problem != nil || len(got.Batches) != 3 {
			t.Fatalf("operation %d: %s problem %v, %d batches", i, got.ID, got.Problem, len(got.Batches))
		}
		if b := got.Batches[0]; b.State != BatchCommitted || !reflect.DeepEqual(b.Restorable(), archiveRows(1+100*int64(i), 6)) {
			t.Fatalf("operation %d's committed batch: %s %+v", i, b.State, b.Rows)
		}
	}
	// A file that ends with its newline is left as it is by the next open.
	size := len(mustRead(t, path))
	h, err := OpenArchiveHandle(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if n := len(mustRead(t, path)); n != size {
		t.Fatalf("an open of a whole file wrote %d bytes", n-size)
	}
}

// TestTornLineRules: a line missing only its newline (whole JSON) is read, not skipped; a
// torn line after a whole line (a write in flight when the file was sealed) is ignored; a bad
// line with no torn line after it still refuses the file, with its number.
func TestTornLineRules(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	writeOperation(t, path, "compact", 1)
	good := mustRead(t, path)
	// The last line (batch 3's staged rows... its last row) without its newline.
	if err := os.WriteFile(path, good[:len(good)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	writeOperation(t, path, "compact", 101)
	f, err := ReadArchiveFile(path, 0)
	if err != nil || len(f.Torn) != 0 || len(f.Operations) != 2 || !reflect.DeepEqual(f.Operations[0].Batches[2].Rows, archiveRows(21, 6)) {
		t.Fatalf("a whole last line without its newline: %+v %v", f, err)
	}
	torn := `{"v":3,"kind":"torn","at":"2026-12-01T00:00:00Z"}` + "\n"
	f, err = ParseArchive(strings.NewReader(string(good)+torn+string(good)), 0)
	if err != nil || len(f.Torn) != 0 {
		t.Fatalf("a torn line after a whole line: %+v %v", f, err)
	}
	for name, text := range map[string]string{
		"bad line, no torn line":       "{\n" + string(good),
		"bad line, torn line too late": "{\n" + string(good) + torn,
	} {
		if _, err := ParseArchive(strings.NewReader(string(good)+text), 0); err == nil || !strings.HasPrefix(err.Error(), "22: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
