package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedStuckShards seeds organization shards 1..n, each in backoff at the cap with rows rows
// of ORGANIZATION_UPDATE (objects 1..rows), and returns the schema.
func seedStuckShards(t *testing.T, n, rows int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	_, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 2, i, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, %d) s, generate_series(1, %d) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize(), n, rows))
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// dueShards are the organization shards whose every row carries reschedule's schedule.
func dueShards(t *testing.T, schema string) []int64 {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(`SELECT shard_identifier FROM %s.sentry_regionoutbox
		GROUP BY shard_identifier HAVING bool_and(scheduled_for = '2016-08-01'::timestamptz) ORDER BY 1`, pgx.Identifier{schema}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// holdRow opens a second connection that locks one row of shard organization/id FOR UPDATE
// (the head, as a Sentry drainer holds it, or the newest), until the test ends.
func holdRow(t *testing.T, schema string, id int64, head bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	order := map[bool]string{true: "id", false: "id DESC"}[head]
	if _, err := tx.Exec(ctx, fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d ORDER BY %s LIMIT 1 FOR UPDATE",
		pgx.Identifier{schema}.Sanitize(), id, order)); err != nil {
		t.Fatal(err)
	}
}

// bulkSummaryJSON is what a bulk repair prints with -o json.
type bulkSummaryJSON struct {
	Summary drain.BulkSummary `json:"summary"`
	Shards  []drain.BulkShard `json:"shards"`
}

func runBulkDirect(t *testing.T, a *app, o bulkOptions, job func(query.ShardSelector) bulkRepair, out *bytes.Buffer) (bulkSummaryJSON, error) {
	t.Helper()
	d := a.factory()
	d.change.audit = func(string, map[string]any) {}
	tg, err := a.target()
	if err != nil {
		t.Fatal(err)
	}
	sel, err := a.shardSelector(o.selectorOptions, "outboxctl test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	runErr := runBulk(context.Background(), d, o, repairOptions{Yes: true, Archive: filepath.Join(t.TempDir(), "bulk.jsonl")}, tg, sel, job(sel))
	var got bulkSummaryJSON
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	return got, runErr
}

func reschedule(query.ShardSelector) bulkRepair { return rescheduleBulk(query.RescheduleAllRows) }

// TestBulkRescheduleSkipsShardBeingDrained: a second connection holds organization/2's head
// row as a Sentry drainer does; reschedule --stuck (batches of 2) makes the other four shards
// due at once, reports organization/2 being drained (not a failure: exit 0) and leaves it.
func TestBulkRescheduleSkipsShardBeingDrained(t *testing.T) {
	t.Parallel()
	schema := seedStuckShards(t, 5, 3)
	holdRow(t, schema, 2, true)
	a, out := directApp(schema, false, "")
	start := time.Now()
	got, err := runBulkDirect(t, a, bulkOptions{selectorOptions: selectorOptions{Stuck: true}, BatchShards: 2, BatchRows: 5000}, reschedule, out)
	if err != nil {
		t.Fatalf("%v (exit %d)", err, exitCode(context.Background(), err))
	}
	if waited := time.Since(start); waited > db5s {
		t.Errorf("took %v: it waited on the drainer's lock", waited)
	}
	s := got.Summary
	if s.Selected != 5 || s.Done != 4 || s.BeingDrained != 1 || s.Failed != 0 || s.Rows != 12 || s.Batches != 3 {
		t.Errorf("summary = %+v", s)
	}
	if want := []int64{1, 3, 4, 5}; !reflect.DeepEqual(dueShards(t, schema), want) {
		t.Errorf("due shards = %v, want %v", dueShards(t, schema), want)
	}
	var drained []int64
	for _, sh := range got.Shards {
		if sh.Outcome == drain.BulkBeingDrained {
			drained = append(drained, sh.ID)
		}
	}
	if !reflect.DeepEqual(drained, []int64{2}) {
		t.Errorf("being drained = %v, want [2]", drained)
	}
}

const db5s = 5 * time.Second

// TestBulkRescheduleLockTimeoutIsPartial: a second connection locks organization/3's newest
// row (not its head: the batch gets the head, then waits on that row); with --lock-timeout
// 200ms its batch gives up, the other shards are done, and the exit is the partial one (6)
// with the failure and its reason in the summary.
func TestBulkRescheduleLockTimeoutIsPartial(t *testing.T) {
	t.Parallel()
	schema := seedStuckShards(t, 4, 3)
	holdRow(t, schema, 3, false)
	a, out := directApp(schema, false, "")
	a.g.LockTimeout = 200 * time.Millisecond
	got, err := runBulkDirect(t, a, bulkOptions{selectorOptions: selectorOptions{Scope: "organization"}, BatchShards: 1, BatchRows: 5000}, reschedule, out)
	if code := exitCode(context.Background(), err); code != ExitPartial {
		t.Fatalf("exit %d (%v), want %d", code, err, ExitPartial)
	}
	if s := got.Summary; s.Done != 3 || s.Failed != 1 || s.Rows != 9 {
		t.Errorf("summary = %+v", s)
	}
	for _, sh := range got.Shards {
		if sh.ID == 3 && (sh.Outcome != drain.BulkFailed || !strings.Contains(sh.Error, "lock")) {
			t.Errorf("organization/3 = %+v, want failed on the lock timeout", sh)
		}
	}
	if want := []int64{1, 2, 4}; !reflect.DeepEqual(dueShards(t, schema), want) {
		t.Errorf("due shards = %v, want %v", dueShards(t, schema), want)
	}
}

// TestBulkSkipLeavesShardBeingDrained: skip --category with a drainer holding one shard's
// head: that shard keeps every row, the others lose exactly their rows of the category.
func TestBulkSkipLeavesShardBeingDrained(t *testing.T) {
	t.Parallel()
	schema := seedStuckShards(t, 3, 2) // 2 rows of category 2 each
	holdRow(t, schema, 1, true)
	a, out := directApp(schema, false, "")
	got, err := runBulkDirect(t, a, bulkOptions{selectorOptions: selectorOptions{Category: "ORGANIZATION_UPDATE"}, BatchShards: 100, BatchRows: 100000}, skipBulk, out)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Summary; s.Done != 2 || s.BeingDrained != 1 || s.Rows != 4 {
		t.Errorf("summary = %+v", s)
	}
	if rows := outboxRows(t, schema, "shard_identifier"); !reflect.DeepEqual(rows, []string{"1", "1"}) {
		t.Errorf("rows left = %v, want organization/1's two", rows)
	}
}

// TestBulkSkipMatchesModel is the differential test of skip --category: random shards (more
// than two batches of them) of random rows of three categories, objects and dates; each
// case's rows left must be what an independent model of the reference's rule leaves: in each
// coalesce group of C with a matching row (of C, added in the window), every row up to the
// group's highest matching id goes, and nothing else.
func TestBulkSkipMatchesModel(t *testing.T) {
	t.Parallel()
	for i, c := range []struct {
		seed          float64
		after, before string // ago, or ""
		scope         string
	}{{0.1, "", "", ""}, {0.2, "90m", "", ""}, {0.3, "", "30m", "organization"}, {0.4, "150m", "45m", ""}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			ctx := context.Background()
			// 230 shards in two scopes, 1-12 rows each, categories 2, 3 and 5 over 3 objects,
			// added 0-3 h ago in random order (ids do not follow date_added).
			if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`SELECT setseed(%g); INSERT INTO %s.sentry_regionoutbox
				(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
				SELECT s %% 2, s, (ARRAY[2, 3, 5])[1 + floor(random() * 3)::int], floor(random() * 3)::int, '{}', now(), '2016-08-01',
				       now() - random() * interval '3 hours'
				  FROM generate_series(1, 230) s, generate_series(1, 12) i WHERE i <= 1 + s %% 12 ORDER BY random()`,
				c.seed, pgx.Identifier{schema}.Sanitize())); err != nil {
				t.Fatal(err)
			}
			at := func(ago string) string { // RFC 3339, so the model and the command read one instant
				if ago == "" {
					return ""
				}
				d, _ := time.ParseDuration(ago)
				return time.Now().Add(-d).UTC().Format(time.RFC3339)
			}
			after, before := at(c.after), at(c.before)
			want, total := skipModel(t, schema, after, before, c.scope)
			a, out := directApp(schema, false, "")
			o := bulkOptions{selectorOptions: selectorOptions{Category: "ORGANIZATION_MEMBER_UPDATE", Scope: c.scope, AddedAfter: after, AddedBefore: before}, BatchShards: 100, BatchRows: 100000}
			got, err := runBulkDirect(t, a, o, skipBulk, out)
			if err != nil {
				t.Fatal(err)
			}
			if got.Summary.Batches < 2 && c.scope == "" {
				t.Errorf("batches = %d: the shape must be larger than a batch", got.Summary.Batches)
			}
			left := outboxRows(t, schema, "id")
			if !reflect.DeepEqual(left, want) {
				t.Errorf("rows left differ from the model: %d left, model %d", len(left), len(want))
			}
			if got.Summary.Rows != int64(total-len(want)) || got.Summary.Rows == 0 {
				t.Errorf("rows_changed %d, model %d", got.Summary.Rows, total-len(want))
			}
		})
	}
}

// skipModel reads the table and returns the ids the reference's rule leaves after skip
// --category ORGANIZATION_MEMBER_UPDATE (3) with the window (durations ago) and scope.
func skipModel(t *testing.T, schema string, after, before, scope string) ([]string, int) {
	t.Helper()
	type row struct {
		id, shard, obj int64
		scope, cat     int
		added          time.Time
	}
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf("SELECT id, shard_scope, shard_identifier, category, object_identifier, date_added FROM %s.sentry_regionoutbox", pgx.Identifier{schema}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.scope, &r.shard, &r.cat, &r.obj, &r.added); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	matches := func(r row) bool {
		if r.cat != 3 || (scope == "organization" && r.scope != 0) {
			return false
		}
		if after != "" {
			if at, _ := time.Parse(time.RFC3339, after); r.added.Before(at) {
				return false
			}
		}
		if before != "" {
			if at, _ := time.Parse(time.RFC3339, before); !r.added.Before(at) {
				return false
			}
		}
		return true
	}
	type group struct {
		scope      int
		shard, obj int64
	}
	upTo := map[group]int64{}
	for _, r := range all {
		if g := (group{r.scope, r.shard, r.obj}); matches(r) && r.id > upTo[g] {
			upTo[g] = r.id
		}
	}
	var left []int64
	for _, r := range all {
		if r.cat == 3 && r.id <= upTo[group{r.scope, r.shard, r.obj}] {
			continue
		}
		left = append(left, r.id)
	}
	sort.Slice(left, func(i, j int) bool { return left[i] < left[j] })
	out := make([]string, len(left))
	for i, id := range left {
		out[i] = fmt.Sprint(id)
	}
	return out, len(all)
}

// interruptedRun runs bin (args after --dsn, --schema and --lock-timeout 30s) with shard
// lockShard's newest row locked, so that the batch of that shard waits; it sends SIGINT once
// a statement of the command waits on the lock and the command noted the signal, then
// releases the lock and returns what the command printed and its exit code.
func interruptedRun(t *testing.T, bin, schema string, lockShard int64, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx := context.Background()
	lock, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx) //nolint:errcheck // released below
	if _, err := lock.Exec(ctx, fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_identifier = %d ORDER BY id DESC LIMIT 1 FOR UPDATE", pgx.Identifier{schema}.Sanitize(), lockShard)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := exec.Command(bin, append([]string{"--dsn", testdb.DSN(), "--schema", schema, "--lock-timeout", "30s"}, args...)...)
	c.Env = append(os.Environ(), env...)
	errs := &syncBuffer{}
	c.Stdout, c.Stderr = &out, errs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a batch waiting on the lock", func() bool {
		var n int
		_ = testdb.Pool(t).QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%outboxctl "+args[0]+"%' AND query LIKE '%"+schema+"%'").Scan(&n)
		return n > 0
	})
	_ = c.Process.Signal(os.Interrupt)
	waitFor(t, "the signal noted", func() bool { return strings.Contains(errs.String(), "stopping after the batch in flight") })
	_ = lock.Rollback(ctx)
	_ = c.Wait()
	return out.String(), errs.String(), c.ProcessState.ExitCode()
}

// TestBulkRescheduleInterruptedContinues: SIGINT while a batch waits on a lock lets that
// batch finish, then stops (exit 130) with done and left counts; the same command run again
// continues with the shards left (what is done no longer matches --stuck).
func TestBulkRescheduleInterruptedContinues(t *testing.T) {
	t.Parallel()
	bin := SharedBinary(t)
	schema := seedStuckShards(t, 6, 2)
	// Shard 2's newest row is locked: batch 2 (batches of 1) waits for it.
	stdout, stderr, code := interruptedRun(t, bin, schema, 2, nil, "reschedule", "--stuck", "--batch-shards", "1", "--yes", "-o", "json")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, stdout, stderr)
	}
	out := bytes.NewBufferString(stdout)
	var errOut bytes.Buffer
	var got bulkSummaryJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if s := got.Summary; !s.Interrupted || s.Done != 2 || s.Left != 4 || s.Rows != 4 {
		t.Errorf("summary = %+v, want 2 done, 4 left, interrupted", s)
	}
	if !strings.Contains(stderr, "interrupted: 2 shard(s) done") {
		t.Errorf("stderr: %s", stderr)
	}
	// Run again: the four left.
	out.Reset()
	errOut.Reset()
	c := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "reschedule", "--stuck", "--yes", "-o", "json")
	c.Stdout, c.Stderr = out, &errOut
	if err := c.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if s := got.Summary; s.Selected != 4 || s.Done != 4 || s.Rows != 8 {
		t.Errorf("second run = %+v, want the 4 left", s)
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(dueShards(t, schema), want) {
		t.Errorf("due shards = %v", dueShards(t, schema))
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBulkResumeAfterInterrupt: reschedule --scope organization (a selector a rerun would
// match whole again) is interrupted after 2 of 6 shards (SIGINT while batch 3 waits on a
// lock: exit 130, the operation id in the summary and the error); --resume ID with the same
// flags does exactly the 4 shards left, and a second resume finds nothing left. Other
// selector flags, another command, or no such operation are refused with one line (exit 2).
func TestBulkResumeAfterInterrupt(t *testing.T) {
	t.Parallel()
	bin := SharedBinary(t)
	state := t.TempDir()
	schema := seedStuckShards(t, 6, 2)
	stdout, stderr, code := interruptedRun(t, bin, schema, 3, []string{"XDG_STATE_HOME=" + state}, "reschedule", "--scope", "organization", "--batch-shards", "1", "--yes", "-o", "json")
	var first struct {
		Summary struct {
			drain.BulkSummary
			Operation string `json:"operation"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &first); err != nil || code != ExitInterrupted {
		t.Fatalf("exit %d (%v)\n%s\n%s", code, err, stdout, stderr)
	}
	command := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, append([]string{"--dsn", testdb.DSN(), "--schema", schema}, args...)...)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		return c
	}
	id := first.Summary.Operation
	if s := first.Summary; s.Done != 3 || s.Left != 3 || id == "" || !strings.Contains(stderr, "go on with exactly the rest with outboxctl --schema "+schema+" --lock-timeout 30s reschedule --batch-shards 1 --yes -o json --resume "+id+"\n") {
		t.Fatalf("summary %+v\n%s", s, stderr)
	}
	resume := func(want int, args ...string) (bulkSummaryJSON, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		c := command(append(args, "--yes", "-o", "json")...)
		c.Stdout, c.Stderr = &out, &errOut
		_ = c.Run()
		var got bulkSummaryJSON
		if code := c.ProcessState.ExitCode(); code != want || (want == 0 && out.Len() > 0 && json.Unmarshal(out.Bytes(), &got) != nil) {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, want, out.String(), errOut.String())
		}
		return got, errOut.String()
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"reschedule", "--stuck", "--resume", id}, "Error: operation " + id + " selected its shards with --scope organization, not --stuck: give the same selector flags, or none, with --resume\n" +
			"Try: outboxctl --schema " + schema + " reschedule --resume " + id + " --yes -o json\n"},
		{[]string{"skip", "--resume", id}, "Error: operation " + id + " is a reschedule run, not outboxctl skip: resume it with outboxctl reschedule --resume " + id + "\n" +
			"Try: outboxctl --schema " + schema + " reschedule --resume " + id + "\n"},
		{[]string{"reschedule", "--resume", "../../etc/passwd"}, "Error: cannot resume ../../etc/passwd: \"../../etc/passwd\" is not an operation id (such as 20261201T101500Z-skip-3fa9c1)\n" +
			"Try: outboxctl --schema " + schema + " reschedule --help\n"},
		{[]string{"compact", "--resume", "20261201T000000Z-compact-000000"}, "Error: no bulk operation 20261201T000000Z-compact-000000 here: --resume takes the operation id of a bulk run on this machine (its audit line's and summary's \"operation\")\n" +
			"Try: outboxctl --schema " + schema + " compact --help\n"},
	} {
		if _, errOut := resume(ExitUsage, tt.args...); errOut != tt.want {
			t.Errorf("%v:\n%s\nwant %s", tt.args, errOut, tt.want)
		}
	}
	got, _ := resume(0, "reschedule", "--scope", "organization", "--resume", id)
	var ids []int64
	for _, sh := range got.Shards {
		ids = append(ids, sh.ID)
	}
	if s := got.Summary; s.Selected != 3 || s.Done != 3 || s.Rows != 6 || !reflect.DeepEqual(ids, []int64{4, 5, 6}) {
		t.Errorf("resumed = %+v, shards %v: want exactly 4, 5 and 6", s, ids)
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(dueShards(t, schema), want) {
		t.Errorf("due shards = %v", dueShards(t, schema))
	}
	if _, errOut := resume(0, "reschedule", "--resume", id); !strings.Contains(errOut, "nothing left of operation "+id) {
		t.Errorf("a second resume: %s", errOut)
	}
}

// TestBulkBeingDrainedIsOneLine (#35): a bulk reschedule that met 2 shards being drained
// says so in one line with the count and the command that retries exactly the shards it
// left (its --resume), and lists neither shard on a terminal; its summary ends with the
// command that checks it (doctor's stuck check), which -o json carries too (next).
func TestBulkBeingDrainedIsOneLine(t *testing.T) {
	t.Parallel()
	schema := seedStuckShards(t, 3, 2)
	holdRow(t, schema, 2, true)
	holdRow(t, schema, 3, true)
	streams, out, errOut := render.Test()
	if code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "reschedule", "--stuck", "--yes"}, streams); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	line := regexp.MustCompile(`(?m)^2 shard\(s\) were being drained \(a drainer held their head row\), left for the next run: (outboxctl --schema \S+ reschedule --yes --resume \S+) retries exactly the 2 shard\(s\) the run left$`).FindStringSubmatch(errOut.String())
	if line == nil {
		t.Fatalf("no one line for the shards being drained:\n%s", errOut)
	}
	if strings.Contains(out.String(), "being drained\t") || strings.Count(out.String(), "being drained") > 1 {
		t.Errorf("a line per shard being drained:\n%s", out)
	}
	next := "outboxctl --schema " + schema + " doctor --check stuck"
	if !strings.HasSuffix(strings.TrimSpace(out.String()), next) {
		t.Errorf("the summary does not end with %q:\n%s", next, out)
	}
	streams, out, errOut = render.Test()
	if code := Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "reschedule", "--scope", "organization", "--yes", "-o", "json"}, streams); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Summary drain.BulkCard `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Summary.Next) != 1 || doc.Summary.Next[0] != next {
		t.Errorf("-o json: %+v, %v\n%s", doc.Summary, err, out)
	}
}
