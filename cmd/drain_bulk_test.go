package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedStuckShards seeds organization shards 1..n with two coalesce groups of two rows each,
// all in backoff, and shard 100 with one row due now (not stuck: no --stuck drain touches it).
func seedDrainShards(t *testing.T, n int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB})
	var rows []testdb.Row
	for s := 1; s <= n; s++ {
		for i := range 4 {
			rows = append(rows, testdb.Row{Scope: 0, Shard: int64(s), Category: 2, Object: int64(i % 2), Payload: testdb.Str(fmt.Sprintf(`{"s": %d, "i": %d}`, s, i)),
				ScheduledFrom: inBackoffFrom, ScheduledFor: inBackoffFor, DateAdded: added})
		}
	}
	rows = append(rows, testdb.Row{Scope: 0, Shard: 100, Category: 2, Object: 1, Payload: testdb.Str(`{}`), DateAdded: added})
	testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
	return schema
}

// shardsLeft is how many rows each shard holds, "shard:rows" in shard order.
func shardsLeft(t *testing.T, schema string) string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), "SELECT shard_identifier || ':' || count(*) FROM "+
		pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()+" GROUP BY shard_identifier ORDER BY shard_identifier")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// bulkDrainOut is drain SELECTORS -o json: the rows per shard and the totals.
type bulkDrainOut struct {
	Shards []struct {
		Shard     int64   `json:"shard_identifier"`
		Status    string  `json:"outcome"`
		Delivered int     `json:"delivered"`
		Discarded int     `json:"discarded"`
		Deleted   int64   `json:"deleted"`
		Left      *int64  `json:"left"`
		Error     *string `json:"error"`
		Operation *string `json:"operation"`
	} `json:"shards"`
	Totals map[string]any `json:"summary"`
}

func (b bulkDrainOut) rows() string {
	var parts []string
	for _, s := range b.Shards {
		left := "?"
		if s.Left != nil {
			left = fmt.Sprint(*s.Left)
		}
		parts = append(parts, fmt.Sprintf("%d:%s:%d:%d:%s", s.Shard, s.Status, s.Delivered, s.Deleted, left))
	}
	return strings.Join(parts, " ")
}

func runBulkDrain(t *testing.T, ctx context.Context, schema string, args ...string) (int, bulkDrainOut, string) {
	t.Helper()
	streams, out, errOut := render.Test()
	base := []string{"--dsn", testdb.DSN(), "--schema", schema, "-o", "json", "drain"}
	code := Main(ctx, append(base, args...), streams)
	var b bulkDrainOut
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &b); err != nil {
			t.Fatalf("stdout is not the document: %v\n%s", err, out)
		}
	}
	return code, b, errOut.String()
}

// failShard3 is an exec handler that fails every message of shard 3.
const failShard3 = `exec:! grep -q '"shard_identifier":3,'`

// TestDrainSelected drains the stuck shards 3 at a time through the real command: every
// selected shard delivered and emptied, the kill-switched one skipped and untouched, the
// shard that is not stuck untouched; one audit line; a failing shard is exit 6 (the others
// drained), only failing shards exit 1, a locked shard is "being drained" and exit 0.
func TestDrainSelected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("all", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 6)
		streams, _, errOut := render.Test()
		if code := Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "killswitch", "add", "organization", "4", "--yes"}, streams); code != 0 {
			t.Fatalf("killswitch add: %d %s", code, errOut)
		}
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "3", "--handler", "exec:cat > /dev/null", "--reason", "INC-23", "--yes")
		if want := "1:done:2:4:0 2:done:2:4:0 3:done:2:4:0 4:kill-switched:0:0:4 5:done:2:4:0 6:done:2:4:0"; code != 0 || out.rows() != want {
			t.Fatalf("exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
		}
		if got := shardsLeft(t, schema); got != "4:4 100:1" {
			t.Fatalf("rows left %s", got)
		}
		if n := strings.Count(stderr, `"command":"drain"`); n != 1 || !strings.Contains(stderr, "kill switch: 1 selected shard(s) are disabled") ||
			out.Totals["delivered"] != float64(10) || out.Totals["done"] != float64(5) || out.Totals["kill_switched"] != float64(1) {
			t.Fatalf("audit lines %d, totals %v\n%s", n, out.Totals, stderr)
		}
	})
	t.Run("one fails", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 5)
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "2", "--handler", failShard3, "--mode", "exact", "--yes")
		if want := "1:done:2:4:0 2:done:2:4:0 3:failed:0:0:4 4:done:2:4:0 5:done:2:4:0"; code != ExitPartial || out.rows() != want ||
			out.Shards[2].Error == nil || !strings.Contains(*out.Shards[2].Error, "delivery of message") ||
			!strings.Contains(stderr, "Error: 1 of 5 shard(s) failed (the error column says why); 4 drained, 8 message(s) delivered") {
			t.Fatalf("exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
		}
		if got := shardsLeft(t, schema); got != "3:4 100:1" {
			t.Fatalf("rows left %s", got)
		}
	})
	t.Run("fail fast", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 5)
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--handler", failShard3, "--fail-fast", "--yes")
		if want := "1:done:2:4:0 2:done:2:4:0 3:failed:0:0:4 4:not started:0:0:4 5:not started:0:0:4"; code != ExitPartial || out.rows() != want {
			t.Fatalf("exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
		}
	})
	t.Run("all fail", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 5)
		list := filepath.Join(t.TempDir(), "shards.txt")
		if err := os.WriteFile(list, []byte("organization 3\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runBulkDrain(t, ctx, schema, "--shards-from", list, "--parallel", "4", "--handler", failShard3, "--yes")
		if code != ExitError || out.rows() != "3:failed:0:0:4" || !strings.Contains(stderr, "Error: every drained shard failed") {
			t.Fatalf("exit %d, rows %s\n%s", code, out.rows(), stderr)
		}
	})
	t.Run("a stream co-process per worker", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 6)
		pids := filepath.Join(t.TempDir(), "pids")
		handler := "stream:echo $$ >> " + pids + "; exec python3 testdata/stream/bench_handler.py"
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "3", "--handler", handler, "--yes")
		if want := "1:done:2:4:0 2:done:2:4:0 3:done:2:4:0 4:done:2:4:0 5:done:2:4:0 6:done:2:4:0"; code != 0 || out.rows() != want {
			t.Fatalf("exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
		}
		b, err := os.ReadFile(pids)
		if err != nil {
			t.Fatal(err)
		}
		// One per worker: the handler checked before the claim never starts its co-process.
		if lines := strings.Fields(string(b)); len(lines) != 3 {
			t.Fatalf("co-processes started: %q, want 3 (one per worker)", lines)
		}
	})
	t.Run("being drained", func(t *testing.T) {
		t.Parallel()
		schema := seedDrainShards(t, 3)
		holder, err := testdb.Pool(t).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback(ctx)
		if _, err := holder.Exec(ctx, "SELECT id FROM "+pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()+" WHERE shard_identifier = 2 ORDER BY id LIMIT 1 FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "2", "--handler", "exec:cat > /dev/null", "--yes")
		if want := "1:done:2:4:0 2:being drained:0:0:4 3:done:2:4:0"; code != 0 || out.rows() != want || out.Totals["being_drained"] != float64(1) {
			t.Fatalf("exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
		}
	})
}

// TestDrainSelectedWritesNothingUntilConfirmed: --dry-run and --print-sql claim nothing,
// a selector without a criterion, a selector flag with SCOPE ID, discard and a bad
// --parallel are usage errors (exit 2), and without --yes off a terminal nothing is drained.
func TestDrainSelectedWritesNothingUntilConfirmed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := seedDrainShards(t, 3)
	before := outboxRows(t, schema, wholeRow)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--stuck", "--dry-run", "--parallel", "2"}, 0, "drain 3 shard(s) of"},
		{[]string{"--stuck", "--print-sql"}, 0, ""},
		{[]string{"--stuck", "--handler", "exec:cat"}, ExitUsage, "`--yes` required"},
		{[]string{"--parallel", "2", "--handler", "exec:cat", "--yes"}, ExitUsage, "select the shards to work on"},
		{[]string{"organization", "1", "--stuck", "--handler", "exec:cat", "--yes"}, ExitUsage, "`--stuck` selects shards"},
		{[]string{"--stuck", "--handler", "discard"}, ExitUsage, "`--yes` required"},
		{[]string{"--stuck", "--handler", "discard", "--dry-run"}, 0, "archive and delete without delivering up to 12 row(s) in 6 coalesce group(s)"},
		{[]string{"--stuck", "--parallel", "0", "--handler", "exec:cat", "--yes"}, ExitUsage, "`--parallel` must be between 1 and 64"},
		{[]string{"--stuck", "--yes"}, ExitUsage, "`--handler` is required"},
	} {
		streams, out, errOut := render.Test()
		code := Main(ctx, append([]string{"--dsn", testdb.DSN(), "--schema", schema, "drain"}, c.args...), streams)
		if code != c.code || !strings.Contains(errOut.String(), c.want) || strings.Contains(errOut.String(), `"audit"`) {
			t.Fatalf("%v: exit %d, want %d with %q\nstdout %s\nstderr %s", c.args, code, c.code, c.want, out, errOut)
		}
		if c.args[1] == "--print-sql" && !strings.Contains(out.String(), "shard_identifier") {
			t.Fatalf("--print-sql printed %s", out)
		}
		if got := outboxRows(t, schema, wholeRow); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("%v changed the rows", c.args)
		}
	}
}

// TestDrainSelectedInterrupted: Ctrl-C while both workers are delivering lets both
// deliveries finish and commit, prints a row per shard and exits 130; the same command
// again drains the rest.
func TestDrainSelectedInterrupted(t *testing.T) {
	t.Parallel()
	schema := seedDrainShards(t, 5)
	dir := t.TempDir()
	handler := fmt.Sprintf(`exec:touch %[1]s/in.$$; while [ ! -e %[1]s/release ]; do sleep 0.01; done; cat > /dev/null`, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code   int
		out    bulkDrainOut
		stderr string
	}
	done := make(chan result)
	go func() {
		code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "2", "--mode", "exact", "--handler", handler, "--yes")
		done <- result{code, out, stderr}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		in, _ := filepath.Glob(filepath.Join(dir, "in.*"))
		if len(in) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two workers never started delivering")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
	cancel()
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if want := "1:interrupted:1:2:2 2:interrupted:1:2:2 3:not started:0:0:4 4:not started:0:0:4 5:not started:0:0:4"; r.code != ExitInterrupted || r.out.rows() != want ||
		!strings.Contains(r.stderr, "interrupted: 0 shard(s) drained, 2 stopped mid-drain, 3 not started, 16 row(s) left in them") {
		t.Fatalf("exit %d, rows %s, want %s\n%s", r.code, r.out.rows(), want, r.stderr)
	}
	code, out, stderr := runBulkDrain(t, context.Background(), schema, "--stuck", "--parallel", "2", "--handler", "exec:cat > /dev/null", "--yes")
	if want := "1:done:1:2:0 2:done:1:2:0 3:done:2:4:0 4:done:2:4:0 5:done:2:4:0"; code != 0 || out.rows() != want || shardsLeft(t, schema) != "100:1" {
		t.Fatalf("again: exit %d, rows %s, want %s\n%s", code, out.rows(), want, stderr)
	}
}

// TestDrainSelectedDiscard: drain --stuck --handler discard archives each drained shard's
// rows in an operation of its own, every operation in the one --archive file, deletes exactly
// them (the kill-switched shard and the shard not stuck untouched), says so per shard
// (discarded, operation) and in the summary (archive, restore line); restore FILE --all
// --include-skipped puts every row back as it was before the claim.
func TestDrainSelectedDiscard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := seedDrainShards(t, 5)
	before := outboxRows(t, schema, wholeRow)
	streams, _, errOut := render.Test()
	if code := Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "killswitch", "add", "organization", "4", "--yes"}, streams); code != 0 {
		t.Fatalf("killswitch add: %d %s", code, errOut)
	}
	archive := filepath.Join(t.TempDir(), "discard.jsonl")
	code, out, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--parallel", "2", "--handler", "discard", "--archive", archive, "--reason", "INC-23 poison", "--yes")
	var rows, ops []string
	for _, s := range out.Shards {
		rows = append(rows, fmt.Sprintf("%d:%s:%d:%d:%d", s.Shard, s.Status, s.Delivered, s.Discarded, s.Deleted))
		if s.Operation != nil {
			ops = append(ops, *s.Operation)
		}
	}
	if want := "1:done:0:2:4 2:done:0:2:4 3:done:0:2:4 4:kill-switched:0:0:0 5:done:0:2:4"; code != 0 || strings.Join(rows, " ") != want || len(ops) != 4 {
		t.Fatalf("exit %d, rows %s, want %s, operations %q\n%s", code, strings.Join(rows, " "), want, ops, stderr)
	}
	if got := shardsLeft(t, schema); got != "4:4 100:1" {
		t.Fatalf("rows left %s", got)
	}
	if out.Totals["archive"] != archive || out.Totals["operations"] != float64(4) || out.Totals["discarded"] != float64(8) || out.Totals["delivered"] != float64(0) ||
		!strings.Contains(stderr, "archiving to "+archive+" (an operation per shard)") || strings.Count(stderr, `"command":"drain"`) != 1 {
		t.Fatalf("totals %v\n%s", out.Totals, stderr)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	// One operation header and one commit marker per shard, a row line per deleted row.
	if n := strings.Count(string(data), `"kind":"operation"`); n != 4 {
		t.Fatalf("%d operations in the archive, want 4", n)
	}
	if n := strings.Count(string(data), `"kind":"commit"`); n != 8 {
		t.Fatalf("%d commit markers, want 8 (one per group: a batch-mode discard stages each group)", n)
	}
	streams, rout, rerr := render.Test()
	if code := Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "restore", archive, "--all", "--include-skipped", "--yes"}, streams); code != 0 {
		t.Fatalf("restore: exit %d\n%s\n%s", code, rout, rerr)
	}
	if got := outboxRows(t, schema, wholeRow); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("restored rows differ:\n%v\nwant\n%v", got, before)
	}
}

// TestDrainSelectedPlanCounts: the plan counts the rows and coalesce groups to drain per
// scope and category (kill-switched shards left out), exactly, beside the shards per scope
// and head category.
func TestDrainSelectedPlanCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for s := int64(1); s <= 3; s++ {
		for i := range 3 { // category 2: 3 rows in 2 groups; category 5: 2 rows in 1 group
			rows = append(rows, testdb.Row{Scope: 0, Shard: s, Category: 2, Object: int64(i % 2), ScheduledFrom: inBackoffFrom, ScheduledFor: inBackoffFor, DateAdded: added})
		}
		for range 2 {
			rows = append(rows, testdb.Row{Scope: 0, Shard: s, Category: 5, Object: 9, ScheduledFrom: inBackoffFrom, ScheduledFor: inBackoffFor, DateAdded: added})
		}
	}
	rows = append(rows, testdb.Row{Scope: 1, Shard: 7, Category: 5, Object: 1, ScheduledFrom: inBackoffFrom, ScheduledFor: inBackoffFor, DateAdded: added})
	testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
	streams, _, errOut := render.Test()
	if code := Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "killswitch", "add", "organization", "3", "--yes"}, streams); code != 0 {
		t.Fatalf("killswitch add: %d %s", code, errOut)
	}
	code, _, stderr := runBulkDrain(t, ctx, schema, "--stuck", "--dry-run", "--parallel", "2")
	for _, want := range []string{
		"deliver and delete up to 11 row(s) in 7 coalesce group(s)",
		"rows to deliver and delete per scope and category: ORGANIZATION_SCOPE ORGANIZATION_UPDATE: 6 row(s), 4 group(s) in 2 shard(s); " +
			"ORGANIZATION_SCOPE AUDIT_LOG_EVENT: 4 row(s), 2 group(s) in 2 shard(s); USER_SCOPE AUDIT_LOG_EVENT: 1 row(s), 1 group(s) in 1 shard(s)",
		"per scope: ORGANIZATION_SCOPE 2, USER_SCOPE 1",
	} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, no %q in the plan:\n%s", code, want, stderr)
		}
	}
}

// TestDrainSelectedJSONShape: drain SELECTORS -o json is the bulk summaries' shape, which
// --shards-from reads back: a top-level object whose "shards" list names each shard by its
// integer shard_scope and shard_identifier (beside the summary card).
func TestDrainSelectedJSONShape(t *testing.T) {
	t.Parallel()
	schema := seedDrainShards(t, 2)
	streams, out, errOut := render.Test()
	if code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "-o", "json", "drain", "--stuck", "--handler", "exec:cat > /dev/null", "--yes"}, streams); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc struct {
		Summary map[string]any   `json:"summary"`
		Shards  []map[string]any `json:"shards"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range doc.Shards {
		got = append(got, fmt.Sprintf("%v/%v", s["shard_scope"], s["shard_identifier"]))
	}
	if doc.Summary == nil || strings.Join(got, " ") != "0/1 0/2" {
		t.Fatalf("shards %q, summary %v\n%s", got, doc.Summary, out)
	}
}

// TestDrainSelectedJSONFeedsShardsFrom: the -o json of a drain SELECTORS run with a failed
// shard, fed back through --shards-from, selects exactly the shards it names that still hold
// rows (the failed one), so a runbook can retry what a run left.
func TestDrainSelectedJSONFeedsShardsFrom(t *testing.T) {
	t.Parallel()
	schema := seedDrainShards(t, 4)
	streams, out, errOut := render.Test()
	code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "-o", "json", "drain", "--stuck", "--handler", failShard3, "--yes"}, streams)
	if code != 6 {
		t.Fatalf("exit %d, want 6 (one shard failed)\n%s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "drain.json")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	streams, out, errOut = render.Test()
	if code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "-o", "json", "shards", "--shards-from", file}, streams); code != 0 {
		t.Fatalf("shards --shards-from the drain's JSON: exit %d\n%s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v/%v", r["shard_scope"], r["shard_identifier"]))
	}
	if strings.Join(got, " ") != "0/3" {
		t.Fatalf("shards selected from the drain's JSON: %q, want [0/3]\n%s", got, out)
	}
}
