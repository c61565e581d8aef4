package cmd_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// silenceCommitAnswerAfter makes p swallow the server's answer to the first COMMIT that
// follows a statement whose command tag starts with tag (tag "": a prepared statement's
// CloseComplete, which the batch drain's deallocation before its COMMIT gets): the server
// committed, the client never hears it (a COMMIT in doubt that did commit). Later
// connections are left alone.
func silenceCommitAnswerAfter(p *testdb.Proxy, tag string) {
	var mu sync.Mutex
	seen, done := false, false
	p.SilenceAt(func(typ byte, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
		case tag == "" && typ == '3', typ == 'C' && tag != "" && bytes.HasPrefix(body, []byte(tag+" ")):
			seen = true
		case seen && typ == 'C' && bytes.HasPrefix(body, []byte("COMMIT")):
			done = true
			return true
		}
		return false
	})
}

// holdCommitAfter makes p hold back the client's first COMMIT after a statement whose text
// holds sql: the server never gets it, and rolls the transaction back when the client gives
// up (a COMMIT in doubt that did not commit).
func holdCommitAfter(p *testdb.Proxy, sql string) {
	var mu sync.Mutex
	seen, done := false, false
	p.HoldFromClient(func(typ byte, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
		case (typ == 'P' || typ == 'Q') && bytes.Contains(body, []byte(sql)):
			seen = true
		case seen && typ == 'Q' && bytes.HasPrefix(body, []byte("COMMIT\x00")):
			done = true
			return true
		}
		return false
	})
}

const noAnswer = "no answer from PostgreSQL within 4s (the statement timeout, 1s, plus 3s): the server, or a proxy or the network before it, stopped answering; check the server and what is between (PgBouncer, a proxy, the network); raise --statement-timeout if the statement is only slow"

// TestDrainCommitInDoubt: a drain whose COMMIT got no answer settles it on a fresh
// connection and reports what it found, never "deleted 0" and "will be delivered again" for
// rows whose deletion committed. Batch and exact modes, committed and not, and a settle that
// cannot reach the server (deleted: null, in doubt).
func TestDrainCommitInDoubt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, mode     string
		hold, refuse   bool
		want, summary  []string
		audit, errLine string
		left           int64
	}{
		{name: "batch committed", mode: "batch",
			summary: []string{`"delivered": 3`, `"deleted": 3`, `"left": 0`, `"in_doubt": "committed"`},
			audit:   `"deleted":3,"delivered":3,"handler":"exec:cat \u003e/dev/null","in_doubt":"committed"`,
			errLine: "Error: the COMMIT got no answer (" + noAnswer + "); settled on a fresh connection: committed, 3 message(s) delivered and 3 row(s) deleted in it; the drain stopped there",
			left:    0},
		{name: "exact committed", mode: "exact",
			summary: []string{`"delivered": 1`, `"deleted": 1`, `"left": 2`, `"in_doubt": "committed"`},
			audit:   `"deleted":1,"delivered":1,"handler":"exec:cat \u003e/dev/null","in_doubt":"committed"`,
			errLine: "Error: the COMMIT got no answer (" + noAnswer + "); settled on a fresh connection: committed, 1 message(s) delivered and 1 row(s) deleted in it; the drain stopped there",
			left:    2},
		{name: "batch not committed", mode: "batch", hold: true,
			summary: []string{`"delivered": 0`, `"deleted": 0`, `"left": 3`, `"delivered_not_committed": 3`, `"in_doubt": "not committed"`},
			audit:   `"deleted":0,"delivered":0,"handler":"exec:cat \u003e/dev/null","in_doubt":"not committed"`,
			errLine: "Error: the COMMIT got no answer (" + noAnswer + "); settled on a fresh connection: not committed, 3 delivered message(s) are still in the table and will be delivered again",
			left:    3},
		{name: "batch unsettled", mode: "batch", refuse: true,
			summary: []string{`"delivered": 0`, `"deleted": null`, `"left": "unknown"`, `"in_doubt": "in doubt"`, `"delivered_in_doubt": 3`},
			audit:   `"deleted":"in doubt","delivered":0,"handler":"exec:cat \u003e/dev/null","in_doubt":"in doubt"`,
			errLine: "Error: the COMMIT got no answer, so whether it committed is unknown: " + noAnswer + "; it could not be settled (cannot reach PostgreSQL at ",
			left:    0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			seedGroups(t, schema, 3)
			p := testdb.NewProxy(t)
			switch {
			case tt.hold:
				holdCommitAfter(p, "DELETE FROM")
			case tt.mode == "batch":
				// The batch deletes in CTEs (tag SELECT) and drops its prepared statements
				// before the COMMIT; the claim's transaction prepares none.
				silenceCommitAnswerAfter(p, "")
			default:
				silenceCommitAnswerAfter(p, "DELETE")
			}
			if tt.refuse {
				p.RefuseAfter(1) // the drain's one connection (its plan reads on it too): no settle, no summary read
			}
			code, out, errOut := runAt(p.DSN(), schema, "--statement-timeout", "1s", "drain", "organization", "1",
				"--handler", "exec:cat >/dev/null", "--mode", tt.mode, "--yes", "-o", "json")
			last := lastLine(errOut)
			ok := code == cmd.ExitError && strings.Contains(errOut, tt.audit)
			for _, s := range tt.summary {
				ok = ok && strings.Contains(out, s)
			}
			if tt.refuse {
				ok = ok && strings.HasPrefix(last, tt.errLine) && strings.HasSuffix(last, "): 3 message(s) may or may not have been deleted; see what is left with outboxctl inspect shard ORGANIZATION_SCOPE 1")
			} else {
				ok = ok && last == tt.errLine && !strings.Contains(out, "delivered_in_doubt")
			}
			if !ok {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if n := countRows(t, schema); n != tt.left {
				t.Errorf("%d rows left, want %d", n, tt.left)
			}
		})
	}
}

// TestRepairCommitInDoubt: reschedule, compact and skip whose COMMIT got no answer settle it
// and say what they found; compact and skip write the archive's commit marker when the
// delete committed (restore then puts the rows back) and its abort marker when it did not.
func TestRepairCommitInDoubt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tag, sql string
		hold           bool
		args           []string
		card, audit    string
		found, marker  string
		left           int64
	}{
		{name: "reschedule", tag: "UPDATE", args: []string{"reschedule", "organization", "1"},
			card: `"rows": 3,` + "\n" + `  "in_doubt": "committed"`, audit: `"in_doubt":"committed","mode":"all-rows","reason":"","rows":3`,
			found: "committed, 3 row(s) rescheduled", left: 3},
		{name: "reschedule not committed", tag: "UPDATE", sql: "UPDATE ", hold: true, args: []string{"reschedule", "organization", "1"},
			card: `"rows": 0,` + "\n" + `  "in_doubt": "not committed"`, audit: `"in_doubt":"not committed","mode":"all-rows","reason":"","rows":0`,
			found: "not committed, nothing changed: run outboxctl reschedule again", left: 3},
		{name: "compact", tag: "DELETE", args: []string{"compact", "organization", "1", "--archive", "ARCHIVE"},
			card: `"deleted": 2,` + "\n" + `  "in_doubt": "committed"`, audit: `"deleted":2,"in_doubt":"committed"`,
			found: "committed, 2 row(s) deleted", marker: `"kind":"commit"`, left: 1},
		{name: "compact not committed", sql: "DELETE FROM", hold: true, args: []string{"compact", "organization", "1", "--archive", "ARCHIVE"},
			card: `"deleted": 0,` + "\n" + `  "in_doubt": "not committed"`, audit: `"deleted":0,"in_doubt":"not committed"`,
			found: "not committed, nothing changed: run outboxctl compact again", marker: `"kind":"abort"`, left: 3},
		{name: "skip", tag: "DELETE", args: []string{"skip", "ID", "--archive", "ARCHIVE"},
			card: `"deleted": 3,` + "\n" + `  "in_doubt": "committed"`, audit: `"deleted":3,"in_doubt":"committed"`,
			found: "committed, 3 row(s) deleted", marker: `"kind":"commit"`, left: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			// In backoff, so that a reschedule that did not commit shows.
			backoff := testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour)}
			ids := testdb.Insert(t, schema, "sentry_regionoutbox", backoff, backoff, backoff)
			p := testdb.NewProxy(t)
			if tt.hold {
				holdCommitAfter(p, tt.sql)
			} else {
				silenceCommitAnswerAfter(p, tt.tag)
			}
			archive := t.TempDir() + "/archive.jsonl"
			args := append([]string{"--statement-timeout", "1s"}, tt.args...)
			for i, a := range args {
				args[i] = strings.NewReplacer("ARCHIVE", archive, "ID", strconv.FormatInt(ids[0], 10)).Replace(a)
			}
			code, out, errOut := runAt(p.DSN(), schema, append(args, "--yes", "-o", "json")...)
			last := lastLine(errOut)
			ok := code == cmd.ExitError && strings.Contains(out, tt.card) && strings.Contains(errOut, tt.audit) &&
				strings.HasPrefix(last, "Error: the COMMIT got no answer ("+noAnswer+"); settled on a fresh connection: "+tt.found)
			if !ok {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if tt.marker != "" {
				b, err := os.ReadFile(archive)
				if err != nil || !strings.Contains(string(b), tt.marker) {
					t.Errorf("archive holds no %s marker (%v):\n%s", tt.marker, err, b)
				}
			}
			if n := countRows(t, schema); n != tt.left {
				t.Errorf("%d rows left, want %d", n, tt.left)
			}
		})
	}
}
