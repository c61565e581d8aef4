package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// tableJSON is the whole outbox table, every column, as one JSON text (rows by id): what
// "the rows back byte for byte" compares.
func tableJSON(t *testing.T, schema string) string {
	t.Helper()
	var s string
	if err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf(`SELECT coalesce(json_agg(r ORDER BY r.id)::text, '') FROM %s.sentry_regionoutbox r`,
		pgx.Identifier{schema}.Sanitize())).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// outboxctlBin is the binary for the tests that signal it: the package's one build.
func outboxctlBin(t *testing.T) string {
	t.Helper()
	return SharedBinary(t)
}

// seedCategoryShards seeds organization shards 1..n, each two ORGANIZATION_UPDATE rows (the
// head among them) then an ORGANIZATION_MEMBER_UPDATE row, in backoff: what skip --category
// ORGANIZATION_UPDATE deletes two of and leaves one.
func seedCategoryShards(t *testing.T, n int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, CASE WHEN i < 3 THEN 2 ELSE 3 END, i, ('{"n": ' || s || '}')::jsonb, now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, %d) s, generate_series(1, 3) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize(), n)); err != nil {
		t.Fatal(err)
	}
	return schema
}

// binCommand is the built outboxctl on schema with state as its state directory.
func binCommand(bin, state, schema string, args ...string) *exec.Cmd {
	c := exec.Command(bin, append([]string{"--dsn", testdb.DSN(), "--schema", schema}, args...)...)
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	return c
}

// binRun runs the built outboxctl (binCommand) and fails the test unless it exits with want.
func binRun(t *testing.T, bin, state, schema string, want int, args ...string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := binCommand(bin, state, schema, args...)
	c.Stdout, c.Stderr = &out, &errOut
	_ = c.Run()
	if code := c.ProcessState.ExitCode(); code != want {
		t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, want, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// skipWaitingOnShard2 starts skip --category ORGANIZATION_UPDATE --keep-backoff, a batch a
// shard, over seedCategoryShards' shards with shard 2's newest such row locked (lock, which
// the caller releases): it returns once shard 2's batch, its rows staged in archive, waits on
// that lock before its DELETE.
func skipWaitingOnShard2(t *testing.T, bin, state, schema, archive string) (*exec.Cmd, pgx.Tx, *bytes.Buffer, *syncBuffer) {
	t.Helper()
	ctx := context.Background()
	lock, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Rollback(ctx) })
	if _, err := lock.Exec(ctx, fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_identifier = 2 AND category = 2 ORDER BY id DESC LIMIT 1 FOR UPDATE", pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	c := binCommand(bin, state, schema, "--lock-timeout", "60s", "skip", "--category", "ORGANIZATION_UPDATE", "--keep-backoff", "--batch-shards", "1", "--archive", archive, "--yes", "-o", "json")
	out, errs := &bytes.Buffer{}, &syncBuffer{}
	c.Stdout, c.Stderr = out, errs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "shard 2's batch waiting on the lock", func() bool {
		var n int
		_ = testdb.Pool(t).QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%outboxctl skip%' AND query LIKE '%"+schema+"%'").Scan(&n)
		return n > 0
	})
	return c, lock, out, errs
}

// TestBulkSkipResumeAfterKillRestoresEveryRow (#23): skip --category ORGANIZATION_UPDATE
// --keep-backoff over 3 shards, a batch a shard, is SIGKILLed while shard 2's batch waits on
// a row lock a second connection holds: shard 1 done (the journal counts 1 operation), shard
// 2's rows already staged in the archive as operation ID.2 with no marker. While it waits, a
// resume is refused in one line (exit 1: its journal is locked). The resume after the kill
// numbers on from the archive (ID.3, ID.4, never a second ID.2) and keeps the run's
// --keep-backoff; restore FILE --all --include-skipped then gives every row back byte for
// byte (the table as seeded). A resume given --keep-backoff of a run without it is refused
// (exit 2), its Try line runs.
func TestBulkSkipResumeAfterKillRestoresEveryRow(t *testing.T) {
	t.Parallel()
	bin := outboxctlBin(t)
	state := t.TempDir()
	ctx := context.Background()
	schema := seedCategoryShards(t, 3)
	before := tableJSON(t, schema)
	archive := filepath.Join(t.TempDir(), "my dir", "a;b.jsonl")
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		return binRun(t, bin, state, schema, want, args...)
	}

	c, lock, _, _ := skipWaitingOnShard2(t, bin, state, schema, archive)
	journals, _ := filepath.Glob(filepath.Join(state, "outboxctl", "bulk-*.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals %v", journals)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(journals[0]), "bulk-"), ".jsonl")
	// The run still goes: its resume is refused, nothing changed.
	if _, errOut := run(ExitError, "skip", "--resume", id, "--yes"); errOut != "Error: operation "+id+" is running (or being resumed) in another process: its journal is locked; nothing was changed: resume it once that process has ended\n" {
		t.Errorf("resume while the run goes:\n%s", errOut)
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	_ = lock.Rollback(ctx)
	if b, _ := os.ReadFile(archive); !strings.Contains(string(b), `"op":"`+id+`.2"`) || strings.Contains(string(b), `"kind":"commit","op":"`+id+`.2"`) {
		t.Fatalf("the killed batch did not stage %s.2 unmarked:\n%s", id, b)
	}
	// A kill can also cut the archive's last line short (here, written as it would leave it):
	// the resume seals it and restore skips it, where it used to refuse the whole file.
	b, _ := os.ReadFile(archive)
	cut := strings.Count(string(b), "\n") + 1
	if err := os.WriteFile(archive, append(b, `{"v":3,"kind":"row","op":"`+id+`.2","batch":9,"id":7`...), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut := run(0, "skip", "--resume", id, "--yes")
	// Shard 2's killed batch never committed: the resume settles it (its rows are in the
	// table) and marks it rolled back.
	if note := archive + ": 1 batch(es) of an earlier run had no marker, settled against the table and marked: 0 committed (0 row(s) deleted and archived: restore puts them back), 1 not committed (their rows are still in the table)\n"; !strings.Contains(errOut, note) {
		t.Errorf("the resume does not settle the killed batch:\n%s\nwant %s", errOut, note)
	}
	restore := "restore\toutboxctl --schema " + schema + " restore '" + archive + "' --all --include-skipped\n"
	if !strings.Contains(out, "selected\t2\ndone\t2\n") || !strings.Contains(out, "operations\t2\n") || !strings.Contains(out, restore) {
		t.Errorf("resume:\n%s\nwant its restore line %s", out, restore)
	}
	b, _ = os.ReadFile(archive)
	if n := strings.Count(string(b), `"kind":"operation","op":"`+id+`.2"`); n != 1 || !strings.Contains(string(b), `"op":"`+id+`.4"`) {
		t.Errorf("%d headers of %s.2 (want 1, the resume's shards as .3 and .4):\n%s", n, id, b)
	}
	if due := fmt.Sprint(dueShards(t, schema)); due != "[]" {
		t.Errorf("due shards %s: the resume did not keep the run's --keep-backoff", due)
	}
	out, errOut = run(0, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	torn := fmt.Sprintf("%s: line %d was cut short by a kill and a later run went on after it (its batch, if any, reads as staged): skipped\n", archive, cut)
	if !strings.Contains(out, `"inserted": 6`) || !strings.Contains(errOut, torn) {
		t.Errorf("restore:\n%s\n%s\nwant the warning %s", out, errOut, torn)
	}
	if after := tableJSON(t, schema); after != before {
		t.Errorf("the table after restore differs from the seeded one:\n%s\nwant\n%s", after, before)
	}

	// A run without --keep-backoff: its resume with --keep-backoff is refused, the Try runs.
	out, _ = run(0, "skip", "--category", "ORGANIZATION_MEMBER_UPDATE", "--scope", "organization", "--reason", "INC 1", "--yes", "-o", "json")
	second := jsonField(t, out, "operation")
	_, errOut = run(ExitUsage, "skip", "--resume", second, "--keep-backoff", "--reason", "INC 1", "--yes")
	want := "Error: operation " + second + " ran without --keep-backoff (its shards whose head row it removed were made due now): resume it without --keep-backoff\nTry: outboxctl --schema " + schema + " skip --resume " + second + " --reason 'INC 1' --yes\n"
	if errOut != want {
		t.Errorf("resume with --keep-backoff:\n%s\nwant\n%s", errOut, want)
	}
	if _, errOut := run(0, "skip", "--resume", second, "--reason", "INC 1", "--yes"); !strings.Contains(errOut, "nothing left of operation "+second) {
		t.Errorf("the Try line:\n%s", errOut)
	}
}

// TestBulkCompactWithNothingArchivedPrintsNoRestore (#23): a bulk compact of shards with no
// superseded row archives nothing: the summary says 0 operations and offers no restore line
// (its file was never written).
func TestBulkCompactWithNothingArchivedPrintsNoRestore(t *testing.T) {
	t.Parallel()
	schema := seedStuckShards(t, 2, 2)
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	streams, out, errOut := render.Test()
	code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "compact", "--scope", "organization", "--archive", archive, "--yes"}, streams)
	if code != ExitOK || strings.Contains(out.String(), "restore") || !strings.Contains(out.String(), "done\t2\n") {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	if _, err := os.Stat(archive); !os.IsNotExist(err) {
		t.Errorf("the archive exists (%v)", err)
	}
}

// jsonField is the string field name of a bulk summary's card in out.
func jsonField(t *testing.T, out, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, `"`+name+`": "`)
	v, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("no %s in:\n%s", name, out)
	}
	return v
}

// TestBulkResumeSettlesACommittedUnmarkedBatch (#36 High 1): a skip --category over 2 shards,
// a batch a shard, that died after its second batch's DELETE committed and before that
// batch's commit marker and journal line (written here as such a kill leaves them): the resume
// settles the batch against the table (its ids are gone: committed), says so, and writes its
// commit marker, checksummed, so that restore reads the file unedited and puts back all 4 rows
// as committed ones; the table is as seeded. A run appending to the file (a single-shard
// compact --archive) finds nothing left to settle.
func TestBulkResumeSettlesACommittedUnmarkedBatch(t *testing.T) {
	t.Parallel()
	bin := outboxctlBin(t)
	state := t.TempDir()
	schema := seedCategoryShards(t, 2)
	before := tableJSON(t, schema)
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		return binRun(t, bin, state, schema, want, args...)
	}
	out, _ := run(0, "skip", "--category", "ORGANIZATION_UPDATE", "--keep-backoff", "--batch-shards", "1", "--archive", archive, "--yes", "-o", "json")
	id := jsonField(t, out, "operation")
	// keep is how much of the last line the kill let through.
	cutLast := func(path, kind string, keep func(string) int) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, kind) {
			t.Fatalf("%s's last line is not %s: %s", path, kind, last)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")+last[:keep(last)]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cutLast(archive, `"kind":"commit","op":"`+id+`.2"`, func(string) int { return 0 })
	// The journal's batch line is cut in half (#36 Medium 5): the resume reads on without it.
	journal := filepath.Join(state, "outboxctl", "bulk-"+id+".jsonl")
	cutLast(journal, `"finished":[[0,2]]`, func(l string) int { return len(l) / 2 })

	_, errOut := run(0, "skip", "--resume", id, "--yes")
	if warn := "warning: " + journal + ": the last line was cut short (a write a kill interrupted): ignored; that batch's shards are worked on again (those it did are found done)\n"; !strings.Contains(errOut, warn) {
		t.Errorf("the resume does not warn of the cut journal line:\n%s\nwant %s", errOut, warn)
	}
	note := archive + ": 1 batch(es) of an earlier run had no marker, settled against the table and marked: 1 committed (2 row(s) deleted and archived: restore puts them back), 0 not committed (their rows are still in the table)\n"
	if !strings.Contains(errOut, note) {
		t.Errorf("the resume does not say it settled the batch:\n%s\nwant %s", errOut, note)
	}
	if b, _ := os.ReadFile(archive); !strings.Contains(string(b), `"kind":"commit","op":"`+id+`.2"`) {
		t.Errorf("no commit marker of %s.2:\n%s", id, b)
	}
	if _, errOut := run(0, "compact", "organization", "1", "--archive", archive, "--yes"); strings.Contains(errOut, "settled") {
		t.Errorf("a later run settled again:\n%s", errOut)
	}
	out, errOut = run(0, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 4`) || !strings.Contains(out, `"committed_unmarked": 0`) {
		t.Errorf("restore:\n%s\n%s", out, errOut)
	}
	if after := tableJSON(t, schema); after != before {
		t.Errorf("the table after restore differs from the seeded one:\n%s\nwant\n%s", after, before)
	}
}

// TestBulkSkipOutOfDiskAtTheMarkersCountsWhatCommitted (#36 High 2): a skip --category over 3
// shards, a batch a shard, whose file size limit (RLIMIT_FSIZE, as a full disk) is set to its
// archive's size while shard 2's batch, its rows staged, waits on a row lock before its
// DELETE: the DELETE commits, the commit markers cannot be written. The summary counts what
// the database committed (2 shards done, 4 rows, 1 unmarked, 1 left: never "failed"), the
// error line names the restore that puts them back, and that restore (settling the unmarked
// batch against the table) gives the table back as seeded.
func TestBulkSkipOutOfDiskAtTheMarkersCountsWhatCommitted(t *testing.T) {
	t.Parallel()
	bin := outboxctlBin(t)
	state := t.TempDir()
	ctx := context.Background()
	schema := seedCategoryShards(t, 3)
	before := tableJSON(t, schema)
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	c, lock, out, errs := skipWaitingOnShard2(t, bin, state, schema, archive)
	st, err := os.Stat(archive)
	if err != nil {
		t.Fatal(err)
	}
	full := uint64(st.Size())
	if err := unix.Prlimit(c.Process.Pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: full, Max: full}, nil); err != nil {
		t.Fatal(err)
	}
	_ = lock.Rollback(ctx)
	_ = c.Wait()
	if code := c.ProcessState.ExitCode(); code != ExitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errs.String())
	}
	var sum struct {
		Summary drain.BulkCard `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := sum.Summary.BulkCounts; got.Done != 2 || got.Failed != 0 || got.Rows != 4 || got.Unmarked != 1 || got.Left != 1 {
		t.Errorf("summary %+v, want 2 done, 4 rows, 1 unmarked, 1 left, none failed\n%s", got, out.String())
	}
	restore := "outboxctl --schema " + schema + " restore " + archive + " --all --include-skipped puts them back"
	if !strings.Contains(errs.String(), "Error: skip: 2 shard(s) done (4 row(s) changed), but the archive's commit markers of the last batch's 1 shard(s) could not be written (") || !strings.Contains(errs.String(), restore) {
		t.Errorf("the error line does not say what committed or name %q:\n%s", restore, errs.String())
	}
	if st, _ := os.Stat(archive); uint64(st.Size()) != full {
		t.Fatalf("the archive grew past the limit: %d > %d", st.Size(), full)
	}
	res, errOut := binRun(t, bin, state, schema, 0, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	if !strings.Contains(res, `"inserted": 4`) || !strings.Contains(res, `"committed_unmarked": 2`) {
		t.Errorf("restore:\n%s\n%s", res, errOut)
	}
	if after := tableJSON(t, schema); after != before {
		t.Errorf("the table after restore differs from the seeded one:\n%s\nwant\n%s", after, before)
	}
}

// TestBulkResumeRefusesAnotherSchemaOrArchive (#36 Low 16, Low 14): a resume given another
// --schema than its run's is refused (exit 2) with a Try that names the run's own schema (it
// repeated this invocation's), and runs as printed; a resume given --archive of another file
// than the run's is refused (exit 2: it went on writing to the run's file and ignored the
// flag), its Try without --archive runs; the run's own file is accepted.
func TestBulkResumeRefusesAnotherSchemaOrArchive(t *testing.T) {
	t.Parallel()
	bin := outboxctlBin(t)
	state := t.TempDir()
	schema := seedCategoryShards(t, 2)
	other := testdb.Schema(t, fixture.Options{})
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	out, _ := binRun(t, bin, state, schema, 0, "skip", "--category", "ORGANIZATION_UPDATE", "--archive", archive, "--yes", "-o", "json")
	id := jsonField(t, out, "operation")

	_, errOut := binRun(t, bin, state, other, ExitUsage, "skip", "--resume", id, "--yes")
	try := "Try: outboxctl --schema " + schema + " skip --resume " + id + "\n"
	if !strings.HasSuffix(errOut, try) {
		t.Errorf("another schema:\n%s\nwant the Try %s", errOut, try)
	}
	c := exec.Command(bin, append(strings.Fields(strings.TrimSuffix(strings.TrimPrefix(try, "Try: outboxctl "), "\n")), "--dsn", testdb.DSN(), "--yes")...)
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), "nothing left of operation "+id) {
		t.Errorf("the Try line: %v\n%s", err, b)
	}

	elsewhere := filepath.Join(t.TempDir(), "b.jsonl")
	_, errOut = binRun(t, bin, state, schema, ExitUsage, "skip", "--resume", id, "--archive", elsewhere, "--yes")
	want := "Error: operation " + id + " archives to " + archive + ", its own file: a resume goes on writing there, so it takes no other --archive (" + elsewhere + ")\n" +
		"Try: outboxctl --schema " + schema + " skip --resume " + id + " --yes\n"
	if errOut != want {
		t.Errorf("another archive:\n%s\nwant\n%s", errOut, want)
	}
	if _, errOut := binRun(t, bin, state, schema, 0, "skip", "--resume", id, "--archive", archive, "--yes"); !strings.Contains(errOut, "nothing left of operation "+id) {
		t.Errorf("the run's own archive:\n%s", errOut)
	}
	if _, err := os.Stat(elsewhere); !os.IsNotExist(err) {
		t.Errorf("the refused archive was written (%v)", err)
	}
}
