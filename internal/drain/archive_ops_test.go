package drain

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

func strp(s string) *string { return &s }

var at = time.Date(2026, 11, 30, 10, 11, 12, 345678000, time.UTC)

// archiveRows are rows whose payloads the old format could not bring back.
func archiveRows(first int64, n int) []Row {
	payloads := []*string{nil, strp("null"), strp("not json {"), strp(`{ "b":1, "a" : [1,2] }`), strp("\"quoted\"\n\t\\ */"), strp("")}
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{ID: first + int64(i), ShardScope: 0, ShardID: 42, Category: 2, ObjectID: int64(i % 3),
			Payload: payloads[i%len(payloads)], ScheduledFrom: at.Add(time.Duration(i) * time.Microsecond),
			ScheduledFor: at.Add(time.Hour), DateAdded: at.Add(-time.Minute)}
	}
	return rows
}

func meta(command string) OperationMeta {
	return OperationMeta{Command: command, Reason: "INC-1", User: "alice", Table: "sentry_regionoutbox", PayloadType: "text", Shard: &ArchiveShard{Scope: 0, ID: 42}}
}

// writeOperation writes one operation: a committed batch, a rolled-back one, a staged one.
func writeOperation(t *testing.T, path, command string, first int64) *Operation {
	t.Helper()
	op, err := OpenOperation(path, meta(command))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	for i, finish := range []func(Batch) error{
		op.Commit,
		func(b Batch) error { return op.Abort(b, errors.New("lock timeout")) },
		func(Batch) error { return nil },
	} {
		b, err := op.Stage(archiveRows(first+int64(10*i), 6))
		if err != nil {
			t.Fatal(err)
		}
		if err := finish(b); err != nil {
			t.Fatal(err)
		}
	}
	return op
}

func TestOperationRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	op := writeOperation(t, path, "compact", 1)
	f, err := ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Operations) != 1 || f.Truncated {
		t.Fatalf("operations: %+v", f.Operations)
	}
	got := f.Operations[0]
	if got.ID != op.Meta.ID || got.User != "alice" || got.Reason != "INC-1" || got.Command != "compact" || got.PayloadType != "text" || got.Started.IsZero() {
		t.Fatalf("operation meta: %+v", got.OperationMeta)
	}
	states := []BatchState{BatchCommitted, BatchAborted, BatchStaged}
	for i, b := range got.Batches {
		if b.State != states[i] || !reflect.DeepEqual(b.Rows, archiveRows(1+int64(10*i), 6)) {
			t.Fatalf("batch %d: %s %+v", i+1, b.State, b.Rows)
		}
	}
	plan, err := PlanRestore(f, RestoreSelection{})
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Operations[0]
	if !reflect.DeepEqual(p.Rows, archiveRows(1, 6)) || !reflect.DeepEqual(p.Aborted, []int64{11, 12, 13, 14, 15, 16}) || !reflect.DeepEqual(p.Uncommitted, []int64{21, 22, 23, 24, 25, 26}) {
		t.Fatalf("plan: %+v", p)
	}
	plan, _ = PlanRestore(f, RestoreSelection{IncludeUncommitted: true})
	if ids := plan.Operations[0].IDs(); IDRanges(ids, 5) != "1-6, 21-26" {
		t.Fatalf("--include-uncommitted restores %v", ids)
	}
}

func TestCommitDeletedRestoresOnlyDeletedIDs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	op, err := OpenOperation(path, meta("skip"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.Stage(archiveRows(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	if err := op.CommitDeleted(b, []int64{2, 4}); err != nil {
		t.Fatal(err)
	}
	op.Close()
	f, err := ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRestore(f, RestoreSelection{Operations: []string{op.Meta.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Operations[0].IDs(); !reflect.DeepEqual(got, []int64{2, 4}) {
		t.Fatalf("restores %v, want [2 4]", got)
	}
}

func TestStageRefusesWhatCannotRoundTrip(t *testing.T) {
	t.Parallel()
	op, err := OpenOperation(filepath.Join(t.TempDir(), "a.jsonl"), meta("compact"))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if _, err := op.Stage([]Row{{ID: 1, Payload: strp("\xff")}}); err == nil || !strings.Contains(err.Error(), "refusing to delete") {
		t.Fatalf("invalid UTF-8 staged: %v", err)
	}
	if _, err := OpenOperation(filepath.Join(t.TempDir(), "b.jsonl"), OperationMeta{Command: "skip", Table: "t"}); err == nil {
		t.Fatal("an operation without a payload type opened")
	}
}

func TestRowsFromResultKeepsOriginalSchedule(t *testing.T) {
	t.Parallel()
	claimed := at.Add(2 * time.Hour)
	res := &query.Result{Columns: archiveColumns, Rows: [][]any{
		{int64(7), int64(0), int64(42), int64(2), int64(9), nil, "null", claimed, claimed, at},
		{int64(8), int64(0), int64(42), int64(2), int64(9), "us", nil, claimed, claimed, at},
	}}
	rows, err := RowsFromResult(res, NewSchedules([]ScheduleGroup{{Schedule: Schedule{From: at, For: at.Add(time.Minute)}, IDs: []int64{7}}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{ID: 7, ShardID: 42, Category: 2, ObjectID: 9, Payload: strp("null"), ScheduledFrom: at, ScheduledFor: at.Add(time.Minute), DateAdded: at},
		{ID: 8, ShardID: 42, Category: 2, ObjectID: 9, Cell: strp("us"), ScheduledFrom: claimed, ScheduledFor: claimed, DateAdded: at},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got %+v\nwant %+v", rows, want)
	}
	if _, err := RowsFromResult(&query.Result{Columns: []string{"id"}}, nil); err == nil {
		t.Fatal("a result without the archive's columns was accepted")
	}
}

// sharedFile writes compact, skip and compact operations into one file.
func sharedFile(t *testing.T) (*ArchiveFile, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	var ids []string
	for i, c := range []string{"compact", "skip", "compact"} {
		ids = append(ids, writeOperation(t, path, c, int64(100*(i+1))).Meta.ID)
	}
	f, err := ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f, ids
}

func TestPlanRestoreByOperation(t *testing.T) {
	t.Parallel()
	f, ids := sharedFile(t)
	_, err := PlanRestore(f, RestoreSelection{})
	var se *SelectionError
	if !errors.As(err, &se) || strings.Contains(se.Msg, "\n") || !strings.Contains(se.Msg, "holds 3 operations: choose with --operation ID or --all") {
		t.Fatalf("several operations without a choice: %v", err)
	}
	for _, id := range ids {
		if !strings.Contains(se.Msg, id) {
			t.Fatalf("error does not list %s: %s", id, se.Msg)
		}
	}
	plan, err := PlanRestore(f, RestoreSelection{All: true})
	if err != nil || len(plan.Operations) != 2 || len(plan.LeftOut) != 1 || plan.LeftOut[0].ID != ids[1] {
		t.Fatalf("--all: %+v %v", plan, err)
	}
	plan, _ = PlanRestore(f, RestoreSelection{All: true, IncludeSkipped: true})
	if len(plan.Operations) != 3 || len(plan.LeftOut) != 0 {
		t.Fatalf("--all --include-skipped: %+v", plan)
	}
	plan, _ = PlanRestore(f, RestoreSelection{Operations: []string{ids[1]}, IDs: []int64{101, 103, 999}})
	if len(plan.Operations) != 1 || len(plan.Operations[0].IDs()) != 0 {
		t.Fatalf("--operation skip --id of another operation: %+v", plan.Operations[0].IDs())
	}
	plan, _ = PlanRestore(f, RestoreSelection{Operations: []string{ids[1]}, IDs: []int64{201, 203, 999}})
	if got := plan.Operations[0].IDs(); !reflect.DeepEqual(got, []int64{201, 203}) {
		t.Fatalf("--operation skip --id: %v", got)
	}
	plan, _ = PlanRestore(f, RestoreSelection{All: true, Shard: &ShardFilter{Scope: 0, ID: 41}})
	if n := len(plan.Operations[0].Rows) + len(plan.Operations[1].Rows); n != 0 {
		t.Fatalf("--shard of another shard kept %d rows", n)
	}
	if _, err := PlanRestore(f, RestoreSelection{Operations: []string{"nope"}}); !errors.As(err, &se) || !strings.Contains(se.Msg, `no operation "nope"`) {
		t.Fatalf("unknown operation: %v", err)
	}
}

func TestPlanRestoreOneSkipNeedsNaming(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "skip.jsonl")
	op := writeOperation(t, path, "skip", 1)
	f, err := ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var se *SelectionError
	if _, err := PlanRestore(f, RestoreSelection{}); !errors.As(err, &se) || !strings.Contains(se.Msg, "--operation "+op.Meta.ID) {
		t.Fatalf("a file of one skip restored without naming it: %v", err)
	}
	if plan, err := PlanRestore(f, RestoreSelection{All: true}); err != nil || len(plan.Operations) != 0 || len(plan.LeftOut) != 1 {
		t.Fatalf("--all on a file of one skip: %+v %v", plan, err)
	}
	for _, sel := range []RestoreSelection{{IncludeSkipped: true}, {Operations: []string{op.Meta.ID}}} {
		if plan, err := PlanRestore(f, sel); err != nil || len(plan.Operations[0].Rows) != 6 {
			t.Fatalf("%+v: %+v %v", sel, plan, err)
		}
	}
}

// The previous release's lines: no marker, payload as raw JSON, cell as region_name.
const legacyLines = `{"schema":"s","table":"sentry_controloutbox","id":3,"shard_scope":1,"shard_identifier":5,"category":0,"object_identifier":5,"region_name":"us","payload":{"a": 1},"scheduled_from":"2026-11-30T10:00:00Z","scheduled_for":"2026-11-30T11:00:00Z","date_added":"2026-11-30T09:00:00Z","archived_at":"2026-11-30T12:00:00Z","command":"drain","reason":"INC-7"}
{"schema":"s","table":"sentry_controloutbox","id":4,"shard_scope":1,"shard_identifier":5,"category":0,"object_identifier":5,"payload":null,"scheduled_from":"2026-11-30T10:00:00Z","scheduled_for":"2026-11-30T11:00:00Z","date_added":"2026-11-30T09:00:00Z","archived_at":"2026-11-30T12:00:01Z","command":"drain","reason":"INC-7"}
{"schema":"s","table":"sentry_controloutbox","id":9,"shard_scope":1,"shard_identifier":5,"category":0,"object_identifier":6,"payload":"not json","scheduled_from":"2026-11-30T10:00:00Z","scheduled_for":"2026-11-30T11:00:00Z","date_added":"2026-11-30T09:00:00Z","archived_at":"2026-11-30T12:00:01Z","command":"skip"}
`

func TestLegacyLinesAreOperationsWithLimits(t *testing.T) {
	t.Parallel()
	f, err := ParseArchive(strings.NewReader(legacyLines), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Operations) != 2 || f.Operations[0].ID != "legacy-1" || !f.Operations[0].Legacy || f.Operations[1].Command != "skip" || f.Operations[0].CellColumn != "region_name" {
		t.Fatalf("legacy operations: %+v", f.Operations)
	}
	rows := f.Operations[0].Batches[0].Restorable()
	if len(rows) != 2 || *rows[0].Payload != `{"a": 1}` || *rows[0].Cell != "us" || rows[1].Payload != nil || f.Operations[0].Batches[0].State != BatchLegacy {
		t.Fatalf("legacy rows: %+v", rows)
	}
	if plan, err := PlanRestore(f, RestoreSelection{All: true, Unverified: true}); err != nil || len(plan.Operations) != 1 || len(plan.LeftOut) != 1 {
		t.Fatalf("--all over legacy operations must leave the legacy skip out: %+v %v", plan, err)
	}
}

func TestParseArchiveRejectsAndTolerates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	writeOperation(t, path, "compact", 1)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A last line cut short is a write interrupted before its sync: ignored, reported.
	f, err := ParseArchive(strings.NewReader(string(good)+`{"v":2,"kind":"row","op":"x","batch":4,"id":`), 0)
	if err != nil || !f.Truncated || len(f.Operations[0].Batches) != 3 {
		t.Fatalf("truncated last line: %+v %v", f, err)
	}
	for name, text := range map[string]string{
		"not json":          "{\n",
		"wrong type":        `{"v":2,"kind":"row","op":"a","batch":"1","id":1}` + "\n",
		"bad op id":         `{"v":2,"kind":"row","op":"a b\u001b[2J","batch":1,"id":1}` + "\n",
		"unknown kind":      `{"v":2,"kind":"drop","op":"a"}` + "\n",
		"future version":    `{"v":4,"kind":"row","op":"a","batch":1,"id":1}` + "\n",
		"row without batch": `{"v":2,"kind":"row","op":"a","id":1}` + "\n",
		"legacy without id": `{"table":"t","command":"drain"}` + "\n",
	} {
		_, err := ParseArchive(strings.NewReader(string(good)+text+string(good)), 0)
		if err == nil || !strings.HasPrefix(err.Error(), "22: ") || strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestIDRanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ids  []int64
		want string
	}{
		{nil, ""}, {[]int64{5}, "5"}, {[]int64{9, 3, 4, 5, 12, 11}, "3-5, 9, 11-12"}, {[]int64{1, 3, 5, 7}, "1, 3, …"}, {[]int64{2, 2, 3}, "2-3"},
	} {
		max := 8
		if len(c.ids) == 4 {
			max = 2
		}
		if got := IDRanges(c.ids, max); got != c.want {
			t.Errorf("IDRanges(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

// TestRestoreShardFilterKeepsTheScope (#36): restore --all --shard user/42 puts back user/42's
// rows, never organization/42's: the same shard id under another scope is another shard.
func TestRestoreShardFilterKeepsTheScope(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	for _, scope := range []int{0, 1} {
		m := meta("compact")
		m.Shard = &ArchiveShard{Scope: scope, ID: 42}
		op, err := OpenOperation(path, m)
		if err != nil {
			t.Fatal(err)
		}
		rows := archiveRows(int64(1+10*scope), 3)
		for i := range rows {
			rows[i].ShardScope = scope
		}
		b, err := op.Stage(rows)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Commit(b); err != nil {
			t.Fatal(err)
		}
		_ = op.Close()
	}
	f, err := ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRestore(f, RestoreSelection{All: true, Shard: &ShardFilter{Scope: 1, ID: 42}})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range plan.Operations {
		got = append(got, p.IDs()...)
	}
	if want := []int64{11, 12, 13}; !reflect.DeepEqual(got, want) {
		t.Errorf("--shard user/42 restores ids %v, want %v (organization/42's are 1-3)", got, want)
	}
}
