package drain

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameBatches compares what two archives read back as, but for the operation ids and times.
func sameBatches(t *testing.T, a, b *ArchiveFile) {
	t.Helper()
	if len(a.Operations) != len(b.Operations) {
		t.Fatalf("%d operations against %d", len(a.Operations), len(b.Operations))
	}
	for i := range a.Operations {
		x, y := a.Operations[i], b.Operations[i]
		if x.Problem != nil || y.Problem != nil || !x.Verified() || !y.Verified() || len(x.Batches) != len(y.Batches) {
			t.Fatalf("operation %d: problems %v / %v, verified %v / %v, %d / %d batches", i, x.Problem, y.Problem, x.Verified(), y.Verified(), len(x.Batches), len(y.Batches))
		}
		for j := range x.Batches {
			if x.Batches[j].State != y.Batches[j].State || !reflect.DeepEqual(x.Batches[j].Rows, y.Batches[j].Rows) || !reflect.DeepEqual(x.Batches[j].Deleted, y.Batches[j].Deleted) {
				t.Fatalf("operation %d batch %d differs: %+v / %+v", i, j, x.Batches[j], y.Batches[j])
			}
		}
	}
}

// TestCompressedArchiveReadsAsPlain: an archive named .zst is zstd frames (one a write) whose
// lines, decompressed, are the plain archive's: the same batches, states, rows and checksums.
func TestCompressedArchiveReadsAsPlain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, packed := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "a.jsonl.zst")
	writeOperation(t, plain, "compact", 1)
	writeOperation(t, packed, "compact", 1)
	raw := mustRead(t, packed)
	if !isZstd(raw) || bytes.Contains(raw, []byte(`"kind"`)) {
		t.Fatalf("not compressed: %q", raw[:min(len(raw), 40)])
	}
	if got := wholeFrames(bytes.NewReader(raw), int64(len(raw))); got != int64(len(raw)) {
		t.Fatalf("whole frames end at %d of %d", got, len(raw))
	}
	a, err := ReadArchiveFile(plain, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadArchiveFile(packed, 0)
	if err != nil || b.Truncated {
		t.Fatalf("%v truncated %v", err, b != nil && b.Truncated)
	}
	sameBatches(t, a, b)
}

// TestCompressedCutFrameThenResume: a kill cut the last frame short. restore reads the frames
// before it (Truncated); the next run to append cuts that frame off first, so both
// operations read back whole (appended after it, its frames would be read as the cut
// frame's continuation: the whole file refused as damaged).
func TestCompressedCutFrameThenResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, plain := filepath.Join(dir, "a.jsonl.zst"), filepath.Join(dir, "a.jsonl")
	writeOperation(t, path, "compact", 1)
	writeOperation(t, plain, "compact", 1)
	whole := int64(len(mustRead(t, path)))
	frame, err := compressFrame([]byte(strings.Repeat(`{"v":3,"kind":"row","op":"x","batch":4,"id":99}`+"\n", 500)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(frame[:len(frame)/2]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := ReadArchiveFile(path, 0)
	if err != nil || !got.Truncated {
		t.Fatalf("cut: %v, truncated %v", err, got != nil && got.Truncated)
	}
	want, _ := ReadArchiveFile(plain, 0)
	sameBatches(t, want, got)

	// Another run holds the file open (a write of it may be in flight): refused, not cut.
	other, err := OpenArchiveHandle(filepath.Join(dir, "b.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	holder, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockShared(holder); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenArchiveHandle(path); err == nil || !strings.Contains(err.Error(), "--archive") {
		t.Fatalf("opened a file another run holds with a cut frame: %v", err)
	}
	holder.Close()

	writeOperation(t, path, "compact", 1)
	writeOperation(t, plain, "compact", 1)
	got, err = ReadArchiveFile(path, 0)
	if err != nil || got.Truncated {
		t.Fatalf("after the resume: %v, truncated %v", err, got != nil && got.Truncated)
	}
	want, _ = ReadArchiveFile(plain, 0)
	sameBatches(t, want, got)
	if raw := mustRead(t, path); wholeFrames(bytes.NewReader(raw), int64(len(raw))) != int64(len(raw)) || int64(len(raw)) <= whole {
		t.Fatal("the resumed file is not whole frames")
	}
}

// TestCompressedDamageIsRefused: a frame damaged in the middle of the file (its checksum does
// not match) is an error naming the damage, not a short read.
func TestCompressedDamageIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl.zst")
	writeOperation(t, path, "compact", 1)
	raw := mustRead(t, path)
	raw[len(raw)/2] ^= 0xff
	_, err := ParseArchive(bytes.NewReader(raw), 0)
	if err == nil || strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("damaged archive: %v", err)
	}
}
