package cmd_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// writeLongLine writes an archive whose second line is n bytes of JSON string, in chunks.
func writeLongLine(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("\n\"")
	chunk := strings.Repeat("z", 4096)
	for range n / len(chunk) {
		w.WriteString(chunk)
	}
	w.WriteString("\"\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRestoreCapsArchiveLines: a line over --max-line-bytes is refused with one line that
// names the cap and the flag that raises it (exit 1: the input, not the command line); under
// a raised cap the same line is read (and refused for what it is, not for its size).
func TestRestoreCapsArchiveLines(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	path := writeLongLine(t, 100<<10)
	out, errOut := mustRun(t, 1, schema, "restore", path, "--print-sql", "--max-line-bytes", "64KiB")
	want := "Error: " + path + ":2: a line longer than the 64KiB cap on an archive line (not an outboxctl archive, or a row with a larger payload): to read it, raise the cap with --max-line-bytes 128KiB\n"
	if out != "" || errOut != want {
		t.Fatalf("stdout %q\nstderr %q\nwant   %q", out, errOut, want)
	}
	_, errOut = mustRun(t, 1, schema, "restore", path, "--print-sql", "--max-line-bytes", "128KiB")
	if !strings.HasPrefix(errOut, "Error: "+path+":2: not an archive line: ") {
		t.Fatalf("under a raised cap: %q", errOut)
	}
	_, errOut = mustRun(t, 2, schema, "restore", path, "--print-sql", "--max-line-bytes", "12MB")
	if !strings.HasPrefix(errOut, `Error: invalid argument "12MB" for "--max-line-bytes" flag: invalid size "12MB": want a positive number of bytes, or one with KiB, MiB or GiB (256MiB)`) {
		t.Fatalf("a bad size: %q", errOut)
	}
}
