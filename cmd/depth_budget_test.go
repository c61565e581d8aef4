package cmd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// budgetTable builds a cell outbox of rows rows over four categories (2, 3, 8, 11 in the
// ratio 1:2:3:4), autovacuum off so that only the test analyzes it, analyzed; it returns
// the schema.
func budgetTable(t *testing.T, rows int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	budgetExec(t, fmt.Sprintf(`ALTER TABLE %s.sentry_regionoutbox SET (autovacuum_enabled = false)`, schema))
	budgetExec(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0, i %% 37, (ARRAY[2, 3, 3, 8, 8, 8, 11, 11, 11, 11])[1 + i %% 10], i, '{}', now(), now() - interval '1 hour', now()
  FROM generate_series(1, %d) AS i`, schema, rows))
	budgetExec(t, fmt.Sprintf(`ANALYZE %s.sentry_regionoutbox`, schema))
	waitStats(t, schema, func(analyzed bool, _ int64) bool { return analyzed })
	return schema
}

func budgetExec(t *testing.T, sql string) {
	t.Helper()
	// No deadline of its own: a setup insert of 680,000 rows took over 30 s under CI's two
	// passes beside other work; the test binary's -timeout stops a real hang.
	ctx := t.Context()
	conn, err := testdb.Pool(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	// The statistics of this backend's writes reach the other backends now, not within a
	// second.
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
}

// waitStats waits until the server's statistics of the schema's cell outbox satisfy ok
// (a condition, never a sleep of a guessed length).
func waitStats(t *testing.T, schema string, ok func(analyzed bool, modified int64) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		var analyzed bool
		var modified int64
		err := testdb.Pool(t).QueryRow(ctx, `SELECT pg_stat_get_last_analyze_time(c.oid) IS NOT NULL, pg_stat_get_mod_since_analyze(c.oid)
  FROM pg_class c WHERE c.oid = to_regclass($1)`, schema+".sentry_regionoutbox").Scan(&analyzed, &modified)
		if err != nil {
			t.Fatal(err)
		}
		if ok(analyzed, modified) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("statistics of %s never reached the wanted state (analyzed %v, modified %d)", schema, analyzed, modified)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// modelDepth is the model: count(*) by category, as depth -o csv prints it (the total first).
func modelDepth(t *testing.T, schema string) string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(`SELECT category, count(*) FROM %s.sentry_regionoutbox GROUP BY category ORDER BY category`, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	names := map[int]string{2: "ORGANIZATION_UPDATE", 3: "ORGANIZATION_MEMBER_UPDATE", 8: "PROJECT_UPDATE", 11: "TEAM_UPDATE"}
	var total int64
	var lines []string
	for rows.Next() {
		var c int
		var n int64
		if err := rows.Scan(&c, &n); err != nil {
			t.Fatal(err)
		}
		total += n
		lines = append(lines, fmt.Sprintf("%d,%s,%d", c, names[c], n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return "category,category_name,depth\n" + fmt.Sprintf(",(total),%d\n", total) + strings.Join(lines, "\n") + "\n"
}

// TestDepthDefaultEstimatesSplitWhenFresh: on a table over the threshold (lowered by the
// hidden knob) with fresh statistics, depth counts the total and takes the split from
// pg_stats, each estimated row labelled in the data (estimated, statistics_analyzed_at) and
// the answer in a note that says how old the statistics are; when a tenth of the table has
// changed since, and with --exact, every category is counted, equal to the model.
func TestDepthDefaultEstimatesSplitWhenFresh(t *testing.T) {
	t.Parallel()
	schema := budgetTable(t, 3000)
	knob := []string{"--estimate-above-rows", "1000"}

	// ANALYZE samples all 3,000 rows: the statistics' frequencies are exact, so are the
	// estimates.
	code, out, errOut := runCLI(t, schema, append([]string{"depth", "-o", "csv"}, knob...)...)
	if code != cmd.ExitOK {
		t.Fatalf("depth: exit %d\n%s", code, errOut)
	}
	var want strings.Builder
	want.WriteString("category,category_name,depth,estimated,statistics_analyzed_at\n,(total),3000,false,\n")
	at := csvField(t, out, 2, 4)
	for _, r := range []string{"2,ORGANIZATION_UPDATE,300", "3,ORGANIZATION_MEMBER_UPDATE,600", "8,PROJECT_UPDATE,900", "11,TEAM_UPDATE,1200"} {
		want.WriteString(r + ",true," + at + "\n")
	}
	if out != want.String() || at == "" {
		t.Fatalf("depth (fresh statistics):\n%s\nwant\n%s", out, want.String())
	}
	if !strings.Contains(errOut, "the total is counted; the depth per category is estimated from the planner's statistics of an ANALYZE ") ||
		!strings.Contains(errOut, " ago, 0.0% of the rows modified since; --exact counts every category") {
		t.Fatalf("depth (fresh statistics): stderr %q", errOut)
	}
	// JSON carries the same label on every estimated row.
	js, _ := mustRun(t, cmd.ExitOK, schema, append([]string{"depth", "-o", "json"}, knob...)...)
	if strings.Count(js, `"estimated": true`) != 4 || strings.Count(js, `"estimated": false`) != 1 {
		t.Fatalf("depth -o json: %s", js)
	}

	// --exact: every category counted, no label.
	if out, _ := mustRun(t, cmd.ExitOK, schema, append([]string{"depth", "--exact", "-o", "csv"}, knob...)...); out != modelDepth(t, schema) {
		t.Fatalf("depth --exact:\n%s\nwant\n%s", out, modelDepth(t, schema))
	}

	// A tenth of the table changed since the ANALYZE: stale, so counted.
	budgetExec(t, fmt.Sprintf(`DELETE FROM %s.sentry_regionoutbox WHERE category = 11 AND id %% 3 = 0`, schema))
	waitStats(t, schema, func(_ bool, modified int64) bool { return modified >= 300 })
	out, errOut = mustRun(t, cmd.ExitOK, schema, append([]string{"depth", "-o", "csv"}, knob...)...)
	if out != modelDepth(t, schema) || errOut != "" {
		t.Fatalf("depth (stale statistics):\n%s\nwant\n%s\nstderr %q", out, modelDepth(t, schema), errOut)
	}
	// Under the threshold (the default knob), always counted.
	if out, _ := mustRun(t, cmd.ExitOK, schema, "depth", "-o", "csv"); out != modelDepth(t, schema) {
		t.Fatalf("depth (small table):\n%s", out)
	}
}

// TestDepthLowStatementTimeout: when the planner's estimate says a pass would exceed half
// of --statement-timeout (a scan rate lowered by the hidden knob, so a small table is
// "big"), depth answers from the statistics alone, the total labelled too, and names
// --exact; --exact runs the pass to the end under --pass-timeout, with a progress line on
// a terminal and none on a pipe.
func TestDepthLowStatementTimeout(t *testing.T) {
	t.Parallel()
	schema := budgetTable(t, 3000)
	slow := []string{"--statement-timeout", "1s", "--pass-rows-per-second", "1000"}
	code, out, errOut := runCLI(t, schema, append([]string{"depth", "-o", "csv"}, slow...)...)
	if code != cmd.ExitOK {
		t.Fatalf("depth: exit %d\n%s", code, errOut)
	}
	at := csvField(t, out, 1, 4)
	want := "category,category_name,depth,estimated,statistics_analyzed_at\n,(total),3000,true," + at + "\n" +
		"2,ORGANIZATION_UPDATE,300,true," + at + "\n3,ORGANIZATION_MEMBER_UPDATE,600,true," + at + "\n" +
		"8,PROJECT_UPDATE,900,true," + at + "\n11,TEAM_UPDATE,1200,true," + at + "\n"
	if out != want || at == "" {
		t.Fatalf("depth under a low timeout:\n%s\nwant\n%s", out, want)
	}
	if !strings.HasPrefix(errOut, "estimated, the total too: a pass over ~3000 rows would take ~3s, over half of --statement-timeout 1s; from the planner's statistics of an ANALYZE ") ||
		!strings.HasSuffix(errOut, "; --exact counts every row (under --pass-timeout)\n") {
		t.Fatalf("depth under a low timeout: stderr %q", errOut)
	}
	for _, tty := range []bool{false, true} {
		code, out, errOut := runOn(t, tty, append([]string{"--schema", schema, "depth", "--exact", "-o", "csv"}, slow...)...)
		if code != cmd.ExitOK || out != modelDepth(t, schema) {
			t.Fatalf("depth --exact (tty %v): exit %d\n%s\nwant\n%s\nstderr %q", tty, code, out, modelDepth(t, schema), errOut)
		}
		line := "depth: counting ~3000 rows in one pass (timeout 10m0s, --pass-timeout)"
		if tty != strings.Contains(errOut, "\r"+line+"  ") || tty != strings.Contains(errOut, "\r"+line+": done in ") {
			t.Fatalf("depth --exact (tty %v): stderr %q", tty, errOut)
		}
	}
}

// csvField is field col (0-based) of line row (0: the header) of CSV without quoting.
func csvField(t *testing.T, out string, row, col int) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	if row >= len(lines) {
		t.Fatalf("no line %d in\n%s", row, out)
	}
	f := strings.Split(lines[row], ",")
	if col >= len(f) {
		t.Fatalf("no field %d in line %q", col, lines[row])
	}
	return f[col]
}

// TestInspectCategoryLowStatementTimeout: over the budget, inspect category answers the
// category's pending rows from the statistics, labelled, naming --full-pass; --full-pass and
// a table within the budget read it, equal to the model.
func TestInspectCategoryLowStatementTimeout(t *testing.T) {
	t.Parallel()
	schema := budgetTable(t, 3000)
	slow := []string{"--statement-timeout", "1s", "--pass-rows-per-second", "1000"}
	code, out, errOut := runCLI(t, schema, append([]string{"inspect", "category", "PROJECT_UPDATE", "-o", "csv"}, slow...)...)
	if code != cmd.ExitOK {
		t.Fatalf("inspect category: exit %d\n%s", code, errOut)
	}
	at := csvField(t, out, 1, 8)
	want := "shard_scope,scope,pending,shards,objects,next_attempt,oldest_message,estimated,statistics_analyzed_at\n,,900,,,,,true," + at + "\n"
	if out != want || at == "" {
		t.Fatalf("inspect category under a low timeout:\n%s\nwant\n%s", out, want)
	}
	if !strings.HasPrefix(errOut, "estimated: a pass over ~3000 rows would take ~3s, over half of --statement-timeout 1s; pending alone, from the planner's statistics of an ANALYZE ") ||
		!strings.HasSuffix(errOut, "; --full-pass reads the table (under --pass-timeout)\n") {
		t.Fatalf("inspect category under a low timeout: stderr %q", errOut)
	}
	model := modelCategory(t, schema, 8)
	for _, args := range [][]string{append([]string{"--full-pass"}, slow...), nil} {
		out, errOut := mustRun(t, cmd.ExitOK, schema, append([]string{"inspect", "category", "PROJECT_UPDATE", "-o", "csv", "--time", "absolute"}, args...)...)
		if out != model || errOut != "" {
			t.Fatalf("inspect category %v:\n%s\nwant\n%s\nstderr %q", args, out, model, errOut)
		}
	}
}

// modelCategory is inspect category's CSV for category c of the schema's cell outbox, from
// a plain GROUP BY.
func modelCategory(t *testing.T, schema string, c int) string {
	t.Helper()
	var pending, shards, objects int64
	var next, oldest time.Time
	err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf(`SELECT count(*), count(DISTINCT shard_identifier), count(DISTINCT object_identifier), min(scheduled_for), min(date_added)
  FROM %s.sentry_regionoutbox WHERE category = $1`, schema), c).Scan(&pending, &shards, &objects, &next, &oldest)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("shard_scope,scope,pending,shards,objects,next_attempt,oldest_message,distinct_rows,distinct_exact\n0,ORGANIZATION_SCOPE,%d,%d,%d,%s,%s,%d,true\n",
		pending, shards, objects, next.UTC().Format(time.RFC3339Nano), oldest.UTC().Format(time.RFC3339Nano), pending)
}

// TestShardsLowStatementTimeout: over the budget, shards --limit lists from a bounded
// sample of the table's pages, every row labelled estimated with the sampled percentage,
// the note naming --full-pass; --full-pass lists from every row, as shards does within the
// budget (which TestShardListingsMatchModel proves equal to a model); --full-pass with
// --stuck is a usage error.
func TestShardsLowStatementTimeout(t *testing.T) {
	t.Parallel()
	schema := budgetTable(t, 3000)
	slow := []string{"--statement-timeout", "1s", "--pass-rows-per-second", "1000"}
	code, out, errOut := runCLI(t, schema, append([]string{"shards", "--limit", "5", "-o", "csv"}, slow...)...)
	if code != cmd.ExitOK {
		t.Fatalf("shards: exit %d\n%s", code, errOut)
	}
	// A tenth of 500 rows of budget over 3,000: 1.66% of the pages, at random (TABLESAMPLE SYSTEM).
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "shard_scope,scope,shard_identifier,depth,estimated,sampled_percent" || len(lines) > 6 {
		t.Fatalf("shards under a low timeout:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 6 || f[0] != "0" || f[1] != "ORGANIZATION_SCOPE" || f[4] != "true" || f[5] != "1.66" {
			t.Fatalf("shards under a low timeout: row %q of\n%s", l, out)
		}
	}
	if errOut != "estimated from a sample of 1.66% of the table's pages: a pass over ~3000 rows would take ~3s, over half of --statement-timeout 1s; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row (under --pass-timeout)\n" {
		t.Fatalf("shards under a low timeout: stderr %q", errOut)
	}
	within, withinErr := mustRun(t, cmd.ExitOK, schema, "shards", "--limit", "5", "-o", "csv", "--time", "absolute")
	full, errOut := mustRun(t, cmd.ExitOK, schema, append([]string{"shards", "--limit", "5", "-o", "csv", "--time", "absolute", "--full-pass"}, slow...)...)
	if full != within || errOut != withinErr || errOut != "showing 5 of ~37 shards (--limit; --exact counts them)\n" || !strings.HasPrefix(full, "shard_scope,scope,shard_identifier,depth,coalesce_groups") {
		t.Fatalf("shards --full-pass:\n%s\nwant\n%s\nstderr %q", full, within, errOut)
	}
}

// TestShardsSelectorsOverTheBudgetListExactly (#23): over the budget, shards --limit with a
// selector flag the sample cannot apply (--head-category) lists from the exact pass, the
// same listing as within the budget (shards 10, 20 and 30: their heads are category 2), never
// a sample without the selector; a pass that runs out of --statement-timeout is an error
// naming --full-pass (exit 1), not a sample.
func TestShardsSelectorsOverTheBudgetListExactly(t *testing.T) {
	t.Parallel()
	schema := budgetTable(t, 3000)
	args := []string{"shards", "--limit", "5", "--head-category", "ORGANIZATION_UPDATE", "-o", "csv", "--time", "absolute"}
	within, withinErr := mustRun(t, cmd.ExitOK, schema, args...)
	over, overErr := mustRun(t, cmd.ExitOK, schema, append(args, "--statement-timeout", "1s", "--pass-rows-per-second", "1000")...)
	var ids []string
	for _, l := range strings.Split(strings.TrimSuffix(within, "\n"), "\n")[1:] {
		ids = append(ids, strings.Split(l, ",")[2])
	}
	if over != within || overErr != withinErr || fmt.Sprint(ids) != "[10 20 30]" || !strings.HasPrefix(over, "shard_scope,scope,shard_identifier,depth,coalesce_groups") {
		t.Fatalf("over the budget:\n%s\nstderr %q\nwant\n%s\nstderr %q", over, overErr, within, withinErr)
	}
	// 100,000 rows: their pass takes far over 1 ms on any server.
	big := budgetTable(t, 100000)
	_, errOut := runCLIExpect(t, cmd.ExitError, "--dsn", testdb.DSN(), "--schema", big, "shards", "--limit", "5", "--head-category", "ORGANIZATION_UPDATE", "--statement-timeout", "1ms", "--pass-rows-per-second", "1000")
	if want := "Error: shards: the listing of the shards selected by head row ORGANIZATION_UPDATE did not finish within --statement-timeout 1ms, and a sample of the table cannot apply those selector flags: --full-pass lists from every row (under --pass-timeout)\n"; errOut != want {
		t.Errorf("timed out:\n%s\nwant\n%s", errOut, want)
	}
}

// TestShardsStuckLowStatementTimeout: when shards --stuck's index pass over the rows in
// backoff does not finish within a real, low --statement-timeout (600,000 rows of a shard
// in backoff against 10 ms: so the catalog read's own budget was given back), it answers from a sample of the table's pages, every row labelled
// estimated with the sampled percentage (CSV and JSON), the note naming --full-pass; each
// listed shard is in backoff (a due shard holding 60,000 future rows behind a due head is
// never listed); --full-pass under the same timeout lists exactly what a run with the
// default timeout does.
func TestShardsStuckLowStatementTimeout(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	budgetExec(t, fmt.Sprintf(`ALTER TABLE %s.sentry_regionoutbox SET (autovacuum_enabled = false)`, schema))
	// ORG/1: 600,000 rows in backoff; ORG/3..12: 100 each; ORG/2: due (a row at THE_PAST)
	// with 60,000 rows in the future; ORG/20..: due.
	budgetExec(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0, s.shard, 2 + i %% 3, i %% 600, '{}'::jsonb, now() - interval '20 minutes', now() + interval '40 minutes', now() - interval '1 hour'
  FROM (VALUES (1, 600000), (2, 60000), (3, 100), (4, 100), (5, 100), (6, 100), (7, 100), (8, 100), (9, 100), (10, 100), (11, 100), (12, 100)) AS s(shard, n),
       generate_series(1, s.n) AS i
UNION ALL
SELECT 0, 2, 2, 1, '{}'::jsonb, '2016-08-01'::timestamptz, '2016-08-01'::timestamptz, now()
UNION ALL
SELECT 0, 20 + i %% 500, 2, i, '{}'::jsonb, '2016-08-01'::timestamptz, '2016-08-01'::timestamptz, now() FROM generate_series(1, 20000) AS i`, schema))
	budgetExec(t, fmt.Sprintf(`VACUUM ANALYZE %s.sentry_regionoutbox`, schema))
	waitStats(t, schema, func(analyzed bool, _ int64) bool { return analyzed })
	backoff := map[string]bool{"1": true}
	for i := 3; i <= 12; i++ {
		backoff[fmt.Sprint(i)] = true
	}

	low := []string{"--statement-timeout", "10ms"}
	code, out, errOut := runCLI(t, schema, append([]string{"shards", "--stuck", "-o", "csv"}, low...)...)
	if code != cmd.ExitOK {
		t.Fatalf("shards --stuck under 10ms: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "shard_scope,scope,shard_identifier,depth,estimated,sampled_percent" || len(lines) < 2 {
		t.Fatalf("shards --stuck under 10ms:\n%s\nstderr %q", out, errOut)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 6 || !backoff[f[2]] || f[4] != "true" {
			t.Fatalf("shards --stuck under 10ms: row %q (not a shard in backoff, or not labelled) of\n%s", l, out)
		}
	}
	if !strings.HasPrefix(errOut, "estimated from a sample of ") ||
		!strings.Contains(errOut, "% of the table's pages: the index pass over the rows in backoff did not finish within --statement-timeout 10ms; each shard listed is in backoff (probed), its depth estimated; a shard the sample missed is not listed and total_shards is not known; --full-pass lists from every row in backoff (under --pass-timeout)\n") {
		t.Fatalf("shards --stuck under 10ms: stderr %q", errOut)
	}
	js, _ := mustRun(t, cmd.ExitOK, schema, append([]string{"shards", "--stuck", "-o", "json"}, low...)...)
	// Another sample (the seed is the clock's): every row labelled, whichever are listed.
	if strings.Count(js, `"estimated": true`) == 0 || strings.Count(js, `"estimated": true`) != strings.Count(js, `"shard_identifier"`) {
		t.Fatalf("shards --stuck -o json under 10ms: %s", js)
	}
	// shards --limit whose budget says the pass fits (a rate no server has) but which runs
	// out of the timeout: the sample too, saying so.
	code, out, errOut = runCLI(t, schema, append([]string{"shards", "--limit", "5", "-o", "csv", "--pass-rows-per-second", "1e12"}, low...)...)
	if code != cmd.ExitOK || !strings.HasPrefix(out, "shard_scope,scope,shard_identifier,depth,estimated,sampled_percent\n") ||
		!strings.Contains(errOut, "% of the table's pages: the pass over ~681001 rows did not finish within --statement-timeout 10ms; a shard the sample missed is not listed") {
		t.Fatalf("shards --limit 5 under 10ms, the budget fooled: exit %d\n%s\nstderr %q", code, out, errOut)
	}
	// Under 1 ms the catalog read still runs (its own budget): what fails, if anything, is
	// the command's own statement, never introspect.
	code, _, errOut = runCLI(t, schema, "shards", "--stuck", "--statement-timeout", "1ms")
	if strings.Contains(errOut, "introspect") || (code != cmd.ExitOK && !strings.Contains(errOut, "statement timed out in ")) {
		t.Fatalf("shards --stuck under 1ms: exit %d, stderr %q", code, errOut)
	}
	// --full-pass: exact, as with the default timeout.
	exact, exactErr := mustRun(t, cmd.ExitOK, schema, "shards", "--stuck", "-o", "csv", "--time", "absolute")
	full, fullErr := mustRun(t, cmd.ExitOK, schema, append([]string{"shards", "--stuck", "-o", "csv", "--time", "absolute", "--full-pass"}, low...)...)
	// next_attempt_in_seconds is relative to each run's clock.
	dropIn := func(csv string) string {
		var out []string
		for _, l := range strings.Split(csv, "\n") {
			if f := strings.Split(l, ","); len(f) > 14 {
				l = strings.Join(append(f[:len(f)-4:len(f)-4], f[len(f)-3:]...), ",")
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	if dropIn(full) != dropIn(exact) || fullErr != exactErr || !strings.HasPrefix(full, "shard_scope,scope,shard_identifier,depth,coalesce_groups") ||
		!strings.Contains(full, "\n0,ORGANIZATION_SCOPE,1,600000,") || strings.Contains(full, "\n0,ORGANIZATION_SCOPE,2,") {
		t.Fatalf("shards --stuck --full-pass:\n%s\nwant\n%s\nstderr %q", full, exact, fullErr)
	}
}
