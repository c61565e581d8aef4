package drain

import (
	"bufio"
	"bytes"
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
	_, err := readLine(br, max)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("an endless line was accepted")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > max+max/4 {
		t.Fatalf("refusing a line over a %d-byte cap allocated %d bytes, want at most %d", max, got, max+max/4)
	}
}

// TestReadLineJoinsLongLines: a line of several buffers comes back whole, and one exactly at
// the cap is read.
func TestReadLineJoinsLongLines(t *testing.T) {
	t.Parallel()
	want := strings.Repeat("abcdefgh", 40<<10) + "\n" // 320 KiB: five 64 KiB buffers
	br := bufio.NewReaderSize(strings.NewReader(want+"next\n"), 1<<16)
	got, err := readLine(br, int64(len(want)))
	if err != nil || !bytes.Equal(got, []byte(want)) {
		t.Fatalf("long line: %d bytes, %v", len(got), err)
	}
	if got, err := readLine(br, 5); err != nil || string(got) != "next\n" {
		t.Fatalf("next line: %q, %v", got, err)
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
