package drain

import (
	"bytes"
	"fmt"
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

// TestHighestOperationAfterASeal: a bulk resume numbers its archive operations after the
// file's highest id.N; a second resume, after the first one sealed a cut line, must read the
// file as restore does. It used a JSON decoder over the whole file, which stopped at the
// sealed cut line: every later resume failed ("invalid character '{' after object
// key:value pair"), each of its batches as failed, for good.
func TestHighestOperationAfterASeal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	const run = "20261201T000000Z-skip-abcdef"
	open := func(n int) {
		m := meta("skip")
		m.ID = fmt.Sprintf("%s.%d", run, n)
		op, err := OpenOperation(path, m)
		if err != nil {
			t.Fatal(err)
		}
		op.Close()
	}
	open(1)
	open(2)
	cutLine(t, path)
	if n, err := HighestOperation(path, run); n != 2 || err != nil {
		t.Fatalf("with the cut line last: %d %v", n, err)
	}
	open(3) // the first resume: seals the cut line
	if n, err := HighestOperation(path, run); n != 3 || err != nil {
		t.Fatalf("after the seal (the second resume): %d %v", n, err)
	}
}

// TestOnlyACutLineIsForgiven: the torn line forgives the line right before it when that line
// is not JSON at all (what a cut leaves); a whole JSON line that is not an archive line (an
// unknown kind, a newer format) and a cut line with a blank line before the torn line stay
// the file's error.
func TestOnlyACutLineIsForgiven(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	writeOperation(t, path, "compact", 1)
	good := string(mustRead(t, path))
	torn := `{"v":3,"kind":"torn","at":"2026-12-01T00:00:00Z"}` + "\n"
	for name, text := range map[string]string{
		"unknown kind":  `{"v":3,"kind":"drop","op":"a"}` + "\n" + torn,
		"newer format":  `{"v":4,"kind":"row","op":"a","batch":1,"id":1}` + "\n" + torn,
		"blank between": `{"v":3,"kind":"row","op":"x","ba` + "\n\n" + torn,
	} {
		if _, err := ParseArchive(strings.NewReader(good+text+good), 0); err == nil || !strings.HasPrefix(err.Error(), "22: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	f, err := ParseArchive(strings.NewReader(good+`{"v":3,"kind":"row","op":"x","ba`+"\n"+torn+good), 0)
	if err != nil || !reflect.DeepEqual(f.Torn, []int{22}) || len(f.Operations) != 1 {
		t.Fatalf("a cut line sealed: %+v %v", f, err)
	}
}
