package cmd_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDoctorMailboxes: doctor --check mailboxes finds, on both index sets, a head Sentry
// drops within 12 hours (crit), a mailbox blocked an hour (warn; one blocked 10 minutes is
// not), a mailbox past 10,000 payloads (warn), failing heads of a provider that skips
// failures (warn); each finding's next is a read (inspect mailbox, mailboxes). Its printed
// SQL runs in psql; on a database without the table it says so (ok).
func TestDoctorMailboxes(t *testing.T) {
	t.Parallel()
	for _, ix := range fixture.MailboxIndexSets {
		t.Run(string(ix), func(t *testing.T) {
			t.Parallel()
			schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
			now := time.Now()
			later := now.Add(10 * time.Minute)
			us := testdb.Str("us")
			testdb.InsertPayloads(t, schema,
				testdb.Payload{Mailbox: "jira:1", Cell: us, DateAdded: now.Add(-time.Hour), Attempts: 4, ScheduleFor: later},
				testdb.Payload{Mailbox: "jira:1", Cell: us, DateAdded: now.Add(-50 * time.Minute)},
				testdb.Payload{Mailbox: "jira:2", Cell: us, DateAdded: now.Add(-10 * time.Minute), Attempts: 1, ScheduleFor: later},
				testdb.Payload{Mailbox: "gitlab:3", Cell: us, DateAdded: now.Add(-63 * time.Hour)},
				testdb.Payload{Mailbox: "github:4", Cell: us, DateAdded: now.Add(-2 * time.Hour), Attempts: 3, ScheduleFor: later})
			execSQL(t, `INSERT INTO `+schema+`.hybridcloud_webhookpayload (mailbox_name, provider, region_name, date_added, schedule_for,
				attempts, request_method, request_path, request_headers, request_body)
				SELECT 'slack:big', 'slack', 'us', now() - interval '1 minute', '`+fixture.ThePast+`', 0, 'POST', '/', '{}', '' FROM generate_series(1, 10050)`)
			code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "mailboxes")
			if code != cmd.ExitCritical {
				t.Fatalf("exit %d, want %d (critical)\n%s", code, cmd.ExitCritical, errOut)
			}
			var got []string
			for _, f := range fs {
				got = append(got, fmt.Sprintf("%s %v %s", f.Severity, f.Evidence["mailbox"], strings.Join(f.Next, " ‖ ")))
			}
			want := []string{
				"crit gitlab:3 outboxctl --schema " + schema + " inspect mailbox gitlab:3",
				"warn jira:1 outboxctl --schema " + schema + " inspect mailbox jira:1 ‖ outboxctl --schema " + schema + " reschedule --mailbox jira:1 --reason 'receiver fixed' --dry-run",
				"warn slack:big outboxctl --schema " + schema + " inspect mailbox slack:big ‖ outboxctl --schema " + schema + " --table hybridcloud_webhookpayload depth",
				"warn <nil> outboxctl --schema " + schema + " mailboxes --provider github",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			script, _ := mustRun(t, cmd.ExitOK, schema, "doctor", "--check", "mailboxes", "--print-sql")
			if _, out, err := runPsql(testdb.Psql(t), schema, script); err != nil || !strings.Contains(out, "jira:1") {
				t.Errorf("printed SQL in psql: %v\n%s", err, out)
			}
		})
	}
	plain := testdb.Schema(t, fixture.Options{})
	code, fs, errOut := doctor(t, testdb.DSN(), plain, "--check", "mailboxes")
	if code != cmd.ExitOK || len(fs) != 1 || fs[0].Severity != "ok" || !strings.Contains(fs[0].Summary, "no webhook payload mailboxes here") {
		t.Errorf("without the table: exit %d %+v %s", code, fs, errOut)
	}
}
