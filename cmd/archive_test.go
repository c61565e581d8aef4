package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// runCLI runs outboxctl in-process against schema and returns its exit code and output.
func runCLI(t *testing.T, schema string, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := render.Test()
	code := cmd.Main(context.Background(), append([]string{"--dsn", testdb.DSN(), "--schema", schema}, args...), io)
	return code, out.String(), errOut.String()
}

// mustRun runs outboxctl and fails the test unless it exits with want.
func mustRun(t *testing.T, want int, schema string, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, schema, args...)
	if code != want {
		t.Fatalf("outboxctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// rowState is a row as restore must bring it back, every value as PostgreSQL prints it.
type rowState struct {
	Scope, Shard, Category, Object, Cell string
	Payload                              string
	PayloadNull                          bool
	From, For, Added                     string
}

// tableState reads every row of the outbox table, by id.
func tableState(t *testing.T, schema, table string) map[int64]rowState {
	t.Helper()
	cell := "NULL::text"
	if strings.Contains(table, "control") {
		cell = "region_name"
	}
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(`SELECT id, shard_scope::text, shard_identifier::text,
		category::text, object_identifier::text, coalesce(%s, '<null>'), coalesce(payload::text, '<SQL NULL>'), payload IS NULL,
		scheduled_from::text, scheduled_for::text, date_added::text FROM %s ORDER BY id`, cell, pgx.Identifier{schema, table}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]rowState{}
	for rows.Next() {
		var id int64
		var s rowState
		if err := rows.Scan(&id, &s.Scope, &s.Shard, &s.Category, &s.Object, &s.Cell, &s.Payload, &s.PayloadNull, &s.From, &s.For, &s.Added); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[int64]rowState) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: table differs\n got: %+v\nwant: %+v", what, got, want)
	}
}

// operationOf reads the operation id a compact or skip printed (-o json).
func operationOf(t *testing.T, stdout string) string {
	t.Helper()
	var card struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal([]byte(stdout), &card); err != nil || card.Operation == "" {
		t.Fatalf("no operation in %q: %v", stdout, err)
	}
	return card.Operation
}

// trickyPayloads are payloads a restore must bring back byte for byte (jsonb: jsonb-equal).
func trickyPayloads(payload fixture.PayloadType) []*string {
	ps := []*string{nil, testdb.Str(`null`), testdb.Str(`{ "b" : 1,"a":[1,  2 ],  "a":3 }`), testdb.Str(`"a JSON string"`),
		testdb.Str("{\"line\": \"one\\ntwo \\\\ \\\"q\\\" é \\u0007\"}"), testdb.Str(`[]`)}
	if payload == fixture.PayloadText {
		ps = append(ps, testdb.Str(`not json {`), testdb.Str("  padded\ttext\r\nwith 'quotes' and \\ and */ -- "), testdb.Str(``), testdb.Str(`NULL`))
	}
	return ps
}

// TestSkipAndRestoreAreByteIdentical skips a group of rows with awkward payloads and exact
// schedules, restores it, and compares every value with what was there before.
func TestSkipAndRestoreAreByteIdentical(t *testing.T) {
	t.Parallel()
	for _, payload := range []fixture.PayloadType{fixture.PayloadText, fixture.PayloadJSONB} {
		t.Run(string(payload), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{Payload: payload})
			base := time.Date(2026, 11, 30, 10, 11, 12, 345678000, time.UTC)
			var rows []testdb.Row
			for i, p := range trickyPayloads(payload) {
				rows = append(rows, testdb.Row{Scope: 0, Shard: 7, Category: 2, Object: 9, Payload: p,
					ScheduledFrom: base.Add(time.Duration(i) * time.Microsecond), ScheduledFor: base.Add(time.Hour + time.Duration(i)*time.Second),
					DateAdded: base.Add(-time.Duration(i) * time.Minute)})
			}
			ids := testdb.Insert(t, schema, query.CellTable, rows...)
			testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: 7, Category: 3, Object: 9, Payload: testdb.Str(`{"other": 1}`)})
			before := tableState(t, schema, query.CellTable)
			archive := filepath.Join(t.TempDir(), "skip.jsonl")
			out, _ := mustRun(t, 0, schema, "skip", fmt.Sprint(ids[0]), "--archive", archive, "--reason", "poison", "--yes", "--keep-backoff", "-o", "json")
			if !strings.Contains(out, fmt.Sprintf(`"deleted": %d`, len(ids))) {
				t.Fatalf("skip deleted: %s", out)
			}
			if n := len(tableState(t, schema, query.CellTable)); n != 1 {
				t.Fatalf("after skip: %d rows, want 1", n)
			}
			mustRun(t, 0, schema, "restore", archive, "--operation", operationOf(t, out), "--yes")
			sameState(t, "after restore", tableState(t, schema, query.CellTable), before)
		})
	}
}

// TestCompactRestoresControlCells compacts a control-silo shard and restores it: the cell
// column comes back too.
func TestCompactRestoresControlCells(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for i := range 6 {
		rows = append(rows, testdb.Row{Cell: "us", Scope: 1, Shard: 5, Category: 0, Object: int64(i % 2), Payload: testdb.Str(fmt.Sprintf(`{"n": %d}`, i))})
	}
	testdb.Insert(t, schema, query.ControlTable, rows...)
	testdb.Insert(t, schema, query.ControlTable, testdb.Row{Cell: "eu", Scope: 1, Shard: 5, Category: 0, Object: 0, Payload: testdb.Str(`{}`)})
	before := tableState(t, schema, query.ControlTable)
	archive := filepath.Join(t.TempDir(), "compact.jsonl")
	out, _ := mustRun(t, 0, schema, "--silo", "control", "--cell", "us", "compact", "user", "5", "--archive", archive, "--yes", "--keep-backoff", "-o", "json")
	if !strings.Contains(out, `"deleted": 4`) {
		t.Fatalf("compact: %s", out)
	}
	mustRun(t, 0, schema, "restore", archive, "--yes")
	sameState(t, "after restore", tableState(t, schema, query.ControlTable), before)
}

// TestRestoreChoosesOperations archives three operations (compact, skip, compact) into one
// file and restores them by operation, by --all (the skip left out), and by filters.
func TestRestoreChoosesOperations(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	for shard := int64(1); shard <= 3; shard++ {
		for i := range 4 {
			testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: shard, Category: 2, Object: int64(i % 2), Payload: testdb.Str(fmt.Sprintf(`{"s": %d, "i": %d}`, shard, i))})
		}
	}
	full := tableState(t, schema, query.CellTable)
	shared := filepath.Join(t.TempDir(), "shared.jsonl")
	out, _ := mustRun(t, 0, schema, "compact", "organization", "1", "--archive", shared, "--yes", "--keep-backoff", "-o", "json")
	compact1 := operationOf(t, out)
	out, _ = mustRun(t, 0, schema, "skip", "8", "--archive", shared, "--reason", "poison", "--yes", "--keep-backoff", "-o", "json")
	skip := operationOf(t, out)
	out, _ = mustRun(t, 0, schema, "compact", "organization", "3", "--archive", shared, "--yes", "--keep-backoff", "-o", "json")
	compact3 := operationOf(t, out)
	afterRepairs := tableState(t, schema, query.CellTable)
	if len(afterRepairs) != 12-2-2-2 {
		t.Fatalf("after the repairs: %d rows, want 6", len(afterRepairs))
	}

	// Several operations: restore refuses to guess, on one line that lists them.
	_, errOut := mustRun(t, 2, schema, "restore", shared, "--yes")
	first := strings.SplitN(errOut, "\n", 2)[0]
	for _, want := range []string{"holds 3 operations", "--operation ID or --all", compact1, skip, compact3} {
		if !strings.Contains(first, want) {
			t.Fatalf("error line %q lacks %q", first, want)
		}
	}
	mustRun(t, 2, schema, "restore", shared, "--operation", "nope", "--yes")
	mustRun(t, 2, schema, "restore", shared, "--operation", skip, "--all", "--yes")
	sameState(t, "after refused restores", tableState(t, schema, query.CellTable), afterRepairs)

	// --operation with --id: one row of the first compact.
	out, _ = mustRun(t, 0, schema, "restore", shared, "--operation", compact1, "--id", "1", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 1`) {
		t.Fatalf("restore --id: %s", out)
	}
	// --all: both compacts, the skip left out and named in the plan.
	out, errOut = mustRun(t, 0, schema, "restore", shared, "--all", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 3`) || !strings.Contains(out, `"skipped": 1`) {
		t.Fatalf("restore --all: %s", out)
	}
	if !strings.Contains(errOut, "left out: skip operation "+skip) || !strings.Contains(errOut, "--operation "+skip) {
		t.Fatalf("the plan does not say the skip is left out:\n%s", errOut)
	}
	if _, ok := tableState(t, schema, query.CellTable)[8]; ok {
		t.Fatal("--all restored the skipped row 8")
	}
	// Twice: nothing to insert, and it says so.
	out, errOut = mustRun(t, 0, schema, "restore", shared, "--all", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 0`) || !strings.Contains(errOut, "nothing to restore: all 4 selected row(s) are already in the table") {
		t.Fatalf("second restore:\n%s\n%s", out, errOut)
	}
	// --shard keeps one shard's rows: the skip of shard 2's rows 6 and 8, named.
	out, _ = mustRun(t, 0, schema, "restore", shared, "--operation", skip, "--shard", "organization/3", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 0`) {
		t.Fatalf("restore --shard organization/3 of a shard-2 skip: %s", out)
	}
	out, _ = mustRun(t, 0, schema, "restore", shared, "--operation", skip, "--shard", "organization/2", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 2`) {
		t.Fatalf("restore --shard organization/2: %s", out)
	}
	sameState(t, "after every restore", tableState(t, schema, query.CellTable), full)
}

// TestDefaultArchiveIsPerOperation: without --archive, every operation gets its own file,
// compressed (archive-OPERATION.jsonl.zst).
func TestDefaultArchiveIsPerOperation(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for i := range 4 {
		testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i % 2), Payload: testdb.Str(`{}`)})
	}
	out, _ := mustRun(t, 0, schema, "skip", "1", "--yes", "--keep-backoff", "-o", "json")
	skip := operationOf(t, out)
	out, _ = mustRun(t, 0, schema, "compact", "organization", "1", "--yes", "--keep-backoff", "-o", "json")
	compact := operationOf(t, out)
	files, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "outboxctl", "archive-*.jsonl*"))
	want := []string{"archive-" + skip + ".jsonl.zst", "archive-" + compact + ".jsonl.zst"}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	if len(got) != 2 || !(got[0] == want[0] && got[1] == want[1] || got[0] == want[1] && got[1] == want[0]) {
		t.Fatalf("archive files %v, want %v", got, want)
	}
	f, err := drain.ReadArchiveFile(files[0], 0)
	if err != nil || len(f.Operations) != 1 || f.Operations[0].User == "" {
		t.Fatalf("one operation with its user per file: %+v, %v", f, err)
	}
}

// TestFailedDeleteLeavesOnlyStagedLines holds a lock that blocks DELETE (not SELECT) from
// another connection, so compact archives its rows, then times out on the DELETE: the table
// keeps every row, the archive marks the batch rolled back, and restore inserts nothing.
func TestFailedDeleteLeavesOnlyStagedLines(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	for i := range 6 {
		testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i % 2), Payload: testdb.Str(`{}`)})
	}
	before := tableState(t, schema, query.CellTable)
	ctx := context.Background()
	locker, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Exec(ctx, "LOCK TABLE "+pgx.Identifier{schema, query.CellTable}.Sanitize()+" IN SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "compact.jsonl")
	_, errOut := mustRun(t, 1, schema, "--lock-timeout", "300ms", "compact", "organization", "1", "--archive", archive, "--yes")
	if !strings.Contains(errOut, "lock") {
		t.Fatalf("compact error does not name the lock:\n%s", errOut)
	}
	_ = locker.Rollback(ctx)
	sameState(t, "after the failed compact", tableState(t, schema, query.CellTable), before)

	f, err := drain.ReadArchiveFile(archive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Operations) != 1 || len(f.Operations[0].Batches) != 1 || f.Operations[0].Batches[0].State != drain.BatchAborted || len(f.Operations[0].Batches[0].Rows) != 4 {
		t.Fatalf("want one rolled-back batch of 4 staged rows: %+v", f.Operations[0])
	}
	out, errOut := mustRun(t, 0, schema, "restore", archive, "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 0`) || !strings.Contains(errOut, "4 row(s) whose DELETE rolled back (ids 1-4): never deleted, not restored") {
		t.Fatalf("restore of a rolled-back batch:\n%s\n%s", out, errOut)
	}

	// Without its marker (a crash before it was written), the batch is staged, not
	// committed: restore reports it, checks the table, and restores nothing by default.
	raw, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(raw)), "\n")
	crashed := filepath.Join(t.TempDir(), "crashed.jsonl")
	if err := os.WriteFile(crashed, []byte(strings.Join(lines[:len(lines)-1], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut = mustRun(t, 0, schema, "restore", crashed, "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 0`) || !strings.Contains(errOut, "4 staged row(s) with no commit marker (ids 1-4), not restored: 4 still in the table") {
		t.Fatalf("restore of an unmarked batch:\n%s\n%s", out, errOut)
	}
	out, _ = mustRun(t, 0, schema, "restore", crashed, "--include-uncommitted", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 0`) || !strings.Contains(out, `"skipped": 4`) {
		t.Fatalf("restore --include-uncommitted of rows that exist: %s", out)
	}
	sameState(t, "after the restores", tableState(t, schema, query.CellTable), before)
}

// execScript runs printed SQL as a psql user would paste it (simple protocol, several
// statements at once).
func execScript(t *testing.T, sql string) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("printed SQL does not run: %v\n%s", err, sql)
	}
}

// uncommented is the commented-out DELETE of a printed repair, with its "-- " taken off.
func uncommented(t *testing.T, sql string) string {
	t.Helper()
	_, del, ok := strings.Cut(sql, "-- -- outboxctl: ")
	if !ok {
		t.Fatalf("no commented-out DELETE in:\n%s", sql)
	}
	// The commented-out DELETE ends at the blank line before the script's ROLLBACK.
	del, _, _ = strings.Cut(del, "\n\n")
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(del), "\n")[1:] {
		if !strings.HasPrefix(l, "-- ") {
			t.Fatalf("a line of the DELETE is not commented out: %q", l)
		}
		b.WriteString(strings.TrimPrefix(l, "-- ") + "\n")
	}
	return b.String()
}

// TestPrintSQLNeverWrites runs compact, skip, restore and demo seed/drop with --print-sql
// and --yes against a real database: no row changes, no schema appears, and what they print
// runs as printed (the repairs' DELETE only once uncommented, in a rolled-back transaction).
func TestPrintSQLNeverWrites(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText})
	for i := range 6 {
		testdb.Insert(t, schema, query.CellTable, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i % 2), Payload: testdb.Str(fmt.Sprintf("not json %d\n'; DROP TABLE x; --", i))})
	}
	before := tableState(t, schema, query.CellTable)
	reason := "INC-9 */ DROP TABLE y; --\nnext line"

	compactSQL, errOut := mustRun(t, 0, schema, "compact", "organization", "1", "--reason", reason, "--print-sql", "--yes")
	if errOut != "" || !strings.Contains(compactSQL, "/* outboxctl compact: INC-9 * / DROP TABLE y; -- next line */") {
		t.Fatalf("compact --print-sql:\n%s\n%s", compactSQL, errOut)
	}
	skipSQL, _ := mustRun(t, 0, schema, "skip", "5", "--reason", reason, "--print-sql", "--yes")
	for _, sql := range []string{compactSQL, skipSQL} {
		execScript(t, sql)
		execScript(t, "BEGIN;\n"+uncommented(t, sql)+"ROLLBACK;")
	}
	sameState(t, "after printing and running compact and skip", tableState(t, schema, query.CellTable), before)

	demo := testdb.NewSchemaName()
	t.Cleanup(func() { testdb.Drop(t, demo) })
	for _, sub := range []string{"seed", "drop"} {
		_, errOut := runCLIExpect(t, 2, "--dsn", testdb.DSN(), "--schema", demo, "demo", sub, "--print-sql", "--yes")
		if !strings.Contains(errOut, "cannot print its work as SQL") {
			t.Fatalf("demo %s --print-sql: %s", sub, errOut)
		}
	}
	var n int
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", demo).Scan(&n); err != nil || n != 0 {
		t.Fatalf("demo seed --print-sql created schema %s (%d, %v)", demo, n, err)
	}

	// restore --print-sql writes nothing; its INSERTs, run by hand, restore byte for byte.
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	out, _ := mustRun(t, 0, schema, "skip", "5", "--archive", archive, "--yes", "--keep-backoff", "-o", "json")
	afterSkip := tableState(t, schema, query.CellTable)
	restoreSQL, _ := mustRun(t, 0, schema, "restore", archive, "--operation", operationOf(t, out), "--reason", reason, "--print-sql", "--yes")
	sameState(t, "after restore --print-sql", tableState(t, schema, query.CellTable), afterSkip)
	execScript(t, restoreSQL)
	sameState(t, "after running the printed restore", tableState(t, schema, query.CellTable), before)
}

// runCLIExpect runs outboxctl with exactly args and wants exit code want.
func runCLIExpect(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	io, out, errOut := render.Test()
	if code := cmd.Main(context.Background(), args, io); code != want {
		t.Fatalf("outboxctl %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out.String(), errOut.String()
}
