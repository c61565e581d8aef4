package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// directApp is the app Main would build for --dsn DSN --schema schema -o json, on test
// streams; tty says whether stdin and stderr are a terminal, answer is what is typed.
func directApp(schema string, tty bool, answer string) (*app, *bytes.Buffer) {
	streams, out, _ := render.Test()
	streams.InTTY, streams.ErrTTY, streams.In = tty, tty, strings.NewReader(answer)
	return &app{io: streams, getenv: streams.Getenv, g: globalOptions{
		DSN: testdb.DSN(), Schema: schema, Silo: "cell", Output: "json", Deployment: "auto",
		StatementTimeout: db.DefaultStatementTimeout, LockTimeout: db.DefaultLockTimeout, ConnectTimeout: db.DefaultConnectTimeout,
	}}, out
}

// auditedDeps are the app's repair dependencies with the audit lines collected.
func auditedDeps(a *app, audited *[]string) factory {
	d := a.factory()
	d.change.audit = func(command string, fields map[string]any) {
		*audited = append(*audited, fmt.Sprint(command, " reason=", fields["reason"]))
	}
	return d
}

// runConfirmed runs a mutation on a terminal answering "y"; it returns what it printed and
// the audit lines it wrote.
func runConfirmed(t *testing.T, schema string, run func(a *app, d factory, yes bool) error) (string, []string) {
	t.Helper()
	a, out := directApp(schema, true, "y\n")
	var audited []string
	if err := run(a, auditedDeps(a, &audited), false); err != nil {
		t.Fatal(err)
	}
	return out.String(), audited
}

// outboxRows reads cols of every row of schema's cell outbox, one line per row, by id.
func outboxRows(t *testing.T, schema, cols string) []string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf("SELECT concat_ws(' ', %s) FROM %s ORDER BY id",
		cols, pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wholeRow is every column a repair or restore may change, times in UTC.
const wholeRow = "id, shard_scope, shard_identifier, category, object_identifier, coalesce(payload::text, 'NULL'), " +
	"(scheduled_from AT TIME ZONE 'UTC')::text, (scheduled_for AT TIME ZONE 'UTC')::text, (date_added AT TIME ZONE 'UTC')::text"

var (
	inBackoffFrom = time.Date(2039, 12, 31, 23, 0, 0, 0, time.UTC)
	inBackoffFor  = time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)
	added         = time.Date(2039, 12, 31, 22, 0, 0, 0, time.UTC)
)

// seedShard seeds shard organization/1 with rows in backoff: objects 1, 1, 1 and 2 of
// ORGANIZATION_UPDATE (category 2), so the first two rows of object 1 are superseded; and
// one row of shard organization/2 that no repair of shard 1 may touch.
func seedShard(t *testing.T) (string, []int64) {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB})
	row := func(shard, object int64, payload string) testdb.Row {
		return testdb.Row{Scope: 0, Shard: shard, Category: 2, Object: object, Payload: testdb.Str(payload),
			ScheduledFrom: inBackoffFrom, ScheduledFor: inBackoffFor, DateAdded: added}
	}
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		row(1, 1, `{"v": 1}`), row(1, 1, `{"v": 2}`), row(1, 1, `{"v": 3}`), row(1, 2, `{"w": 1}`), row(2, 1, `{"other": true}`))
	return schema, ids
}

var orgShard1 = query.ShardKey{Scope: query.Enum{Name: "ORGANIZATION_SCOPE", Value: 0}, ID: 1}

// checkRefusals runs a mutation without a terminal and without --yes, then on a terminal
// answering "n": both exit 2 with their exact error, audit nothing and change no row.
func checkRefusals(t *testing.T, schema string, run func(a *app, d factory, yes bool) error) {
	t.Helper()
	before := outboxRows(t, schema, wholeRow)
	for _, c := range []struct {
		name, answer, want string
		tty                bool
	}{
		{"non-TTY without --yes", "", "`--yes` required when not running interactively", false},
		{"TTY answering n", "n\n", "cancelled: nothing was changed", true},
	} {
		a, out := directApp(schema, c.tty, c.answer)
		var audited []string
		err := run(a, auditedDeps(a, &audited), false)
		if err == nil || err.Error() != c.want || exitCode(context.Background(), err) != ExitUsage || len(audited) != 0 || out.Len() != 0 {
			t.Fatalf("%s: %v (exit %d), audited %v, stdout %q", c.name, err, exitCode(context.Background(), err), audited, out)
		}
		if after := outboxRows(t, schema, wholeRow); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s changed rows:\n%q\nwant\n%q", c.name, after, before)
		}
	}
	var ue *cmdError
	a, _ := directApp(schema, false, "")
	if err := run(a, a.factory(), false); !errors.As(err, &ue) || ue.means != meansUsage {
		t.Fatalf("non-TTY without --yes: %T, want a usage error", err)
	}
}

// TestRunRescheduleDirect calls reschedule's run function: refused off a terminal without
// --yes and cancelled by "n" (exit 2, rows untouched); on a terminal "y" gives every row of
// the shard, and only of the shard, THE_PAST (the last column: scheduled_from kept).
func TestRunRescheduleDirect(t *testing.T) {
	t.Parallel()
	schema, ids := seedShard(t)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	o := rescheduleOptions{repairOptions: repairOptions{Reason: "INC-3"}}
	run := func(_ *app, d factory, yes bool) error {
		o.Yes = yes
		return runReschedule(context.Background(), d, o, target, orgShard1)
	}
	checkRefusals(t, schema, run)

	out, audited := runConfirmed(t, schema, run)
	wantOut := "{\n  \"shard\": \"ORGANIZATION_SCOPE/1\",\n  \"mode\": \"all-rows\",\n  \"rows\": 4,\n  \"next_attempt_before\": \"2040-01-01T00:00:00Z\",\n  \"next_attempt_after\": \"2016-08-01T00:00:00Z\",\n  \"next\": [\n    \"outboxctl inspect shard organization 1\"\n  ]\n}\n"
	if out != wantOut || !reflect.DeepEqual(audited, []string{"reschedule reason=INC-3"}) {
		t.Fatalf("stdout %q, audited %v", out, audited)
	}
	got := outboxRows(t, schema, "id, shard_identifier, (scheduled_for AT TIME ZONE 'UTC')::text, scheduled_from = '2039-12-31 23:00:00+00'")
	want := []string{
		fmt.Sprintf("%d 1 2016-08-01 00:00:00 f", ids[0]), fmt.Sprintf("%d 1 2016-08-01 00:00:00 f", ids[1]),
		fmt.Sprintf("%d 1 2016-08-01 00:00:00 f", ids[2]), fmt.Sprintf("%d 1 2016-08-01 00:00:00 f", ids[3]),
		fmt.Sprintf("%d 2 2040-01-01 00:00:00 t", ids[4]),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows after:\n%q\nwant\n%q", got, want)
	}
}

// TestRunCompactAndRestoreDirect calls compact's and restore's run functions: each refused
// without --yes off a terminal and cancelled by "n" (exit 2, rows untouched, no archive
// written by the refused compact); "y" compacts the two superseded rows into the archive,
// and "y" to restore brings the table back exactly as it was.
func TestRunCompactAndRestoreDirect(t *testing.T) {
	t.Parallel()
	schema, ids := seedShard(t)
	original := outboxRows(t, schema, wholeRow)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	archive := filepath.Join(t.TempDir(), "compact.jsonl")
	o := compactOptions{repairOptions: repairOptions{Reason: "INC-4", Archive: archive, KeepBackoff: true}}
	compact := func(_ *app, d factory, yes bool) error {
		o.Yes = yes
		return runCompact(context.Background(), d, o, target, orgShard1)
	}
	checkRefusals(t, schema, compact)
	if _, err := os.Stat(archive); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused compact wrote its archive: %v", err)
	}

	out, audited := runConfirmed(t, schema, compact)
	op := operationOfCard(t, out)
	// archive_bytes is what the run wrote: the whole file, its only operation's (#40).
	st, err := os.Stat(archive)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := fmt.Sprintf("{\n  \"shard\": \"ORGANIZATION_SCOPE/1\",\n  \"depth_before\": 4,\n  \"deleted\": 2,\n  \"depth_after\": 2,\n  \"head_after\": %d,\n  \"next_attempt_after\": \"2040-01-01T00:00:00Z\",\n  \"backoff\": \"kept (--keep-backoff): the new head waits out the removed head's backoff\",\n  \"archive\": %q,\n  \"archive_bytes\": %d,\n  \"operation\": %q,\n  \"next\": [\n    \"outboxctl inspect shard organization 1\"\n  ],\n  \"undo\": %q\n}\n", ids[2], archive, st.Size(), op, "outboxctl restore "+archive+" --operation "+op)
	if out != wantOut || !reflect.DeepEqual(audited, []string{"compact reason=INC-4"}) {
		t.Fatalf("stdout %q, audited %v", out, audited)
	}
	compacted := outboxRows(t, schema, wholeRow)
	if want := []string{original[2], original[3], original[4]}; !reflect.DeepEqual(compacted, want) {
		t.Fatalf("rows after compact (ids %v):\n%q\nwant\n%q", ids, compacted, want)
	}

	ro := restoreOptions{Path: archive, Reason: "INC-4 undo"}
	restore := func(a *app, d factory, yes bool) error {
		ro.Yes = yes
		return runRestore(context.Background(), d, a.targetLine(""), ro)
	}
	checkRefusals(t, schema, restore)
	out, audited = runConfirmed(t, schema, restore)
	wantOut = fmt.Sprintf("{\n  \"archive\": %q,\n  \"operations\": %q,\n  \"inserted\": 2,\n  \"skipped\": 0,\n  \"next\": [\n    \"outboxctl doctor --check stuck\"\n  ],\n  \"committed_unmarked\": 0,\n  \"left_out\": []\n}\n", archive, op)
	if out != wantOut || !reflect.DeepEqual(audited, []string{"restore reason=INC-4 undo"}) {
		t.Fatalf("stdout %q, audited %v", out, audited)
	}
	if got := outboxRows(t, schema, wholeRow); !reflect.DeepEqual(got, original) {
		t.Fatalf("rows after restore:\n%q\nwant\n%q", got, original)
	}
}

// TestRunSkipDirect calls skip's run function on the newest row of object 1's group:
// refused and cancelled as every mutation (exit 2, rows untouched); "y" deletes the whole
// group (three rows) and nothing else.
func TestRunSkipDirect(t *testing.T) {
	t.Parallel()
	schema, ids := seedShard(t)
	original := outboxRows(t, schema, wholeRow)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	o := skipOptions{repairOptions: repairOptions{Reason: "INC-5", Archive: archive, KeepBackoff: true}, messageArg: messageArg{ID: fmt.Sprint(ids[2])}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	skip := func(_ *app, d factory, yes bool) error {
		o.Yes = yes
		return runSkip(context.Background(), d, o, target, []int64{o.id})
	}
	checkRefusals(t, schema, skip)

	out, audited := runConfirmed(t, schema, skip)
	op := operationOfCard(t, out)
	wantOut := fmt.Sprintf("{\n  \"message\": %d,\n  \"shard\": \"ORGANIZATION_SCOPE/1\",\n  \"deleted\": 3,\n  \"depth_after\": 1,\n  \"head_after\": %d,\n  \"next_attempt_after\": \"2040-01-01T00:00:00Z\",\n  \"backoff\": \"kept (--keep-backoff): the new head waits out the removed head's backoff\",\n  \"archive\": %q,\n  \"operation\": %q,\n  \"next\": [\n    \"outboxctl inspect shard organization 1\"\n  ],\n  \"undo\": %q\n}\n", ids[2], ids[3], archive, op, "outboxctl restore "+archive+" --operation "+op)
	if out != wantOut || !reflect.DeepEqual(audited, []string{"skip reason=INC-5"}) {
		t.Fatalf("stdout %q, audited %v", out, audited)
	}
	if got, want := outboxRows(t, schema, wholeRow), original[3:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows after skip:\n%q\nwant\n%q", got, want)
	}

	// A message that is not there: exit 1, before any prompt.
	a, _ := directApp(schema, false, "")
	o.id = ids[4] + 1000
	err := runSkip(context.Background(), a.factory(), o, target, []int64{o.id})
	if want := fmt.Sprintf("no outbox row with id %d in %s.sentry_regionoutbox (cell silo)", o.id, schema); err == nil || err.Error() != want || exitCode(context.Background(), err) != ExitError {
		t.Fatalf("missing message: %v, want %q (exit 1)", err, want)
	}
}

// operationOfCard is the operation id a compact or skip card printed (-o json).
func operationOfCard(t *testing.T, stdout string) string {
	t.Helper()
	_, after, ok := strings.Cut(stdout, "\"operation\": \"")
	op, _, ok2 := strings.Cut(after, "\"")
	if !ok || !ok2 || op == "" {
		t.Fatalf("no operation in %q", stdout)
	}
	return op
}
