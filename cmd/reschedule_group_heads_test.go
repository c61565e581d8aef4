package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// reschedule --group-heads (#23): only the lowest row of each coalesce group gets THE_PAST.
// The tests compare the table with a model written here from the reference (§3 "Key
// definitions": the coalesce key is the shard key + category + object_identifier), not with
// the product's SQL.

// seedGroupShards seeds organization shards 1..5 and user shards 1..2, each of 2 categories
// × 3 objects × 4 rows (6 coalesce groups of 4), the ids shuffled across the shard's groups
// (a group's lowest row is not the shard's first rows), every row in backoff at the cap with
// a schedule of its own: a row the reschedule must leave alone differs from its neighbours.
func seedGroupShards(t *testing.T) string {
	t.Helper()
	return seedGroupShardsAt(t, time.Now())
}

// seedGroupShardsAt is seedGroupShards with every time relative to base: two schemas seeded
// at one base hold the same rows, byte for byte.
func seedGroupShardsAt(t *testing.T, base time.Time) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
		SELECT sc, s, c, o, jsonb_build_object('i', i), $1::timestamptz - interval '20 minutes' - i * interval '1 second',
		       $1::timestamptz + interval '40 minutes' - i * interval '1 second', $1::timestamptz - interval '2 hours'
		  FROM generate_series(0, 1) sc, generate_series(1, 5) s, generate_series(2, 3) c, generate_series(1, 3) o, generate_series(1, 4) i
		 WHERE sc = 0 OR s <= 2
		 ORDER BY md5(sc::text || s || c || o || i)`, pgx.Identifier{schema}.Sanitize()), base); err != nil {
		t.Fatal(err)
	}
	return schema
}

// groupRow is one outbox row as the tests compare it: every column as PostgreSQL prints it.
type groupRow struct {
	ID                        int64
	Scope, Shard, Cat, Obj    int64
	Payload, From, For, Added string
	AtPast, FreshFrom         bool
	fromAt, forAt             time.Time
}

// groupRows reads every row of the table by id; FreshFrom says its scheduled_from is at or
// after since (what a reschedule writes: now()).
func groupRows(t *testing.T, schema string, since time.Time) []groupRow {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, category, object_identifier,
		payload::text, scheduled_from::text, scheduled_for::text, date_added::text,
		scheduled_for = '2016-08-01 00:00:00+00'::timestamptz, scheduled_from >= $1, scheduled_from, scheduled_for
		  FROM %s.sentry_regionoutbox ORDER BY id`, pgx.Identifier{schema}.Sanitize()), since)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []groupRow
	for rows.Next() {
		var r groupRow
		if err := rows.Scan(&r.ID, &r.Scope, &r.Shard, &r.Cat, &r.Obj, &r.Payload, &r.From, &r.For, &r.Added, &r.AtPast, &r.FreshFrom, &r.fromAt, &r.forAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type shardKey struct{ Scope, Shard int64 }

// groupHeadIDs is the model's group heads: the lowest id of each (scope, shard, category,
// object) of the shards keep selects.
func groupHeadIDs(rows []groupRow, keep func(shardKey) bool) map[int64]bool {
	lowest := map[[4]int64]int64{}
	for _, r := range rows {
		k := [4]int64{r.Scope, r.Shard, r.Cat, r.Obj}
		if id, ok := lowest[k]; keep(shardKey{r.Scope, r.Shard}) && (!ok || r.ID < id) {
			lowest[k] = r.ID
		}
	}
	heads := map[int64]bool{}
	for _, id := range lowest {
		heads[id] = true
	}
	return heads
}

// assertOnlyHeads checks after against before: each row of heads carries THE_PAST and a
// fresh scheduled_from, every other column as before; every other row is byte for byte as
// before.
func assertOnlyHeads(t *testing.T, before, after []groupRow, heads map[int64]bool) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%d rows after, %d before", len(after), len(before))
	}
	for i, b := range before {
		a, want := after[i], b
		if heads[b.ID] {
			want.From, want.For, want.AtPast, want.FreshFrom, want.fromAt, want.forAt = a.From, a.For, true, true, a.fromAt, a.forAt
		}
		if !reflect.DeepEqual(a, want) {
			t.Errorf("row %d (head: %v):\n got %+v\nwant %+v", b.ID, heads[b.ID], a, want)
		}
	}
}

// sentryClaimDelay is the next delay Sentry's claim (§3.4, prepare_next_from_shard) gives the
// shard: from its lowest-id row, last_delay = max(scheduled_for - scheduled_from, 1 s), next
// delay = min(2 × last_delay, 1 h).
func sentryClaimDelay(rows []groupRow, k shardKey) time.Duration {
	var first *groupRow
	for i := range rows {
		if r := &rows[i]; r.Scope == k.Scope && r.Shard == k.Shard && (first == nil || r.ID < first.ID) {
			first = r
		}
	}
	last := max(first.forAt.Sub(first.fromAt), time.Second)
	return min(2*last, time.Hour)
}

// sentryDue is §3.3's find_scheduled_shards for one shard: a row scheduled at or before now.
func sentryDue(rows []groupRow, k shardKey) bool {
	for _, r := range rows {
		if r.Scope == k.Scope && r.Shard == k.Shard && !r.forAt.After(time.Now()) {
			return true
		}
	}
	return false
}

func allShards(shardKey) bool { return true }

// selectedBy lists the shards `outboxctl shards` selects with flags, as scope/shard.
func selectedBy(t *testing.T, schema string, flags ...string) []string {
	t.Helper()
	out, _ := mustRun(t, 0, schema, append([]string{"shards", "-o", "json"}, flags...)...)
	var got []struct {
		Scope int64 `json:"shard_scope"`
		ID    int64 `json:"shard_identifier"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ids := []string{}
	for _, s := range got {
		ids = append(ids, fmt.Sprintf("%d/%d", s.Scope, s.ID))
	}
	return ids
}

// bulkGroupHeadsJSON is the part of a bulk reschedule's -o json the tests read.
type bulkGroupHeadsJSON struct {
	Summary struct {
		Selected, Done, Failed, Batches int
		BeingDrained                    int    `json:"being_drained"`
		Rows                            int64  `json:"rows_changed"`
		Mode                            string `json:"mode"`
		Operation                       string `json:"operation"`
	} `json:"summary"`
	Shards []struct {
		Scope   int64  `json:"shard_scope"`
		ID      int64  `json:"shard_identifier"`
		Outcome string `json:"outcome"`
		Rows    int64  `json:"rows"`
	} `json:"shards"`
}

// TestRescheduleGroupHeadsBulk: reschedule --stuck --group-heads over 7 shards in batches of
// 2 rewrites exactly each coalesce group's lowest row (42 of 168), every other row byte for
// byte as it was; the plan counts them; the summary and the audit line carry the mode. After
// it Sentry's claim (modelled from §3.4) gives every shard a 2 s delay, §3.3 finds it due,
// and it matches neither --stuck nor --at-cap.
func TestRescheduleGroupHeadsBulk(t *testing.T) {
	t.Parallel()
	schema := seedGroupShards(t)
	before := groupRows(t, schema, time.Now())
	_, plan := mustRun(t, 0, schema, "reschedule", "--stuck", "--group-heads", "--batch-shards", "2", "--dry-run")
	if want := "rows to reschedule (group heads): 42 in 42 coalesce group(s); per scope and category: ORGANIZATION_SCOPE ORGANIZATION_UPDATE: 15 row(s), 15 group(s) in 5 shard(s); ORGANIZATION_SCOPE ORGANIZATION_MEMBER_UPDATE: 15 row(s), 15 group(s) in 5 shard(s); USER_SCOPE"; !strings.Contains(plan, want) ||
		!strings.Contains(plan, "make due now with a fresh backoff, group heads only (--group-heads: the lowest row of each coalesce group): 7 shard(s) holding 168 row(s)") {
		t.Errorf("plan:\n%s\nwant a line starting %q", plan, want)
	}
	since := time.Now()
	out, errOut := mustRun(t, 0, schema, "reschedule", "--stuck", "--group-heads", "--batch-shards", "2", "--yes", "-o", "json")
	var got bulkGroupHeadsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := got.Summary; s.Selected != 7 || s.Done != 7 || s.Batches != 4 || s.Rows != 42 || s.Mode != "group-heads" {
		t.Errorf("summary %+v", s)
	}
	for _, sh := range got.Shards {
		if sh.Outcome != "done" || sh.Rows != 6 {
			t.Errorf("shard %+v, want done with 6 rows", sh)
		}
	}
	if a := auditLine(t, errOut, "reschedule"); a["mode"] != "group-heads" || a["rows_changed"] != float64(42) {
		t.Errorf("audit line %v", a)
	}
	after := groupRows(t, schema, since)
	assertOnlyHeads(t, before, after, groupHeadIDs(before, allShards))
	for _, k := range []shardKey{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {1, 1}, {1, 2}} {
		if d := sentryClaimDelay(after, k); d != 2*time.Second || !sentryDue(after, k) {
			t.Errorf("shard %v: Sentry's next claim gives %v (want 2s), due %v", k, d, sentryDue(after, k))
		}
		if d := sentryClaimDelay(before, k); d != time.Hour {
			t.Fatalf("seed: shard %v claimed before gives %v, want the cap", k, d)
		}
	}
	for _, flag := range []string{"--stuck", "--at-cap"} {
		if sel := selectedBy(t, schema, flag); len(sel) != 0 {
			t.Errorf("shards %s selects %v after the reschedule, want none", flag, sel)
		}
	}
}

// TestRescheduleGroupHeadsSingle: reschedule organization 3 --group-heads rewrites its 6
// group heads (its plan says 6 of its 24 rows), nothing else of it or of any other shard;
// -o json and the audit line carry the mode. Without the flag the mode is all-rows. In the
// control silo it needs --cell, printed too (exit 2).
func TestRescheduleGroupHeadsSingle(t *testing.T) {
	t.Parallel()
	schema := seedGroupShards(t)
	before := groupRows(t, schema, time.Now())
	_, plan := mustRun(t, 0, schema, "reschedule", "organization", "3", "--group-heads", "--dry-run")
	if want := "make shard ORGANIZATION_SCOPE/3 due now with a fresh backoff: group heads only (--group-heads): 6 of its 24 row(s) change, the lowest of each of its 6 coalesce group(s), next attempt currently: in "; !strings.Contains(plan, want) {
		t.Errorf("plan:\n%s\nwant %q", plan, want)
	}
	since := time.Now()
	out, errOut := mustRun(t, 0, schema, "reschedule", "organization", "3", "--group-heads", "--yes", "-o", "json")
	if !strings.Contains(out, `"mode": "group-heads",`) || !strings.Contains(out, `"rows": 6,`) {
		t.Errorf("summary:\n%s", out)
	}
	if a := auditLine(t, errOut, "reschedule"); a["mode"] != "group-heads" || a["rows"] != float64(6) {
		t.Errorf("audit line %v", a)
	}
	after := groupRows(t, schema, since)
	assertOnlyHeads(t, before, after, groupHeadIDs(before, func(k shardKey) bool { return k == shardKey{0, 3} }))
	if d := sentryClaimDelay(after, shardKey{0, 3}); d != 2*time.Second {
		t.Errorf("Sentry's next claim gives %v, want 2s", d)
	}
	// The control silo's groups are a cell's: printed without --cell, the heads would be the
	// lowest across cells.
	if _, errOut := mustRun(t, 2, schema, "--silo", "control", "reschedule", "organization", "1", "--group-heads", "--print-sql"); !strings.Contains(errOut, "pass --cell") {
		t.Errorf("control silo without --cell:\n%s", errOut)
	}
	out, errOut = mustRun(t, 0, schema, "reschedule", "organization", "4", "--yes", "-o", "json")
	if a := auditLine(t, errOut, "reschedule"); !strings.Contains(out, `"mode": "all-rows",`) || a["mode"] != "all-rows" || a["rows"] != float64(24) {
		t.Errorf("default mode: audit %v, summary:\n%s", a, out)
	}
}

// TestRescheduleGroupHeadsSkipsLockedHead: a drainer holds organization/2's head row (its
// lowest id); reschedule --group-heads reports it being drained (exit 0) without waiting
// and leaves every row of it, rewriting the other shards' group heads.
func TestRescheduleGroupHeadsSkipsLockedHead(t *testing.T) {
	t.Parallel()
	schema := seedGroupShards(t)
	before := groupRows(t, schema, time.Now())
	lockRow(t, schema, "SELECT id FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 2 ORDER BY id LIMIT 1 FOR UPDATE")
	since := time.Now()
	out, _ := mustRun(t, 0, schema, "--lock-timeout", "30s", "reschedule", "--scope", "organization", "--group-heads", "--batch-shards", "2", "--yes", "-o", "json")
	if waited := time.Since(since); waited > 10*time.Second {
		t.Errorf("took %v: it waited on the drainer's lock", waited)
	}
	var got bulkGroupHeadsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := got.Summary; s.Selected != 5 || s.Done != 4 || s.BeingDrained != 1 || s.Rows != 24 {
		t.Errorf("summary %+v", s)
	}
	for _, sh := range got.Shards {
		if (sh.ID == 2) != (sh.Outcome == "being drained") {
			t.Errorf("shard %+v", sh)
		}
	}
	assertOnlyHeads(t, before, groupRows(t, schema, since), groupHeadIDs(before, func(k shardKey) bool { return k.Scope == 0 && k.Shard != 2 }))
}

// lockRow holds the row query (its %s: the schema) selects FOR UPDATE on a connection of its
// own until the test ends, and returns the release.
func lockRow(t *testing.T, schema, query string) func() {
	t.Helper()
	ctx := context.Background()
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, fmt.Sprintf(query, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(ctx) }
}

// sameButFrom are rows with scheduled_from's text left out: a printed script and the
// command write now() at their own instants.
func sameButFrom(rows []groupRow) []groupRow {
	out := make([]groupRow, len(rows))
	for i, r := range rows {
		if r.FreshFrom {
			r.From, r.fromAt = "", time.Time{}
		}
		out[i] = r
	}
	return out
}

// TestRescheduleGroupHeadsPrintedSQLRuns: the --print-sql script of both forms with
// --group-heads runs in psql as printed and leaves the same rows as the command (the same
// seed in two schemas), changing nothing when printed.
func TestRescheduleGroupHeadsPrintedSQLRuns(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	for _, form := range [][]string{{"reschedule", "--stuck", "--group-heads", "--batch-shards", "2"}, {"reschedule", "user", "2", "--group-heads"}} {
		t.Run(form[1], func(t *testing.T) {
			t.Parallel()
			base := time.Now()
			byCommand, byScript := seedGroupShardsAt(t, base), seedGroupShardsAt(t, base)
			seeded := groupRows(t, byScript, time.Now())
			script, _ := mustRun(t, 0, byScript, append(form, "--print-sql")...)
			if got := groupRows(t, byScript, time.Now()); !reflect.DeepEqual(got, seeded) {
				t.Fatal("--print-sql changed the table")
			}
			since := time.Now()
			if _, out, err := runPsql(psql, byScript, script); err != nil {
				t.Fatalf("psql: %v\n%s\nscript:\n%s", err, out, script)
			}
			mustRun(t, 0, byCommand, append(form, "--yes")...)
			want, got := sameButFrom(groupRows(t, byCommand, since)), sameButFrom(groupRows(t, byScript, since))
			for i := 0; i < len(want) && i < len(got); i++ {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("the printed script's row differs from the command's:\n got %+v\nwant %+v", got[i], want[i])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d rows after the script, %d after the command", len(got), len(want))
			}
			if n := countFresh(got); n != map[string]int{"--stuck": 42, "user": 6}[form[1]] {
				t.Errorf("%d rows rewritten", n)
			}
		})
	}
}

func countFresh(rows []groupRow) int {
	n := 0
	for _, r := range rows {
		if r.FreshFrom && r.AtPast {
			n++
		}
	}
	return n
}

// TestRescheduleGroupHeadsResume: a --group-heads run whose organization/2 batch fails (a
// group head held past --lock-timeout: exit 6) is resumed with its mode: --group-heads=false
// on it is refused (exit 2, with a Try without the flag), --resume alone rewrites the rest as
// group heads (mode group-heads). --group-heads on the resume of a run without it is refused.
//
// The binary runs with a state directory of its own (the journals), as the other resume tests.
func TestRescheduleGroupHeadsResume(t *testing.T) {
	t.Parallel()
	bin, state := buildBinary(t), t.TempDir()
	mustRun := func(t *testing.T, want int, schema string, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		c := exec.Command(bin, append([]string{"--dsn", testdb.DSN(), "--schema", schema}, args...)...)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1")
		c.Stdout, c.Stderr = &out, &errOut
		_ = c.Run()
		if code := c.ProcessState.ExitCode(); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, want, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	schema := seedGroupShards(t)
	before := groupRows(t, schema, time.Now())
	// organization/2's second group head: the batch locks the shard's head, then waits on it.
	release := lockRow(t, schema, `SELECT id FROM %[1]s.sentry_regionoutbox WHERE id = (SELECT min(id) FROM %[1]s.sentry_regionoutbox
		WHERE shard_scope = 0 AND shard_identifier = 2 GROUP BY category, object_identifier ORDER BY 1 OFFSET 1 LIMIT 1) FOR UPDATE`)
	since := time.Now()
	out, _ := mustRun(t, 6, schema, "--lock-timeout", "200ms", "reschedule", "--scope", "organization", "--group-heads", "--batch-shards", "1", "--yes", "-o", "json")
	var run bulkGroupHeadsJSON
	if err := json.Unmarshal([]byte(out), &run); err != nil || run.Summary.Done != 4 || run.Summary.Failed != 1 || run.Summary.Mode != "group-heads" {
		t.Fatalf("first run (%v):\n%s", err, out)
	}
	release()
	op := run.Summary.Operation
	_, errOut := mustRun(t, 2, schema, "reschedule", "--resume", op, "--group-heads=false", "--yes")
	if want := "Error: operation " + op + " ran with --group-heads (only the lowest row of each coalesce group rewritten): resume it without --group-heads, which keeps the run's mode\nTry: outboxctl --schema " + schema + " reschedule --resume " + op + " --yes\n"; !strings.Contains(errOut, want) {
		t.Errorf("refusal:\n%s\nwant:\n%s", errOut, want)
	}
	out, _ = mustRun(t, 0, schema, "reschedule", "--resume", op, "--yes", "-o", "json")
	var resumed bulkGroupHeadsJSON
	if err := json.Unmarshal([]byte(out), &resumed); err != nil || resumed.Summary.Selected != 1 || resumed.Summary.Done != 1 || resumed.Summary.Rows != 6 || resumed.Summary.Mode != "group-heads" {
		t.Fatalf("resume (%v):\n%s", err, out)
	}
	assertOnlyHeads(t, before, groupRows(t, schema, since), groupHeadIDs(before, func(k shardKey) bool { return k.Scope == 0 }))

	plain := seedGroupShards(t)
	lockRow(t, plain, "SELECT id FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 2 ORDER BY id DESC LIMIT 1 FOR UPDATE")
	out, _ = mustRun(t, 6, plain, "--lock-timeout", "200ms", "reschedule", "--scope", "organization", "--batch-shards", "1", "--yes", "-o", "json")
	if err := json.Unmarshal([]byte(out), &run); err != nil || run.Summary.Failed != 1 || run.Summary.Mode != "all-rows" {
		t.Fatalf("run without --group-heads (%v):\n%s", err, out)
	}
	_, errOut = mustRun(t, 2, plain, "reschedule", "--resume", run.Summary.Operation, "--group-heads", "--yes")
	if want := "ran without --group-heads (every row rewritten): resume it without --group-heads"; !strings.Contains(errOut, want) {
		t.Errorf("refusal:\n%s\nwant %q", errOut, want)
	}
}

// TestRescheduleGroupHeadsCommitInDoubt: a --group-heads batch whose COMMIT got no answer is
// settled by reading only the group heads: committed though the shards' other rows stay in
// backoff (the default's settle would read them as not committed), not committed when the
// COMMIT never reached the server; the single form too. Exit 1 each time.
func TestRescheduleGroupHeadsCommitInDoubt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		hold, bulk bool
		args       []string
		settled    string
		fresh      int
	}{
		{name: "bulk committed", bulk: true, args: []string{"reschedule", "--scope", "organization", "--group-heads", "--batch-shards", "2"}, settled: "committed", fresh: 12},
		{name: "bulk not committed", hold: true, bulk: true, args: []string{"reschedule", "--scope", "organization", "--group-heads", "--batch-shards", "2"}, settled: "not committed"},
		{name: "single committed", args: []string{"reschedule", "organization", "1", "--group-heads"}, settled: "committed", fresh: 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := seedGroupShards(t)
			since := time.Now()
			p := testdb.NewProxy(t)
			marker := map[bool]string{true: "rescheduled AS", false: "o.id IN ("}[tt.bulk]
			if tt.hold {
				holdCommitAfter(p, marker)
			} else {
				silenceCommitAnswerAfterStatement(p, marker)
			}
			code, out, errOut := runAt(p.DSN(), schema, append([]string{"--statement-timeout", "1s"}, append(tt.args, "--yes", "-o", "json")...)...)
			settled := map[bool]string{true: `"commit_settled": "` + tt.settled + `"`, false: `"in_doubt": "` + tt.settled + `"`}[tt.bulk]
			if code != 1 || !strings.Contains(out, settled) || !strings.Contains(out, `"mode": "group-heads"`) {
				t.Fatalf("exit %d, want 1 and %s\nstdout:\n%s\nstderr:\n%s", code, settled, out, errOut)
			}
			if n := countFresh(groupRows(t, schema, since)); n != tt.fresh {
				t.Errorf("%d rows rewritten, want %d", n, tt.fresh)
			}
		})
	}
}
