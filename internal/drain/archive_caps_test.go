package drain

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// endless is an archive line that never ends: what a file of one huge line looks like to the
// reader, produced as it is read so the test holds none of it.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestReadLineRefusesWithinItsCap: refusing a line over the cap costs the cap, not the 3.4×
// it cost when the line was grown by doubling (867 MB for a 1 GB line at 256 MiB). Not
// parallel: it counts the bytes the process allocates.
func TestReadLineRefusesWithinItsCap(t *testing.T) {
	const max = 4 << 20
	br := bufio.NewReaderSize(endless{}, 1<<16)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readLine(br, nil, max)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("an endless line was accepted")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > max+max/4 {
		t.Fatalf("refusing a line over a %d-byte cap allocated %d bytes, want at most %d", max, got, max+max/4)
	}
}

// TestReadLineJoinsLongLines: a line of several buffers comes back whole, and one exactly at
// the cap is read, from a reader that cannot seek (chunks) and from one that can (measured,
// then read once).
func TestReadLineJoinsLongLines(t *testing.T) {
	t.Parallel()
	want := strings.Repeat("abcdefgh", 40<<10) + "\n" // 320 KiB: five 64 KiB buffers
	for _, seek := range []bool{false, true} {
		r := strings.NewReader(want + "next\n" + want[:100<<10])
		var src io.ReadSeeker
		if seek {
			src = r
		}
		br := bufio.NewReaderSize(r, 1<<16)
		got, err := readLine(br, src, int64(len(want)))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Fatalf("seek %v: long line: %d bytes, %v", seek, len(got), err)
		}
		if got, err := readLine(br, src, 5); err != nil || string(got) != "next\n" {
			t.Fatalf("seek %v: next line: %q, %v", seek, got, err)
		}
		if got, err := readLine(br, src, 1<<20); !errors.Is(err, io.EOF) || string(got) != want[:100<<10] {
			t.Fatalf("seek %v: last line, unterminated: %d bytes, %v", seek, len(got), err)
		}
	}
}

// TestSeekLineRefusesWithoutAllocating: from a file, a line over the cap is measured, never
// copied; one under it costs its length once.
func TestSeekLineRefusesWithoutAllocating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 8<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		max       int64
		wantErr   bool
		allocated uint64
	}{{4 << 20, true, 1 << 20}, {16 << 20, false, 9 << 20}} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReaderSize(f, 1<<16)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		line, err := readLine(br, f, tt.max)
		runtime.ReadMemStats(&after)
		if (err != nil) != tt.wantErr || (err == nil && len(line) != 8<<20+1) {
			t.Fatalf("cap %d: %d bytes, %v", tt.max, len(line), err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > tt.allocated {
			t.Fatalf("cap %d: allocated %d bytes, want at most %d", tt.max, got, tt.allocated)
		}
	}
}

func TestParseArchiveNamesTheCapFlag(t *testing.T) {
	t.Parallel()
	_, err := ParseArchive(strings.NewReader("\n"+strings.Repeat("y", 100<<10)), 64<<10)
	want := "2: a line longer than the 64KiB cap on an archive line (not an outboxctl archive, or a row with a larger payload): to read it, raise the cap with --max-line-bytes 128KiB"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}
