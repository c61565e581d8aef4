package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
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

// compacted archives a compact of shard organization/1 (4 rows, 2 superseded) and returns the
// schema, the archive's path, its lines and the operation id; the table then lacks 2 rows.
func compacted(t *testing.T) (schema, path string, lines []string, op string) {
	t.Helper()
	schema = testdb.Schema(t, fixture.Options{})
	for i := range 4 {
		testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i % 2), Payload: testdb.Str(fmt.Sprintf(`{"i": %d}`, i))})
	}
	path = filepath.Join(t.TempDir(), "compact.jsonl")
	out, _ := mustRun(t, 0, schema, "compact", "organization", "1", "--archive", path, "--yes", "--keep-backoff", "-o", "json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.SplitAfter(string(raw), "\n")
	if len(lines) != 5 || lines[4] != "" {
		t.Fatalf("want a header, 2 rows and a commit marker:\n%s", raw)
	}
	return schema, path, lines[:4], operationOf(t, out)
}

// rewrite writes lines to a new archive file.
func rewrite(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// toShard9 moves a row line to shard 9 (an edit the seal exists to catch).
func toShard9(_ int, m map[string]any) {
	if m["kind"] == "row" {
		m["shard_identifier"] = 9
	}
}

// TestRestoreRefusesEditedArchives: a row moved to another shard, a payload edited, two rows
// swapped, a marker removed, the seal's fields removed with every row moved to another shard,
// one line's format version changed: restore refuses the operation with one line naming the
// line and what to do (exit 1), and writes nothing; the archive as written still restores.
func TestRestoreRefusesEditedArchives(t *testing.T) {
	t.Parallel()
	schema, path, lines, op := compacted(t)
	before := tableState(t, schema, query.CellTable)
	edited := func(i int, old, new string) []string {
		out := append([]string(nil), lines...)
		if !strings.Contains(out[i], old) {
			t.Fatalf("line %d lacks %q: %s", i+1, old, out[i])
		}
		out[i] = strings.Replace(out[i], old, new, 1)
		return out
	}
	var firstID int64
	if err := json.Unmarshal([]byte(lines[1]), &struct {
		ID *int64 `json:"id"`
	}{&firstID}); err != nil {
		t.Fatal(err)
	}
	const tail = ": the archive was edited after outboxctl wrote it, so nothing was restored; restore from an unedited copy, or choose the file's other operations with --operation\n"
	checksum := fmt.Sprintf("the checksum of batch 1's commit marker does not match operation %s's lines before it (a line of it was edited, removed, added or moved)", op)
	for _, tt := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"RowMovedToAnotherShard", edited(1, `"shard_identifier":1,`, `"shard_identifier":2,`),
			fmt.Sprintf("line 2: row %d is in shard (scope 0, id 2), not in operation %s's shard (scope 0, id 1)", firstID, op)},
		{"RowMovedToAnotherTable", edited(1, `"table":"sentry_regionoutbox"`, `"table":"sentry_controloutbox"`),
			fmt.Sprintf("line 2: its operation fields (command, user, time, schema, table, shard…) differ from those of operation %s's first line", op)},
		{"PayloadEdited", edited(2, `\"i\": 1`, `\"i\": 7`), "line 4: " + checksum},
		{"RowsSwapped", []string{lines[0], lines[2], lines[1], lines[3]}, "line 4: " + checksum},
		{"HeaderRemoved", lines[1:], "line 3: " + checksum},
		{"SealStrippedAndShardMoved", testdb.Stripped(t, lines, toShard9),
			fmt.Sprintf("line 1: a version 3 line without its shard and its checksum fields, which outboxctl writes on every line of operation %s", op)},
		{"VersionChangedOnOneLine", edited(1, fmt.Sprintf(`{"v":%d,`, drain.FormatVersion), `{"v":2,`),
			fmt.Sprintf("line 2: its format version 2 differs from that of operation %s's first line (3)", op)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := rewrite(t, tt.lines)
			for _, args := range [][]string{{"restore", file, "--yes"}, {"restore", file, "--print-sql"}} {
				out, errOut := mustRun(t, 1, schema, args...)
				if want := "Error: " + file + ": operation " + op + ": " + tt.want + tail; out != "" || errOut != want {
					t.Fatalf("%v:\nstdout %q\nstderr %q\nwant   %q", args, out, errOut, want)
				}
			}
			sameState(t, "after a refused restore", tableState(t, schema, query.CellTable), before)
		})
	}
	out, errOut := mustRun(t, 0, schema, "restore", path, "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 2`) || strings.Contains(errOut, "warning") {
		t.Fatalf("the archive as written:\n%s\n%s", out, errOut)
	}
}

// TestRestoreWarnsOnUnverifiedArchives: an operation with no checksum (an archive written
// before operations carried a shard and checksums, or a sealed one downgraded to look like
// it: its seal's fields removed, its version set to 2, its rows moved to shard 9) is refused
// without --unverified, exit 2, naming the flag, with or without --print-sql; with it, it
// restores with a warning, and the plan and the printed SQL name the shard its rows go into.
func TestRestoreWarnsOnUnverifiedArchives(t *testing.T) {
	t.Parallel()
	schema, _, lines, op := compacted(t)
	before := tableState(t, schema, query.CellTable)
	file := rewrite(t, testdb.Unsealed(t, lines, toShard9))
	const note = " carries no checksum (written before archives had one, or with its checksum fields removed): its rows could not be checked for edits (a row moved to another shard, a payload changed)"
	refusal := "Error: " + file + ": operation " + op + note + ", so nothing was restored: compare the plan's shard and ids with what was deleted and pass --unverified to restore it, or choose the file's other operations with --operation\n" +
		"Try: outboxctl --schema " + schema + " restore " + file + " --operation " + op + " --unverified\n"
	for _, args := range [][]string{{"restore", file, "--yes"}, {"restore", file, "--print-sql"}} {
		out, errOut := mustRun(t, 2, schema, args...)
		if out != "" || errOut != refusal {
			t.Fatalf("%v:\nstdout %q\nstderr %q\nwant   %q", args, out, errOut, refusal)
		}
	}
	sameState(t, "after a refused restore", tableState(t, schema, query.CellTable), before)
	warning := "warning: " + file + ": operation " + op + note + "; restored as --unverified asks: compare the plan's shard and ids with what was deleted before confirming\n"
	out, errOut := mustRun(t, 0, schema, "restore", file, "--print-sql", "--unverified")
	if errOut != warning || !strings.Contains(out, "\n-- operation "+op+" (compact): 2 row(s) into shard ORGANIZATION_SCOPE/9\n-- not verified: the operation carries no checksum (") {
		t.Fatalf("--print-sql --unverified:\nstderr %q\nwant   %q\nstdout %s", errOut, warning, out)
	}
	out, errOut = mustRun(t, 0, schema, "restore", file, "--yes", "--unverified", "-o", "json")
	if !strings.Contains(out, `"inserted": 2`) || !strings.HasPrefix(errOut, warning+"Plan:\n  - target: database ") || !strings.Contains(errOut, "\n  - operation "+op+" (compact by ") ||
		!strings.Contains(errOut, ": reinsert 2 of 2 row(s) into "+schema+".sentry_regionoutbox, shard ORGANIZATION_SCOPE/9, ids ") {
		t.Fatalf("restore --unverified:\n%s\n%s", out, errOut)
	}
	after := tableState(t, schema, query.CellTable)
	if len(after) != 4 {
		t.Fatalf("after restore: %d rows, want 4", len(after))
	}
	moved := 0
	for _, r := range after {
		if r.Shard == "9" {
			moved++
		}
	}
	if moved != 2 {
		t.Fatalf("rows in shard 9 after restoring the edited archive: %d, want the 2 the plan named", moved)
	}
}

// counter counts and checks what it is written: the printed SQL, without keeping it.
type counter struct {
	n    int64
	tail []byte
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.tail = append(c.tail, p[max(0, len(p)-64):]...)
	c.tail = c.tail[max(0, len(c.tail)-64):]
	return len(p), nil
}

// TestRestorePrintSQLStreamsPayloads: restore --print-sql of a row with a 16 MiB payload
// allocates about twice the payload (the archive line, then the payload it holds), because
// the SQL is written as it is rendered (main allocated 14× the payload: 237 MB for 16 MiB).
// Not parallel: it counts the bytes the process allocates.
func TestRestorePrintSQLStreamsPayloads(t *testing.T) {
	const size = 16 << 20
	payload := strings.Repeat("it's ", size/5) // quotes: the literal doubles them
	path := filepath.Join(t.TempDir(), "big.jsonl")
	op, err := drain.OpenOperation(path, drain.OperationMeta{Command: "compact", User: "u", Table: query.CellTable, PayloadType: "text", Shard: &drain.ArchiveShard{Scope: 0, ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.Stage([]drain.Row{{ID: 1, ShardScope: 0, ShardID: 1, Category: 2, Payload: &payload}})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Commit(b); err != nil {
		t.Fatal(err)
	}
	op.Close()
	out := &counter{}
	io, _, errOut := render.Test()
	io.Out = out
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := cmd.Main(context.Background(), []string{"restore", path, "--print-sql"}, io)
	runtime.ReadMemStats(&after)
	if code != 0 || errOut.Len() > 0 || out.n < int64(len(payload))+size/5 || !strings.HasSuffix(string(out.tail), "\nCOMMIT;\n") {
		t.Fatalf("exit %d, %d bytes of SQL ending %q\n%s", code, out.n, out.tail, errOut)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(payload))*5/2; got > limit {
		t.Fatalf("restore --print-sql of a %d-byte payload allocated %d bytes, want at most %d", len(payload), got, limit)
	}
}
