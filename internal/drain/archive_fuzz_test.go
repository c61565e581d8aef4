package drain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseArchive feeds the archive reader malformed, huge, wrongly typed and truncated
// input: it must never panic, every error must be one line without control characters, and
// whatever it accepts must plan without panicking and restore only rows of committed (or
// old-format) batches. CI runs the seed corpus; make fuzz explores for 30 s.
func FuzzParseArchive(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.jsonl")
	op, err := OpenOperation(path, meta("compact"))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := op.Stage(archiveRows(1, 6))
	_ = op.Commit(b)
	b, _ = op.Stage(archiveRows(10, 2))
	_ = op.Abort(b, nil)
	_, _ = op.Stage(archiveRows(20, 2))
	op.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	// The same operation compressed (an archive named .zst: zstd frames), whole and cut.
	zpath := filepath.Join(f.TempDir(), "seed.jsonl.zst")
	zop, err := OpenOperation(zpath, meta("compact"))
	if err != nil {
		f.Fatal(err)
	}
	b, _ = zop.Stage(archiveRows(1, 6))
	_ = zop.Commit(b)
	b, _ = zop.Stage(archiveRows(10, 2))
	_ = zop.Abort(b, nil)
	zop.Close()
	packed, err := os.ReadFile(zpath)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(packed),
		string(packed[:len(packed)-3]),
		string(packed[:len(packed)/2]),
		string(packed) + string(good),
		string(packed[:4]),
		string(good),
		string(good[:len(good)/2]),
		legacyLines,
		legacyLines + string(good),
		"",
		"\n\n",
		"{}\n",
		`{"v":2,"kind":"commit","op":"a","batch":1,"ids":[1,2,3]}` + "\n",
		`{"v":3,"kind":"row","op":"a","batch":1,"id":1}` + "\n" + `{"v":3,"kind":"commit","op":"a","batch":1,"ids":[1]}` + "\n",
		`{"v":2,"kind":"row","op":"a","batch":1,"id":1,"payload_text":7}` + "\n",
		`{"v":2,"kind":"row","op":"a","batch":1,"id":1,"scheduled_for":"yesterday"}` + "\n",
		`{"v":2,"kind":"row","op":"a","batch":-1,"id":1}` + "\n",
		`{"v":2,"kind":"abort","op":"a","batch":1}` + "\n" + `{"v":2,"kind":"commit","op":"a","batch":1,"ids":[1]}`,
		`{"v":2,"kind":"row","op":"a","batch":1,"id":1,"payload_text":"` + strings.Repeat("x", 1<<20) + `"}` + "\n",
		`{"table":"t","command":"drain","id":1,"payload":` + strings.Repeat("[", 5000) + "\n",
		"[1,2,3]\n\"str\"\nnull\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if n := wholeFrames(bytes.NewReader(data), int64(len(data))); n < 0 || n > int64(len(data)) {
			t.Fatalf("whole frames end at %d of %d bytes", n, len(data))
		}
		af, err := ParseArchive(strings.NewReader(string(data)), 0)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r\x1b") {
				t.Fatalf("error is not one clean line: %q", err)
			}
			return
		}
		for _, o := range af.Operations {
			if !validOpID(o.ID) && !strings.HasPrefix(o.ID, "legacy-") {
				t.Fatalf("accepted operation id %q", o.ID)
			}
		}
		plan, err := PlanRestore(af, RestoreSelection{All: true, IncludeSkipped: true, Unverified: true})
		var edited *EditedError
		if errors.As(err, &edited) {
			if strings.ContainsAny(err.Error(), "\n\r\x1b") {
				t.Fatalf("refusal is not one clean line: %q", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("--all --include-skipped failed: %v", err)
		}
		for _, p := range plan.Operations {
			restorable := map[int64]bool{}
			for _, b := range p.Op.Batches {
				for _, r := range b.Restorable() {
					restorable[r.ID] = true
				}
			}
			for _, r := range p.Rows {
				if !restorable[r.ID] {
					t.Fatalf("plans row %d of an uncommitted batch", r.ID)
				}
			}
		}
	})
}
