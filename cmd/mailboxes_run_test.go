package cmd_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// mailboxSecrets are the secrets seedMailboxes hides in slack:T1's head and github:9's, each
// at least 16 bytes, so a leak of any 16 of their bytes is seen.
var mailboxSecrets = []string{ //nolint:gochecknoglobals // test data
	"Bearer AuthzSecretValue0123456789",
	"sha256=aabbccddeeff00112233445566778899",
	"sessionid=CookieSecretValue98765",
	"GitlabTokenSecret-1122334455",
	"xoxb-1111111111-SlackBodyToken",
	"NestedJsonTokenValue-ABCDEFGH",
	"QueryStringSecretTok3n-777",
	"ghs_InstallationTokenAAAABBBBCCCCDDDD",
}

// seedMailboxes seeds schema's mailboxes: jira:9 blocked 20 hours, slack:T1 blocked 10
// hours (its head holds secrets), gitlab:4 due with its oldest payload 30 hours old,
// github:2 whose head failed 5 times (github skips failures: retrying, not blocked),
// github:9 due (its head holds secrets too), each a few payloads deep.
func seedMailboxes(t *testing.T, schema string) map[string][]int64 {
	t.Helper()
	now := time.Now()
	us, de := testdb.Str("us"), testdb.Str("de")
	later := now.Add(20 * time.Minute)
	ids := map[string][]int64{}
	add := func(p testdb.Payload, n int) {
		for i := range n {
			q := p
			if i > 0 { // only the head failed
				q.Attempts, q.ScheduleFor, q.Headers, q.Body, q.Path = 0, time.Time{}, "", "", ""
			}
			q.DateAdded = p.DateAdded.Add(time.Duration(i) * time.Second)
			ids[p.Mailbox] = append(ids[p.Mailbox], testdb.InsertPayloads(t, schema, q)...)
		}
	}
	add(testdb.Payload{Mailbox: "gitlab:4", Cell: us, DateAdded: now.Add(-30 * time.Hour)}, 2)
	add(testdb.Payload{Mailbox: "jira:9", Cell: de, DateAdded: now.Add(-20 * time.Hour), Attempts: 2, ScheduleFor: later}, 3)
	add(testdb.Payload{Mailbox: "github:2", Cell: us, DateAdded: now.Add(-15 * time.Hour), Attempts: 5, ScheduleFor: later}, 1)
	add(testdb.Payload{Mailbox: "slack:T1", Cell: de, DateAdded: now.Add(-10 * time.Hour), Attempts: 3, ScheduleFor: later,
		Path:    "/extensions/slack/action/?token=" + mailboxSecrets[6] + "&x=1",
		Headers: `{"Content-Type":"application/x-www-form-urlencoded","Authorization":"` + mailboxSecrets[0] + `","Cookie":"` + mailboxSecrets[2] + `"}`,
		Body:    "token=" + mailboxSecrets[4] + "&team_id=T1&payload=%7B%22token%22%3A%22" + mailboxSecrets[5] + "%22%7D"}, 2)
	add(testdb.Payload{Mailbox: "github:9", Cell: us, DateAdded: now.Add(-1 * time.Hour),
		Headers: `{"X-Hub-Signature-256":"` + mailboxSecrets[1] + `","X-Gitlab-Token":"` + mailboxSecrets[3] + `"}`,
		Body:    `{"action":"completed","installation":{"id":1,"access":{"token":"` + mailboxSecrets[7] + `"}},"author":"octocat"}`}, 4)
	return ids
}

type mailboxJSON struct {
	Mailbox       string `json:"mailbox"`
	State         string `json:"state"`
	Depth         int64  `json:"depth"`
	DepthIs       string `json:"depth_is"`
	HeadID        int64  `json:"head_id"`
	HeadAttempts  int    `json:"head_attempts"`
	SkipsFailures bool   `json:"skips_failures"`
}

// TestMailboxesSortedByHarm: on both index sets, blocked mailboxes come first, the one
// blocked longest first, then the others by their oldest payload; a github head that
// failed is retrying, not blocked (github skips failures by default); --provider, --cell and
// --limit narrow the list; the footer counts every mailbox.
func TestMailboxesSortedByHarm(t *testing.T) {
	t.Parallel()
	for _, ix := range fixture.MailboxIndexSets {
		t.Run(string(ix), func(t *testing.T) {
			t.Parallel()
			schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
			ids := seedMailboxes(t, schema)
			out, errOut := mustRun(t, cmd.ExitOK, schema, "mailboxes", "-o", "json")
			var got []mailboxJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := []mailboxJSON{
				{"jira:9", "blocked", 3, "exact", ids["jira:9"][0], 2, false},
				{"slack:T1", "blocked", 2, "exact", ids["slack:T1"][0], 3, false},
				{"gitlab:4", "due", 2, "exact", ids["gitlab:4"][0], 0, true},
				{"github:2", "retrying", 1, "exact", ids["github:2"][0], 5, true},
				{"github:9", "due", 4, "exact", ids["github:9"][0], 0, true},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d mailboxes, want %d:\n%s", len(got), len(want), out)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			if !strings.Contains(errOut, "5 mailbox(es), 2 blocked") {
				t.Errorf("footer: %q", errOut)
			}
			out, _ = mustRun(t, cmd.ExitOK, schema, "mailboxes", "--provider", "github", "-o", "json")
			if got = nil; json.Unmarshal([]byte(out), &got) != nil || len(got) != 2 || got[0].Mailbox != "github:2" || got[1].Mailbox != "github:9" {
				t.Errorf("--provider github: %s", out)
			}
			out, _ = mustRun(t, cmd.ExitOK, schema, "mailboxes", "--cell", "de", "--limit", "1", "-o", "json")
			if got = nil; json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].Mailbox != "jira:9" {
				t.Errorf("--cell de --limit 1: %s", out)
			}
		})
	}
}

// TestMailboxesDepthLabels: a mailbox past the count cap is "at least" 10,001 before
// ANALYZE, and "estimated" (the planner's, from pg_stats) after.
func TestMailboxesDepthLabels(t *testing.T) {
	t.Parallel()
	schema := testdb.MailboxSchema(t, fixture.Options{}, fixture.MailboxIndexesCurrent)
	if _, err := testdb.Pool(t).Exec(t.Context(), `INSERT INTO `+schema+`.hybridcloud_webhookpayload (mailbox_name, provider, region_name, date_added,
		schedule_for, attempts, request_method, request_path, request_headers, request_body)
		SELECT 'github:big', 'github', 'us', now(), '2016-08-01', 0, 'POST', '/', '{}', '' FROM generate_series(1, 12000)`); err != nil {
		t.Fatal(err)
	}
	read := func() mailboxJSON {
		out, _ := mustRun(t, cmd.ExitOK, schema, "mailboxes", "-o", "json")
		var got []mailboxJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		return got[0]
	}
	if got := read(); got.Depth != 10_001 || got.DepthIs != "at least" {
		t.Errorf("before ANALYZE: depth %d %q, want 10001 \"at least\"", got.Depth, got.DepthIs)
	}
	if _, err := testdb.Pool(t).Exec(t.Context(), `ANALYZE `+schema+`.hybridcloud_webhookpayload`); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.Depth != 12_000 || got.DepthIs != "estimated" {
		t.Errorf("after ANALYZE: depth %d %q, want 12000 \"estimated\"", got.Depth, got.DepthIs)
	}
}

// TestMailboxSecretsNeverPrinted: no 16-byte window of any secret of a head's request
// appears in inspect mailbox's or mailboxes' output in any format, nor in their --print-sql;
// --show-secrets shows them (so the check can fail).
func TestMailboxSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	schema := testdb.MailboxSchema(t, fixture.Options{}, fixture.MailboxIndexesCurrent)
	seedMailboxes(t, schema)
	leaks := func(text string) []string {
		var out []string
		for _, s := range mailboxSecrets {
			for i := 0; i+16 <= len(s); i++ {
				if strings.Contains(text, s[i:i+16]) {
					out = append(out, s[i:i+16])
					break
				}
			}
		}
		return out
	}
	for _, mb := range []string{"slack:T1", "github:9"} {
		for _, format := range []string{"table", "wide", "json", "jsonl", "csv", "markdown", ""} {
			args := []string{"inspect", "mailbox", mb}
			if format != "" {
				args = append(args, "-o", format)
			}
			out, errOut := mustRun(t, cmd.ExitOK, schema, args...)
			if l := leaks(out + errOut); len(l) > 0 {
				t.Errorf("inspect mailbox %s -o %s leaks %q:\n%s", mb, format, l, out)
			}
			if !strings.Contains(out, "[redacted]") {
				t.Errorf("inspect mailbox %s -o %s redacted nothing:\n%s", mb, format, out)
			}
		}
		for _, args := range [][]string{{"inspect", "mailbox", mb, "--print-sql"}, {"mailboxes", "--print-sql"}, {"mailboxes", "-o", "json"}} {
			out, errOut := mustRun(t, cmd.ExitOK, schema, args...)
			if l := leaks(out + errOut); len(l) > 0 {
				t.Errorf("%s leaks %q", strings.Join(args, " "), l)
			}
		}
	}
	out, _ := mustRun(t, cmd.ExitOK, schema, "inspect", "mailbox", "slack:T1", "--show-secrets", "-o", "json")
	out2, _ := mustRun(t, cmd.ExitOK, schema, "inspect", "mailbox", "github:9", "--show-secrets", "-o", "json")
	if l := leaks(out + out2); len(l) != len(mailboxSecrets) {
		t.Errorf("--show-secrets showed %d of the %d secrets: %q", len(l), len(mailboxSecrets), l)
	}
}

// TestMailboxPrintedSQLRuns: the SQL mailboxes, inspect mailbox and depth --table
// hybridcloud_webhookpayload print runs as printed in psql, on both index sets.
func TestMailboxPrintedSQLRuns(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	for _, ix := range fixture.MailboxIndexSets {
		schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
		seedMailboxes(t, schema)
		for _, args := range [][]string{
			{"mailboxes", "--print-sql"},
			{"mailboxes", "--print-sql", "--provider", "github", "--cell", "us", "--limit", "3"},
			{"inspect", "mailbox", "slack:T1", "--print-sql"},
			{"--table", "hybridcloud_webhookpayload", "depth", "--print-sql"},
			{"--table", "hybridcloud_webhookpayload", "depth", "--estimate", "--print-sql"},
		} {
			script, _ := mustRun(t, cmd.ExitOK, schema, args...)
			if _, out, err := runPsql(psql, schema, script); err != nil {
				t.Errorf("%s: psql: %v\n%s\n%s", strings.Join(args, " "), err, out, script)
			} else if len(args) == 2 && args[0] == "mailboxes" && !strings.Contains(out, "slack:T1") {
				t.Errorf("%s: psql printed no mailbox:\n%s", strings.Join(args, " "), out)
			}
		}
	}
}

// TestMailboxDepth: depth --table hybridcloud_webhookpayload counts per provider and cell.
func TestMailboxDepth(t *testing.T) {
	t.Parallel()
	schema := testdb.MailboxSchema(t, fixture.Options{}, fixture.MailboxIndexesBeforeDrop)
	seedMailboxes(t, schema)
	out, _ := mustRun(t, cmd.ExitOK, schema, "--table", "hybridcloud_webhookpayload", "depth", "-o", "json")
	var got []struct {
		Provider, Cell   string
		Depth, Mailboxes int64
		Estimated        bool
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"github/us": 5, "slack/de": 2, "jira/de": 3, "gitlab/us": 2}
	if len(got) != len(want) {
		t.Fatalf("got %s", out)
	}
	for _, r := range got {
		if w := want[r.Provider+"/"+r.Cell]; w != r.Depth || r.Estimated {
			t.Errorf("%s/%s: depth %d estimated %v, want %d", r.Provider, r.Cell, r.Depth, r.Estimated, w)
		}
	}
	// Not a mailbox schema: a one-line error, exit 1.
	plain := testdb.Schema(t, fixture.Options{})
	code, _, errOut := runCLI(t, plain, "mailboxes")
	if code != cmd.ExitError || !strings.Contains(errOut, ".hybridcloud_webhookpayload table here: webhook mailboxes live in the control silo's database") {
		t.Errorf("no table: exit %d, %q", code, errOut)
	}
}

// payloadSchedules are schema's payloads as (attempts, due-as-new) by id.
func payloadSchedules(t *testing.T, schema string) map[int64][2]any {
	t.Helper()
	rows, err := testdb.Pool(t).Query(t.Context(), `SELECT id, attempts, schedule_for = '`+fixture.ThePast+`' FROM `+schema+`.hybridcloud_webhookpayload`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64][2]any{}
	for rows.Next() {
		var id int64
		var attempts int
		var fresh bool
		if err := rows.Scan(&id, &attempts, &fresh); err != nil {
			t.Fatal(err)
		}
		out[id] = [2]any{attempts, fresh}
	}
	return out
}

// TestRescheduleMailbox: reschedule --mailbox gives every payload of that mailbox, and of
// no other, a new payload's schedule (THE_PAST, attempts 0), after its plan, with an audit
// line; --dry-run and a run without --yes change nothing; the printed SQL does the same in
// psql; --mailbox-provider takes only the provider's mailboxes whose head failed; outbox
// flags and SCOPE ID beside --mailbox are usage errors.
func TestRescheduleMailbox(t *testing.T) {
	t.Parallel()
	for _, ix := range fixture.MailboxIndexSets {
		t.Run(string(ix), func(t *testing.T) {
			t.Parallel()
			schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
			ids := seedMailboxes(t, schema)
			before := payloadSchedules(t, schema)
			mustRun(t, cmd.ExitOK, schema, "reschedule", "--mailbox", "slack:T1", "--dry-run")
			code, _, errOut := runCLI(t, schema, "reschedule", "--mailbox", "slack:T1")
			if code != cmd.ExitUsage || !strings.Contains(errOut, "`--yes` required") {
				t.Errorf("without --yes: exit %d %q", code, errOut)
			}
			if got := payloadSchedules(t, schema); !equalSchedules(got, before) {
				t.Fatalf("a dry run or a refused run changed payloads")
			}
			out, errOut := mustRun(t, cmd.ExitOK, schema, "reschedule", "--mailbox", "slack:T1", "--reason", "INC-7", "--yes", "-o", "json")
			var sum struct {
				Mailboxes []string `json:"mailboxes"`
				Rows      int64    `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.Mailboxes) != 1 || sum.Rows != 1 {
				t.Errorf("summary %s (%v), want slack:T1 and 1 row (its head; the payload behind it is as new)", out, err)
			}
			if !strings.Contains(errOut, `"audit":"outboxctl"`) || !strings.Contains(errOut, `"mailboxes":["slack:T1"]`) || !strings.Contains(errOut, `"reason":"INC-7"`) {
				t.Errorf("audit line: %s", errOut)
			}
			after := payloadSchedules(t, schema)
			for id, was := range before {
				want := was
				if id == ids["slack:T1"][0] {
					want = [2]any{0, true}
				}
				if after[id] != want {
					t.Errorf("payload %d: %v, want %v", id, after[id], want)
				}
			}
			// The printed SQL, run in psql, does the same for jira:9.
			script, _ := mustRun(t, cmd.ExitOK, schema, "reschedule", "--mailbox", "jira:9", "--reason", "it's */ psql", "--print-sql")
			if _, psqlOut, err := runPsql(testdb.Psql(t), schema, script); err != nil {
				t.Fatalf("psql: %v\n%s", err, psqlOut)
			}
			if got := payloadSchedules(t, schema)[ids["jira:9"][0]]; got != [2]any{0, true} {
				t.Errorf("jira:9's head after the printed SQL: %v", got)
			}
			// The bulk form: github's mailboxes whose head failed (github:2), not github:9.
			out, _ = mustRun(t, cmd.ExitOK, schema, "reschedule", "--mailbox-provider", "github", "--yes", "-o", "json")
			if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.Mailboxes) != 1 || sum.Mailboxes[0] != "github:2" || sum.Rows != 1 {
				t.Errorf("--mailbox-provider github: %s", out)
			}
			for _, bad := range [][]string{
				{"reschedule", "--mailbox", "slack:T1", "--stuck", "--yes"},
				{"reschedule", "organization", "1", "--mailbox", "slack:T1", "--yes"},
				{"reschedule", "--mailbox", "slack:T1", "--mailbox-provider", "slack", "--yes"},
				{"reschedule", "--mailbox-provider", "github", "--print-sql"},
			} {
				if code, _, errOut := runCLI(t, schema, bad...); code != cmd.ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
					t.Errorf("%s: exit %d, %q; want exit 2 with one error line and its Try", strings.Join(bad, " "), code, errOut)
				}
			}
			code, _, errOut = runCLI(t, schema, "reschedule", "--mailbox", "nosuch:1", "--yes")
			if code != cmd.ExitError || !strings.Contains(errOut, "mailbox nosuch:1 is empty or does not exist") {
				t.Errorf("unknown mailbox: exit %d %q", code, errOut)
			}
		})
	}
}

func equalSchedules(a, b map[int64][2]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMetricsMailboxFamilies: outboxctl metrics serves the mailbox families per provider and
// cell and the most harmful mailboxes by rank, never a mailbox's name as a label (one per
// integration: unbounded) nor anything of a request.
func TestMetricsMailboxFamilies(t *testing.T) {
	t.Parallel()
	schema := testdb.MailboxSchema(t, fixture.Options{}, fixture.MailboxIndexesCurrent)
	seedMailboxes(t, schema)
	out, _ := mustRun(t, cmd.ExitOK, schema, "metrics")
	got := parseText(t, out)
	for series, want := range map[string]float64{
		`outboxctl_webhook_payloads{cell="us", context="default", provider="github"}`:          5,
		`outboxctl_webhook_payloads{cell="de", context="default", provider="jira"}`:            3,
		`outboxctl_webhook_payloads{cell="de", context="default", provider="slack"}`:           2,
		`outboxctl_webhook_payloads{cell="us", context="default", provider="gitlab"}`:          2,
		`outboxctl_webhook_mailboxes{cell="us", context="default", provider="github"}`:         2,
		`outboxctl_webhook_mailboxes_blocked{cell="de", context="default", provider="jira"}`:   1,
		`outboxctl_webhook_mailboxes_blocked{cell="de", context="default", provider="slack"}`:  1,
		`outboxctl_webhook_mailboxes_blocked{cell="us", context="default", provider="github"}`: 0,
		`outboxctl_webhook_top_mailbox_payloads{context="default", rank="1"}`:                  3,
		`outboxctl_webhook_top_mailbox_blocked{context="default", rank="1"}`:                   1,
		`outboxctl_webhook_top_mailbox_blocked{context="default", rank="2"}`:                   1,
		`outboxctl_webhook_top_mailbox_blocked{context="default", rank="3"}`:                   0,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	age := got[`outboxctl_webhook_longest_blocked_seconds{cell="de", context="default", provider="jira"}`]
	if age < 20*3600 || age > 21*3600 {
		t.Errorf("jira/de longest blocked %v s, want about 20 h", age)
	}
	for _, name := range []string{"jira:9", "slack:T1", "github:2", "gitlab:4", "github:9"} {
		if strings.Contains(out, name) {
			t.Errorf("a mailbox name is in the metrics: %s", name)
		}
	}
	for _, s := range mailboxSecrets {
		if strings.Contains(out, s[:16]) {
			t.Errorf("a secret is in the metrics")
		}
	}
}

// payloadRow is a webhook payload's every column as text, for comparing before and after.
func payloadRow(t *testing.T, schema string, id int64) string {
	t.Helper()
	var s string
	err := testdb.Pool(t).QueryRow(t.Context(), `SELECT w::text FROM `+schema+`.hybridcloud_webhookpayload w WHERE id = $1`, id).Scan(&s)
	if err != nil {
		return ""
	}
	return s
}

// TestSkipMailboxHead: skip --mailbox NAME --head archives the head, then deletes it (and
// nothing else) after its plan; restore puts it back column for column; restore prints no
// SQL for it (its request holds secrets), and neither command prints a secret; a head
// Sentry's drain holds is not deleted; the mailbox form's usage errors exit 2.
func TestSkipMailboxHead(t *testing.T) {
	t.Parallel()
	for _, ix := range fixture.MailboxIndexSets {
		t.Run(string(ix), func(t *testing.T) {
			t.Parallel()
			schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
			ids := seedMailboxes(t, schema)
			head, second := ids["slack:T1"][0], ids["slack:T1"][1]
			before := payloadRow(t, schema, head)
			all := payloadSchedules(t, schema)
			archive := t.TempDir() + "/a.jsonl"
			mustRun(t, cmd.ExitOK, schema, "skip", "--mailbox", "slack:T1", "--head", "--archive", archive, "--dry-run")
			if code, _, _ := runCLI(t, schema, "skip", "--mailbox", "slack:T1", "--head", "--archive", archive); code != cmd.ExitUsage {
				t.Errorf("without --yes: exit %d", code)
			}
			if payloadRow(t, schema, head) != before {
				t.Fatal("a dry run or a refused run deleted the head")
			}
			out, errOut := mustRun(t, cmd.ExitOK, schema, "skip", "--mailbox", "slack:T1", "--head", "--archive", archive, "--reason", "INC-8", "--yes", "-o", "json")
			var sum struct {
				Deleted   int64  `json:"deleted"`
				HeadID    int64  `json:"head_id"`
				NewHead   *int64 `json:"new_head"`
				Operation string `json:"operation"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Deleted != 1 || sum.HeadID != head || sum.NewHead == nil || *sum.NewHead != second {
				t.Fatalf("summary %s (%v)", out, err)
			}
			if payloadRow(t, schema, head) != "" {
				t.Fatal("the head is still there")
			}
			after := payloadSchedules(t, schema)
			if len(after) != len(all)-1 {
				t.Errorf("%d payloads left, want %d", len(after), len(all)-1)
			}
			script := ""
			for _, args := range [][]string{{"restore", archive, "--print-sql", "--all", "--include-skipped"}} {
				code, o, e := runCLI(t, schema, args...)
				script = o + e
				if code != cmd.ExitUsage || !strings.Contains(e, "restore prints no SQL for it") {
					t.Errorf("%s: exit %d %q", strings.Join(args, " "), code, e)
				}
			}
			for _, s := range mailboxSecrets {
				for i := 0; i+16 <= len(s); i++ {
					if strings.Contains(out+errOut+script, s[i:i+16]) {
						t.Fatalf("skip or restore printed a secret's %q", s[i:i+16])
					}
				}
			}
			mustRun(t, cmd.ExitOK, schema, "restore", archive, "--operation", sum.Operation, "--yes")
			if got := payloadRow(t, schema, head); got != before {
				t.Errorf("restored row:\n%s\nwant\n%s", got, before)
			}
			// A head Sentry's drain holds: nothing deleted, exit 1.
			tx, err := testdb.Pool(t).Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(t.Context()) //nolint:errcheck // released at the end
			if _, err := tx.Exec(t.Context(), `SELECT 1 FROM `+schema+`.hybridcloud_webhookpayload WHERE id = $1 FOR UPDATE`, ids["jira:9"][0]); err != nil {
				t.Fatal(err)
			}
			code, _, e := runCLI(t, schema, "skip", "--mailbox", "jira:9", "--head", "--archive", archive, "--yes")
			if code != cmd.ExitError || !strings.Contains(e, "Sentry's drain holds it: nothing was deleted") || payloadRow(t, schema, ids["jira:9"][0]) == "" {
				t.Errorf("a held head: exit %d %q", code, e)
			}
			for _, bad := range [][]string{
				{"skip", "--mailbox", "slack:T1", "--yes"},
				{"skip", "--head", "--yes"},
				{"skip", "--mailbox", "slack:T1", "--head", "--category", "ORGANIZATION_UPDATE", "--yes"},
				{"skip", "123", "--mailbox", "slack:T1", "--head", "--yes"},
				{"skip", "--mailbox", "slack:T1", "--head", "--print-sql"},
			} {
				if code, _, e := runCLI(t, schema, bad...); code != cmd.ExitUsage {
					t.Errorf("%s: exit %d %q, want 2", strings.Join(bad, " "), code, e)
				}
			}
		})
	}
}
