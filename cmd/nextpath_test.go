package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// shellWords splits a command line the tool printed as a POSIX shell would
// (cmd.ShellWords).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	words, err := cmd.ShellWords(line)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

// suggestions are the command lines an output offers (cmd.Suggestions: what the suite's
// collection of every suggestion reads as well).
func suggestions(stdout, stderr string) []string { return cmd.Suggestions(stdout, stderr) }

// run runs a printed command line (its words after "outboxctl") against dsn, adding words.
func runPrinted(t *testing.T, line string, add ...string) (int, string, string) {
	t.Helper()
	words := shellWords(t, line)
	if len(words) == 0 || words[0] != "outboxctl" {
		t.Fatalf("not an outboxctl command: %q", line)
	}
	io, out, errOut := render.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := cmd.Main(ctx, append(append([]string{"--dsn", testdb.DSN(), "--connect-timeout", "2s"}, words[1:]...), add...), io)
	return code, out.String(), errOut.String()
}

// TestDemoIncidentDecidesBeforeItDeletes plays the demo incident as a new on-call engineer
// would, running only commands the tool printed (adding --yes for the prompt): doctor finds
// the shard at the cap, cannot yet tell a poison head from an outage, and leads with the
// step that decides without removing anything (make it due); nothing it or inspect message
// prints removes a message; after the reschedule doctor says the shard waits for Sentry's
// workers (none run against the demo), and every row is still there.
func TestDemoIncidentDecidesBeforeItDeletes(t *testing.T) {
	testdb.Require(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the ledger of shards made due, where the printed command puts it
	schema := randomName("outboxctl_demo26_")
	t.Cleanup(func() { execSQL(t, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	runCLIExpect(t, 0, "--dsn", testdb.DSN(), "--schema", schema, "demo", "seed", "--rows", "2000", "--shards", "200", "--yes")
	var before int
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".sentry_regionoutbox").Scan(&before); err != nil {
		t.Fatal(err)
	}

	// 1: doctor.
	_, fs, _ := doctor(t, testdb.DSN(), schema)
	var stuck *finding
	for i, f := range fs {
		for _, line := range f.Next {
			if strings.Contains(line, " skip ") || strings.Contains(line, " compact ") {
				t.Fatalf("doctor prints a removal before any fresh attempt: %s: %q", f.Check, line)
			}
		}
		if f.Check == "stuck" && f.Evidence["cause"] == "outage_or_poison" {
			stuck = &fs[i]
		}
	}
	if stuck == nil || !strings.Contains(stuck.Next[0], " reschedule --stuck --at-cap --not-killswitched ") {
		t.Fatalf("doctor: no undecided stuck finding leading with the reschedule: %+v", fs)
	}
	head := stuck.Evidence["head_id"]

	// inspect message of the head: its next is doctor's diagnosis, not a skip.
	code, out, errOut := runCLI(t, schema, "inspect", "message", fmt.Sprint(head), "-o", "json")
	var msg struct{ Next []string }
	if err := json.Unmarshal([]byte(out), &msg); code != 0 || err != nil || len(msg.Next) == 0 || !strings.Contains(msg.Next[0], " doctor --check stuck") {
		t.Fatalf("inspect message: exit %d %v\n%s\n%s", code, err, out, errOut)
	}

	// 2: the reschedule, as printed, with --yes.
	if code, out, errOut := runPrinted(t, stuck.Next[0], "--yes", "-o", "json"); code != 0 {
		t.Fatalf("reschedule: exit %d\n%s\n%s", code, out, errOut)
	}
	// 3: doctor: made due, waiting for Sentry's workers; nothing removed.
	_, fs, _ = doctor(t, testdb.DSN(), schema, "--check", "stuck")
	if w := only(fs, "stuck", "cause", "made_due_not_attempted"); len(w) != 1 {
		t.Fatalf("doctor after the reschedule: %+v", fs)
	}
	var after int
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".sentry_regionoutbox").Scan(&after); err != nil || after != before {
		t.Fatalf("rows before %d, after %d (%v)", before, after, err)
	}
}

// TestEverySuggestionRuns collects the Try: lines and next/undo commands of the invocations
// the trial tripped on and of the incident path, and runs each as printed against a real
// schema: none may be a usage error (exit 2).
func TestEverySuggestionRuns(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 7, Category: 3, Object: 1, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour)},
		testdb.Row{Scope: 0, Shard: 7, Category: 3, Object: 2, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour)})
	execSQL(t, "INSERT INTO "+schema+".sentry_option (key, value, last_updated, last_updated_by) VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[9]', now(), 'unknown')")
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 9, Category: 3, Object: 1})
	for shard := int64(20); shard < 32; shard++ { // a grouped finding: 12 capped shards, heads of two categories
		testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 1, Shard: shard, Category: 3 + 2*int(shard%2), Object: shard,
			ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour), DateAdded: time.Now().Add(-time.Hour)})
	}
	var got []string
	for _, args := range [][]string{
		{"skip", "1"},
		{"demo", "drop"},
		{"drain", "organization", "9", "--handler", "exec:true"},
		{"--silo", "control", "compact", "organization", "1"},
		{"--silo", "control", "reschedule", "user", "5", "--reason", "it's\tfine"},
		{"doctor", "-o", "json"},
		{"inspect", "message", "1", "-o", "json"},
		{"reschedule", "organization", "7", "--yes", "-o", "json"},
		{"compact", "organization", "7", "--yes", "-o", "json"},
		{"inspect", "shard", "organization", "-5"},
		{"inspect", "shard", "organization", "7", "-o", "json"},
		{"inspect", "shard", "organization", "9", "-o", "json"},
		{"killswitch", "add", "organization", "11", "--reason", "test", "--yes", "-o", "json"},
		{"shards", "--limit", "0"},
		{"skip", "1", "--json"},
		{"skip", "1", "--dry-run", "--json"},
		{"shards", "--stuck", "--json", "nosuch"},
		{"inspect", "shard", "organization", "7", "--json", "nosuch"},
		{"--silo", "control", "--cell", "us", "reschedule", "user", "5", "--json", "nosuch"},
		{"drain", "--stuck"},
		{"drain", "organization", "7", "--stuck", "--handler", "exec:true"},
		{"drain", "--stuck", "--parallel", "0", "--handler", "exec:true"},
	} {
		code, out, errOut := runCLI(t, schema, args...)
		s := suggestions(out, errOut)
		if code != 0 && len(s) == 0 && !strings.Contains(errOut, "Try:") && code == 2 {
			t.Errorf("outboxctl %s: exit 2 without a Try: line\n%s", strings.Join(args, " "), errOut)
		}
		got = append(got, s...)
	}
	for _, want := range []string{" reschedule --stuck --at-cap --not-killswitched ", " killswitch check organization 11", " killswitch remove organization 11 ",
		" skip 1 --json message,", " shards --stuck --json ", " inspect shard organization 7 --json ", " --silo control --cell us reschedule user 5 --json "} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Fatalf("no %q among the suggestions %q", want, got)
		}
	}
	if len(got) < 10 {
		t.Fatalf("only %d suggestions collected: %q", len(got), got)
	}
	for _, line := range got {
		if strings.Contains(line, "--watch") {
			continue
		}
		code, out, errOut := runPrinted(t, line)
		if code == cmd.ExitUsage && strings.Contains(errOut, "`--yes` required") {
			code, out, errOut = runPrinted(t, line, "--yes") // the prompt, answered
		}
		if code == cmd.ExitUsage {
			t.Errorf("printed %q exits 2:\n%s\n%s", line, out, errOut)
		}
	}
}

// TestVersionJSON: version -o json is a JSON object, not the text line.
func TestVersionJSON(t *testing.T) {
	t.Parallel()
	out, _ := runCLIExpect(t, 0, "version", "-o", "json")
	var v struct{ Version, Commit string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" || v.Commit == "" {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
}

// TestFiftyShardsAtTheCapAreMadeDueNotSkipped: the same category at the head of 50 shards
// at the cap (written, attempted and capped together) is one finding, a receiver outage
// until a fresh attempt says otherwise: its first command is one reschedule whose plan
// selects exactly those 50 shards (not the 5 holding the category that are not stuck), and
// nothing it prints removes a message (the incident gallery, internal/gallery, plays the
// rest: the heads that fail again while the category delivers are skipped, and only they).
func TestFiftyShardsAtTheCapAreMadeDueNotSkipped(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	var rows []testdb.Row
	for shard := int64(1); shard <= 50; shard++ {
		for i, cat := range []int{3, 5} {
			rows = append(rows, testdb.Row{Scope: 0, Shard: shard, Category: cat, Object: shard*10 + int64(i),
				ScheduledFrom: now.Add(-10 * time.Minute), ScheduledFor: now.Add(50 * time.Minute), DateAdded: now.Add(-2 * time.Hour)})
		}
	}
	for shard := int64(100); shard < 105; shard++ { // the same category, not stuck
		rows = append(rows, testdb.Row{Scope: 0, Shard: shard, Category: 3, Object: shard,
			ScheduledFrom: now.Add(-time.Minute), ScheduledFor: now.Add(-time.Second), DateAdded: now.Add(-time.Minute)})
	}
	testdb.Insert(t, schema, "sentry_regionoutbox", rows...)

	_, all, _ := doctor(t, testdb.DSN(), schema, "--check", "stuck")
	fs := notOK(all)
	if len(fs) != 1 || fs[0].Evidence["grouped_shards"] != float64(50) || fs[0].Evidence["cause"] != "receiver_outage" || fs[0].Evidence["next_selects_shards"] != float64(50) {
		t.Fatalf("doctor --check stuck: want one receiver_outage finding of 50 shards, got %+v", fs)
	}
	for _, line := range fs[0].Next {
		if strings.Contains(line, " skip ") {
			t.Fatalf("a skip printed before any fresh attempt: %q", line)
		}
	}
	code, _, plan := runPrinted(t, fs[0].Next[0], "--dry-run")
	if code != 0 || !strings.Contains(plan, "make due now with a fresh backoff: 50 shard(s) holding 100 row(s)") {
		t.Fatalf("the printed reschedule's plan: exit %d\n%s", code, plan)
	}
}

func notOK(fs []finding) []finding {
	var out []finding
	for _, f := range fs {
		if f.Severity != "ok" {
			out = append(out, f)
		}
	}
	return out
}

// TestDemoDoctorFitsOneScreen: 20 minutes after seeding (the demo's rows moved 20 minutes
// into the past, as the clock would move them), doctor on an 80×24 terminal is one screen:
// a compact table of what is wrong and the next commands under it, every line within 80
// columns; the scheduler's findings say they are expected of the demo (no Sentry workers
// run there) and are grouped, not one per shard.
func TestDemoDoctorFitsOneScreen(t *testing.T) {
	testdb.Require(t)
	schema := randomName("d26_")
	t.Cleanup(func() { execSQL(t, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	runCLIExpect(t, 0, "--dsn", testdb.DSN(), "--schema", schema, "demo", "seed", "--rows", "2000", "--shards", "200", "--yes")
	for _, tbl := range []string{"sentry_regionoutbox", "sentry_controloutbox"} {
		execSQL(t, "UPDATE "+schema+"."+tbl+" SET scheduled_from = scheduled_from - interval '20 minutes', scheduled_for = scheduled_for - interval '20 minutes', date_added = date_added - interval '20 minutes'")
		execSQL(t, "VACUUM "+schema+"."+tbl) // the UPDATE's dead rows are the test's, not the demo's
	}
	io, out, errOut := render.Test()
	io.OutTTY, io.Width = true, 80
	io.Getenv = func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	// The checks of what the demo holds: the server-wide ones (vacuum, xmin, locks) report
	// the shared test server, not the demo.
	code := cmd.Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "doctor", "--check", "schema,scheduler,stuck,killswitch,backfill"}, io)
	// A command line is never cut (it is to be pasted whole): one longer than 80 columns
	// wraps, and each row it takes counts.
	rows := strings.Count(strings.TrimSpace(errOut.String()), "\n") + 1
	for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		n := utf8.RuneCountInString(l)
		if n > 80 && !strings.Contains(l, "outboxctl ") {
			t.Errorf("line of %d columns: %q", n, l)
		}
		rows += max(1, (n+79)/80)
	}
	if code == cmd.ExitUsage || rows > 24 {
		t.Fatalf("doctor: exit %d, %d terminal rows (want one 24-row screen with stderr):\n%s\n%s", code, rows, out, errOut)
	}
	if !strings.Contains(out.String(), "expected of the demo") || !strings.Contains(out.String(), " reschedule --stuck --at-cap --not-killswitched ") {
		t.Fatalf("doctor's first screen lacks the demo's scheduler note or the poison's next:\n%s", out)
	}
	_, fs, _ := doctor(t, testdb.DSN(), schema, "--check", "scheduler")
	for _, f := range fs {
		if f.Severity == "crit" || !strings.Contains(f.Summary, "demo") && f.Severity != "ok" {
			t.Errorf("a scheduler finding on the demo that does not say it is expected there: %+v", f)
		}
	}
}

// TestInspectShardNext: inspect shard says what to run next where its state calls for it
// (at the 1 h cap: the head message, whose inspect names the skip, or a reschedule;
// kill-switched: the switch), and an empty shard prints one line, not three empty tables.
func TestInspectShardNext(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 7, Category: 3, Object: 1, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour), DateAdded: time.Now().Add(-time.Hour)},
		testdb.Row{Scope: 0, Shard: 8, Category: 3, Object: 1})
	code, out, errOut := runCLI(t, schema, "inspect", "shard", "organization", "7", "-o", "json")
	var doc struct {
		Shard struct{ Next []string }
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Shard.Next) != 2 ||
		!strings.HasSuffix(doc.Shard.Next[0], fmt.Sprintf(" inspect message %d", ids[0])) || !strings.Contains(doc.Shard.Next[1], " reschedule organization 7 ") {
		t.Fatalf("inspect shard of a capped shard: exit %d %v, next %q\n%s%s", code, err, doc.Shard.Next, out, errOut)
	}
	// Never attempted (written with Sentry's THE_PAST): no backoff step, so no last delay
	// (it was the -326,090,452 s between 2016 and now).
	if code, out, _ = runCLI(t, schema, "inspect", "shard", "organization", "8", "-o", "json"); code != 0 || strings.Contains(out, `"next"`) || !strings.Contains(out, `"last_delay_seconds": null,`) {
		t.Fatalf("a due, never attempted shard: no next step and a null last delay: exit %d\n%s", code, out)
	}
	code, out, errOut = runCLI(t, schema, "inspect", "shard", "organization", "999")
	if code != 0 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "shard ORGANIZATION_SCOPE/999 is empty") {
		t.Fatalf("an empty shard: exit %d, stdout %q, stderr %q (want one line)", code, out, errOut)
	}
}

// TestCompletionMatchesCaseTyped: bash keeps only the candidates starting with what was
// typed, case and all, so a lower-case prefix completes in lower case (before, org<TAB>
// offered ORGANIZATION_SCOPE, which bash dropped: nothing completed); and a prefix that is
// no name is a did-you-mean.
func TestCompletionMatchesCaseTyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "inspect", "shard", "org"}, "organization\norganization_scope\n:4\n"},
		{[]string{"__complete", "inspect", "shard", "ORG"}, "ORGANIZATION_SCOPE\n:4\n"},
		{[]string{"__complete", "inspect", "object", "organization_member_u"}, "organization_member_update\n:4\n"},
	} {
		if out, _ := runCLIExpect(t, 0, c.args...); out != c.want {
			t.Errorf("%q: %q, want %q", c.args, out, c.want)
		}
	}
	_, errOut := runCLIExpect(t, 2, "inspect", "shard", "org", "1")
	if !strings.Contains(errOut, `unknown scope "org"; did you mean ORGANIZATION_SCOPE?`) {
		t.Errorf("inspect shard org 1: %s", errOut)
	}
}

// TestInspectCategoryAtLeast: distinct counts taken over the category's first rows only
// say "at least" to a person; JSON keeps the numbers and distinct_exact.
func TestInspectCategoryAtLeast(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	execSQL(t, "INSERT INTO "+schema+".sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added) SELECT 0, g, 3, g, now(), '2016-08-01', now() FROM generate_series(1, 1200) g")
	_, out, _ := runCLI(t, schema, "inspect", "category", "3", "-o", "table")
	if !regexp.MustCompile(`at least \d+ +at least \d+`).MatchString(out) {
		t.Fatalf("capped counts on a terminal:\n%s", out)
	}
	_, out, _ = runCLI(t, schema, "inspect", "category", "3", "-o", "json")
	if strings.Contains(out, "at least") || !strings.Contains(out, `"distinct_exact": false`) || !regexp.MustCompile(`"shards": \d+,`).MatchString(out) {
		t.Fatalf("capped counts in JSON:\n%s", out)
	}
}

// TestInspectObjectLimitFooter: a page of inspect object cut by --limit says so on stderr.
func TestInspectObjectLimitFooter(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 5, Category: 2, Object: 5}, testdb.Row{Scope: 0, Shard: 5, Category: 2, Object: 5}, testdb.Row{Scope: 0, Shard: 5, Category: 2, Object: 5})
	_, _, errOut := runCLI(t, schema, "inspect", "object", "2", "5", "--limit", "2")
	if !strings.Contains(errOut, "showing the newest 2 outboxes: there may be more (--limit 4)") {
		t.Fatalf("inspect object --limit 2 of 3 rows: stderr %q", errOut)
	}
	if _, _, errOut = runCLI(t, schema, "inspect", "object", "2", "5", "--limit", "5"); strings.Contains(errOut, "showing") {
		t.Fatalf("a page not cut says it is: %q", errOut)
	}
}

// TestShardsStuckColumnsAsDocumented: the columns docs/runbooks.md names for shards --stuck
// -o wide are the ones it prints, and at 80 columns the capped shard keeps "at 1 h cap:
// poison message?".
func TestShardsStuckColumnsAsDocumented(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 4242, Category: 3, Object: 1, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour), DateAdded: time.Now().Add(-time.Hour)})
	book, err := os.ReadFile("../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`-o wide` shows every column uncut: ([A-Z, \n]+?);").FindStringSubmatch(string(book))
	if m == nil {
		t.Fatal("docs/runbooks.md no longer names shards --stuck -o wide's columns")
	}
	documented := strings.Join(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), " ")
	_, out, _ := runCLI(t, schema, "shards", "--stuck", "-o", "wide")
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || strings.Join(strings.Fields(lines[1]), " ") != documented {
		t.Fatalf("shards --stuck -o wide header %q, docs/runbooks.md says %q\n%s", lines[1], documented, out)
	}
	io, o, _ := render.Test()
	io.OutTTY, io.Width = true, 80
	io.Getenv = func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }
	cmd.Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "shards", "--stuck"}, io)
	if !strings.Contains(o.String(), "at 1 h cap: poison message?") {
		t.Fatalf("at 80 columns, shards --stuck lost the cap flag:\n%s", o)
	}
}
