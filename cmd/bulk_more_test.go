package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seedBulkShards seeds organization shards 1..n with rows rows each of ORGANIZATION_UPDATE
// (2, objects 1..rows), in backoff, and returns the schema.
func seedBulkShards(t *testing.T, n, rows int) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 2, i, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, %d) s, generate_series(1, %d) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize(), n, rows)); err != nil {
		t.Fatal(err)
	}
	return schema
}

// auditLine is the audit line of command in stderr, decoded.
func auditLine(t *testing.T, errOut, command string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(errOut, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["audit"] == "outboxctl" && m["command"] == command {
			return m
		}
	}
	t.Fatalf("no audit line of %s in:\n%s", command, errOut)
	return nil
}

// TestRestoreAuditOfABulkRunIsCapped: restoring a bulk skip of 8 shards (8 operations) writes
// an audit line naming the file, the count and the first 5 operation ids only; the summary
// still says every row came back.
func TestRestoreAuditOfABulkRunIsCapped(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 8, 2)
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	out, _ := mustRun(t, 0, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--archive", archive, "--yes", "-o", "json")
	var skip struct {
		Summary struct {
			Operation  string `json:"operation"`
			Operations int    `json:"operations"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &skip); err != nil || skip.Summary.Operations != 8 {
		t.Fatalf("skip (%v):\n%s", err, out)
	}
	out, errOut := mustRun(t, 0, schema, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 16`) {
		t.Fatalf("restore:\n%s", out)
	}
	a := auditLine(t, errOut, "restore")
	ops, _ := a["operations"].([]any)
	if a["operation_count"] != float64(8) || len(ops) != 5 || a["archive"] != archive {
		t.Fatalf("audit line %v: want 8 operations counted, 5 named, the archive", a)
	}
	for i, op := range ops { // a shard's operation is the run's id .N
		if want := fmt.Sprintf("%s.%d", skip.Summary.Operation, i+1); op != want {
			t.Errorf("operation %d = %v, want %s", i, op, want)
		}
	}
}

// listedIDs are the shard_identifier of each row of shards -o json.
func listedIDs(t *testing.T, out string) []int64 {
	t.Helper()
	var rows []struct {
		ID int64 `json:"shard_identifier"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// TestShardsFromReadsBulkSummaries: a bulk repair's -o json and -o jsonl summaries, shards
// -o json and SCOPE ID lines all feed --shards-from, which selects exactly the shards they
// list; a summary's card is not a shard, and a file of neither is refused (exit 2).
func TestShardsFromReadsBulkSummaries(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 6, 2)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonOut, _ := mustRun(t, 0, schema, "reschedule", "--scope", "organization", "--limit", "3", "--yes", "-o", "json")
	jsonlOut, _ := mustRun(t, 0, schema, "reschedule", "--shards-from", write("first.json", jsonOut), "--yes", "-o", "jsonl")
	if n := strings.Count(jsonlOut, `"section":"shards"`); n != 3 || !strings.Contains(jsonlOut, `"section":"summary"`) {
		t.Fatalf("reschedule --shards-from a summary: %d shards\n%s", n, jsonlOut)
	}
	shardsOut, _ := mustRun(t, 0, schema, "shards", "--min-depth", "2", "--limit", "2", "-o", "json")
	for _, tt := range []struct {
		name, text string
		want       []int64
	}{
		{"summary.json", jsonOut, []int64{1, 2, 3}},
		{"summary.jsonl", jsonlOut, []int64{1, 2, 3}},
		{"shards.json", shardsOut, []int64{1, 2}},
		{"lines.txt", "# incident\norganization 5\n0 6\n", []int64{5, 6}},
	} {
		out, _ := mustRun(t, 0, schema, "shards", "--shards-from", write(tt.name, tt.text), "-o", "json")
		if got := listedIDs(t, out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: shards %v, want %v", tt.name, got, tt.want)
		}
	}
	// A list that is not one: its Try is the command's help (with --schema), which runs as
	// printed, never a file that does not exist.
	card := write("card.json", `{"selected": 3, "done": 3}`)
	_, errOut := mustRun(t, 2, schema, "shards", "--shards-from", card)
	if want := "Error: `--shards-from` " + card + " line 1: shard 1 has no shard_scope or shard_identifier (want SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json)\n" +
		"Try: outboxctl --schema " + schema + " shards --help\n"; errOut != want {
		t.Errorf("a card alone:\n%s\nwant\n%s", errOut, want)
	}
	_, errOut = mustRun(t, 2, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--shards-from", write("bad.json", `[{"shard_scope": "x"`), "--yes")
	if want := "Try: outboxctl --schema " + schema + " skip --help\n"; !strings.HasSuffix(errOut, want) || strings.Count(errOut, "\n") != 2 {
		t.Errorf("a list cut short:\n%s\nwant its last line %s", errOut, want)
	}
	// An integer written as a string is refused, naming its line (#36 Low 15): in shards -o
	// json, in JSON lines, in a bulk summary's shards section.
	for _, tt := range []struct{ name, text, want string }{
		{"quoted.json", "[\n  {\"shard_scope\": 0, \"shard_identifier\": 1},\n  {\"shard_scope\": 0, \"shard_identifier\": \"2\"}\n]\n",
			" line 3 is not a shard of `shards -o json`: shard_identifier is the string \"2\": want an integer\n"},
		{"quoted.jsonl", "{\"shard_scope\": 0, \"shard_identifier\": 1}\n{\"shard_scope\": \"0\", \"shard_identifier\": 2}\n",
			" line 2 is not a JSON line of shards: shard_scope is the string \"0\": want an integer\n"},
		{"quoted-summary.json", "{\"summary\": {\"selected\": 1},\n \"shards\": [{\"shard_scope\": 0, \"shard_identifier\": \"7\"}]}\n",
			" line 1: its shards section is not a list of shards: shard_identifier is the string \"7\": want an integer\n"},
	} {
		path := write(tt.name, tt.text)
		_, errOut := mustRun(t, 2, schema, "shards", "--shards-from", path)
		if want := "Error: `--shards-from` " + path + tt.want; !strings.HasPrefix(errOut, want) {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, errOut, want)
		}
	}
	// An empty list is a usage error (#36 Low 17), whatever its form: never a run of nothing.
	for _, text := range []string{"", "# nothing yet\n\n", "[]", `{"summary": {"selected": 0}, "shards": []}`} {
		path := write("empty", text)
		_, errOut := mustRun(t, 2, schema, "skip", "--category", "ORGANIZATION_UPDATE", "--shards-from", path, "--yes")
		if want := "Error: `--shards-from` " + path + " lists no shard: give SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json\n"; !strings.HasPrefix(errOut, want) {
			t.Errorf("empty %q:\n%s", text, errOut)
		}
	}
}

// silenceCommitAnswerAfterStatement makes p swallow the server's answer to the first COMMIT
// the client sends after a statement whose text holds sql: the server committed, the client
// never hears it.
func silenceCommitAnswerAfterStatement(p *testdb.Proxy, sql string) {
	var mu sync.Mutex
	seen, done := false, false
	p.HoldFromClient(func(typ byte, body []byte) bool { // never holds: it notes the statement
		mu.Lock()
		defer mu.Unlock()
		if (typ == 'P' || typ == 'Q') && bytes.Contains(body, []byte(sql)) {
			seen = true
		}
		return false
	})
	p.SilenceAt(func(typ byte, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if !done && seen && typ == 'C' && bytes.HasPrefix(body, []byte("COMMIT")) {
			done = true
			return true
		}
		return false
	})
}

// TestBulkCommitInDoubt: a bulk batch whose COMMIT got no answer is settled on a fresh
// connection, as the single-shard repairs do: committed (its shards done; a skip's archive
// marks its operations committed, so restore puts the rows back) or not (its shards failed
// and unchanged; abort markers); exit 1 either way, the run stopped there, the summary and
// the audit line saying what the settle found.
func TestBulkCommitInDoubt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, sql      string
		hold           bool
		args           []string
		settled        string
		done, failed   int
		due            string
		left, restored int64
		expired        bool // every row due a minute ago (not THE_PAST)
	}{
		{name: "reschedule committed", sql: "rescheduled AS", args: []string{"reschedule", "--stuck"}, settled: "committed", done: 2, due: "[1 2]", left: 6},
		{name: "reschedule not committed", sql: "rescheduled AS", hold: true, args: []string{"reschedule", "--stuck"}, settled: "not committed", failed: 2, due: "[]", left: 6},
		{name: "skip committed", sql: "DELETE FROM", args: []string{"skip", "--category", "ORGANIZATION_UPDATE", "--archive", "ARCHIVE"}, settled: "committed", done: 2, due: "[]", left: 2, restored: 4},
		{name: "skip not committed", sql: "DELETE FROM", hold: true, args: []string{"skip", "--category", "ORGANIZATION_UPDATE", "--archive", "ARCHIVE"}, settled: "not committed", failed: 2, due: "[]", left: 6},
		// Due again (their backoff over) but not at THE_PAST: the settle reads them too.
		{name: "reschedule of due shards not committed", sql: "rescheduled AS", hold: true, expired: true, args: []string{"reschedule", "--scope", "organization"}, settled: "not committed", failed: 2, due: "[]", left: 6},
		{name: "reschedule of due shards committed", sql: "rescheduled AS", expired: true, args: []string{"reschedule", "--scope", "organization"}, settled: "committed", done: 2, due: "[1 2]", left: 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := seedBulkShards(t, 3, 2)
			if tt.expired {
				if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`UPDATE %s.sentry_regionoutbox SET scheduled_for = now() - interval '1 minute'`, pgx.Identifier{schema}.Sanitize())); err != nil {
					t.Fatal(err)
				}
			}
			p := testdb.NewProxy(t)
			if tt.hold {
				holdCommitAfter(p, tt.sql)
			} else {
				silenceCommitAnswerAfterStatement(p, tt.sql)
			}
			archive := filepath.Join(t.TempDir(), "bulk.jsonl")
			args := []string{"--statement-timeout", "1s"}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "ARCHIVE", archive))
			}
			code, out, errOut := runAt(p.DSN(), schema, append(args, "--batch-shards", "2", "--yes", "-o", "json")...)
			found := map[string]string{"committed": "committed, its shards are done", "not committed": "not committed, its shards are unchanged"}[tt.settled]
			want := fmt.Sprintf("Error: %s: the COMMIT got no answer (%s); settled on a fresh connection: %s; %d shard(s) done, %d failed, 1 left: run the same command again to continue, what is done no longer matches",
				tt.args[0], noAnswer, found, tt.done, tt.failed)
			var got struct {
				Summary struct {
					Done, Failed, Left, InDoubt int
					Settled                     string `json:"commit_settled"`
				} `json:"summary"`
			}
			_ = json.Unmarshal([]byte(out), &got)
			s := got.Summary
			if code != 1 || lastLine(errOut) != want || s.Settled != tt.settled || s.Done != tt.done || s.Failed != tt.failed || s.Left != 1 || s.InDoubt != 0 {
				t.Fatalf("exit %d, want 1; summary %+v\nstdout:\n%s\nstderr:\n%s\nwant last line:\n%s", code, s, out, errOut, want)
			}
			if a := auditLine(t, errOut, tt.args[0]); a["commit_settled"] != tt.settled {
				t.Errorf("audit line %v", a)
			}
			if due := fmt.Sprint(dueShards(t, schema)); due != tt.due {
				t.Errorf("due shards %s, want %s", due, tt.due)
			}
			if n := countRows(t, schema); n != tt.left {
				t.Errorf("%d rows left, want %d", n, tt.left)
			}
			if tt.args[0] != "skip" {
				return
			}
			marker := map[string]string{"committed": `"kind":"commit"`, "not committed": `"kind":"abort"`}[tt.settled]
			if b, _ := os.ReadFile(archive); strings.Count(string(b), marker) != 2 {
				t.Errorf("archive holds %d %s markers, want 2 (one per shard's operation):\n%s", strings.Count(string(b), marker), marker, b)
			}
			out, _ = mustRun(t, 0, schema, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
			if !strings.Contains(out, fmt.Sprintf(`"inserted": %d`, tt.restored)) && tt.restored > 0 {
				t.Errorf("restore:\n%s", out)
			}
		})
	}
}

// TestBulkRescheduleInDoubtAtThePastIsUnknown (#23): a bulk reschedule of shards whose every
// row is at THE_PAST already, whose COMMIT gets no answer, cannot be told committed or not
// (the rows read the same): the summary says in doubt (2 shards, commit_settled "in doubt"), exit 1,
// with the reason, never "committed" read from nothing.
func TestBulkRescheduleInDoubtAtThePastIsUnknown(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 3, 2)
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`UPDATE %s.sentry_regionoutbox SET scheduled_for = '2016-08-01'`, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	p := testdb.NewProxy(t)
	silenceCommitAnswerAfterStatement(p, "rescheduled AS")
	code, out, errOut := runAt(p.DSN(), schema, "--statement-timeout", "1s", "reschedule", "--scope", "organization", "--batch-shards", "2", "--yes", "-o", "json")
	var got struct {
		Summary struct {
			Done, Failed, Left int
			InDoubt            int    `json:"in_doubt"`
			Settled            string `json:"commit_settled"`
		} `json:"summary"`
	}
	_ = json.Unmarshal([]byte(out), &got)
	want := "Error: reschedule: the COMMIT of a batch got no answer (the COMMIT got no answer, so whether it committed is unknown: " + noAnswer + "), and it could not be settled (every shard of the batch was due at THE_PAST when selected, so its rows read the same whether it committed or not (Sentry reads them the same too)): its 2 shard(s) are in doubt (done or not); 0 shard(s) done, 1 left: run the same command again, what is done no longer matches"
	if s := got.Summary; code != 1 || lastLine(errOut) != want || s.InDoubt != 2 || s.Settled != "in doubt" || s.Done != 0 || s.Failed != 0 || s.Left != 1 {
		t.Fatalf("exit %d, want 1; summary %+v\nstdout:\n%s\nstderr:\n%s\nwant last line:\n%s", code, got.Summary, out, errOut, want)
	}
	if a := auditLine(t, errOut, "reschedule"); a["in_doubt"] != float64(2) {
		t.Errorf("audit line %v", a)
	}
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

// TestBulkSkipResumeRetriesWhatFailed: skip --category over 3 shards, one batch a shard, with
// organization/2's newest row locked past --lock-timeout: shards 1 and 3 done, 2 failed
// (exit 6). --resume ID (no selector flag) works on organization/2 alone, in the run's own
// archive as its next operation (ID.3); restore --all of that archive puts all 6 rows back.
func TestBulkSkipResumeRetriesWhatFailed(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 3, 2)
	ctx := context.Background()
	lock, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx) //nolint:errcheck // released below
	if _, err := lock.Exec(ctx, fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_identifier = 2 ORDER BY id DESC LIMIT 1 FOR UPDATE", pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "skip.jsonl")
	out, _ := mustRun(t, 6, schema, "--lock-timeout", "200ms", "skip", "--category", "ORGANIZATION_UPDATE", "--batch-shards", "1", "--archive", archive, "--yes", "-o", "json")
	var run struct {
		Summary struct {
			Done, Failed int
			Operation    string `json:"operation"`
			Operations   int    `json:"operations"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &run); err != nil || run.Summary.Done != 2 || run.Summary.Failed != 1 {
		t.Fatalf("first run (%v):\n%s", err, out)
	}
	_ = lock.Rollback(ctx)
	out, errOut := mustRun(t, 0, schema, "skip", "--resume", run.Summary.Operation, "--yes", "-o", "json")
	var resumed struct {
		Summary struct {
			Selected, Done int
			Archive        string `json:"archive"`
		} `json:"summary"`
		Shards []struct {
			ID int64 `json:"shard_identifier"`
		} `json:"shards"`
	}
	if err := json.Unmarshal([]byte(out), &resumed); err != nil || resumed.Summary.Selected != 1 || resumed.Summary.Done != 1 || resumed.Summary.Archive != archive ||
		len(resumed.Shards) != 1 || resumed.Shards[0].ID != 2 || !strings.Contains(errOut, "resuming operation "+run.Summary.Operation) {
		t.Fatalf("resume (%v):\n%s\n%s", err, out, errOut)
	}
	if n := countRows(t, schema); n != 0 {
		t.Fatalf("%d rows left, want 0", n)
	}
	b, _ := os.ReadFile(archive)
	if !strings.Contains(string(b), `"op":"`+run.Summary.Operation+`.3"`) {
		t.Errorf("the resumed shard's operation is not %s.3:\n%s", run.Summary.Operation, b)
	}
	out, _ = mustRun(t, 0, schema, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
	if !strings.Contains(out, `"inserted": 6`) {
		t.Errorf("restore:\n%s", out)
	}
}

// TestBulkSkipMakesHeadlessShardsDue: skip --category removes organization/1 and /2's head
// rows (ORGANIZATION_MEMBER_UPDATE) and a later row of /3, whose head is ORGANIZATION_UPDATE;
// as skip MESSAGE_ID does, /1 and /2 are made due now (their backoff was earned by the row
// that is gone), /3 keeps its backoff; with --keep-backoff every shard keeps it.
func TestBulkSkipMakesHeadlessShardsDue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		keep bool
		due  string
		made int
	}{{false, "[1 2]", 2}, {true, "[]", 0}} {
		t.Run(fmt.Sprint("keep-backoff=", tt.keep), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
				(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
				SELECT 0, s, CASE WHEN (s < 3 AND i = 1) OR (s = 3 AND i = 2) THEN 3 ELSE 2 END, i, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
				  FROM generate_series(1, 3) s, generate_series(1, 3) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize())); err != nil {
				t.Fatal(err)
			}
			args := []string{"skip", "--category", "ORGANIZATION_MEMBER_UPDATE", "--archive", filepath.Join(t.TempDir(), "a.jsonl"), "--yes", "-o", "json"}
			if tt.keep {
				args = append(args, "--keep-backoff")
			}
			out, errOut := mustRun(t, 0, schema, args...)
			var got struct {
				Summary struct {
					Done    int `json:"done"`
					MadeDue int `json:"made_due"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.Summary.Done != 3 || got.Summary.MadeDue != tt.made {
				t.Fatalf("summary (%v):\n%s", err, out)
			}
			if a := auditLine(t, errOut, "skip"); a["made_due"] != float64(tt.made) {
				t.Errorf("audit line %v", a)
			}
			if due := fmt.Sprint(dueShards(t, schema)); due != tt.due {
				t.Errorf("due shards %s, want %s", due, tt.due)
			}
			if n := countRows(t, schema); n != 6 {
				t.Errorf("%d rows left, want 6", n)
			}
		})
	}
}

// TestBulkSelectingNothingPrintsTheEmptySummary (#36 Medium 7): a bulk repair whose selector
// matches no shard prints, with -o json, the summary document its schema describes (every
// count 0, no shard) and exits 0, as before; the reads print [] and it printed nothing.
func TestBulkSelectingNothingPrintsTheEmptySummary(t *testing.T) {
	t.Parallel()
	schema := seedBulkShards(t, 2, 2)
	for _, args := range [][]string{
		{"reschedule", "--scope", "organization", "--min-depth", "1000", "--yes", "-o", "json"},
		{"skip", "--category", "ORGANIZATION_UPDATE", "--min-depth", "1000", "--yes", "-o", "json"},
		{"compact", "--min-depth", "1000", "--yes", "-o", "json"},
	} {
		out, errOut := mustRun(t, 0, schema, args...)
		var doc struct {
			Summary map[string]any `json:"summary"`
			Shards  []any          `json:"shards"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Summary["selected"] != float64(0) || doc.Summary["done"] != float64(0) || doc.Shards == nil || len(doc.Shards) != 0 {
			t.Errorf("%s: %v\n%s\n%s", args[0], err, out, errOut)
		}
		if !strings.Contains(errOut, "no shards matched") {
			t.Errorf("%s: stderr %s", args[0], errOut)
		}
	}
}
