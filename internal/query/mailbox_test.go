package query

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestMailboxHeadsUseMailboxIDIndex: on both index sets (a current Sentry's, and one from
// before the Aug-2026 drop that still has the schedule_for and priority indexes), every
// mailbox statement that finds a head goes through (mailbox_name, id): EXPLAIN names
// webhookpayload_mailbox_id_idx; none uses a dropped index or reads the table
// sequentially. github:big is a quarter of the table: with mailbox_name = @mailbox the
// planner walked the primary key for its head, filtering on the name. 200 mailboxes of 100 payloads, one of 5,000, analyzed.
func TestMailboxHeadsUseMailboxIDIndex(t *testing.T) {
	t.Parallel()
	for _, ix := range fixture.MailboxIndexSets {
		t.Run(string(ix), func(t *testing.T) {
			t.Parallel()
			schema := testdb.MailboxSchema(t, fixture.Options{}, ix)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			q := pgx.Identifier{schema}.Sanitize()
			if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`
				INSERT INTO %[1]s.hybridcloud_webhookpayload (mailbox_name, provider, region_name, date_added, schedule_for, attempts,
				       request_method, request_path, request_headers, request_body)
				SELECT 'github:' || (g %% 200), CASE WHEN g %% 7 = 0 THEN 'stripe' ELSE 'github' END, 'us', now() - interval '1 day' + g * interval '1 second',
				       CASE WHEN g %% 50 = 0 THEN now() + interval '5 minutes' ELSE '2016-08-01' END, g %% 3, 'POST', '/', '{}', ''
				  FROM generate_series(1, 20000) g;
				INSERT INTO %[1]s.hybridcloud_webhookpayload (mailbox_name, provider, region_name, date_added, schedule_for, attempts,
				       request_method, request_path, request_headers, request_body)
				SELECT 'github:big', 'github', 'us', now(), '2016-08-01', 0, 'POST', '/', '{}', '' FROM generate_series(1, 5000);
				ANALYZE %[1]s.hybridcloud_webhookpayload;`, q)); err != nil {
				t.Fatal(err)
			}
			tg := MailboxTarget(schema)
			for _, c := range []struct {
				st    Statement
				heads bool // finds a large mailbox's head: through (mailbox_name, id)
			}{
				{Mailboxes(tg, MailboxFilter{}, []string{"github"}, 20, MailboxCountCap, nil), true},
				{Mailboxes(tg, MailboxFilter{Provider: "github", Cell: "us"}, nil, 5, MailboxCountCap, nil), true},
				{MailboxPayloads(tg, "github:big", 20), true},
				// A mailbox of 100 payloads: its rows sorted by id off the mailbox_name index
				// cost what the range does; a large one's must not be.
				{MailboxPayloads(tg, "github:7", 20), false},
				{MailboxDepthOne(tg, "github:big", MailboxCountCap, nil), false},
				{MailboxReschedule(tg, []string{"github:big", "github:7"}, Why{}), false},
			} {
				st := c.st
				plan := explain(t, ctx, st)
				if c.heads && !strings.Contains(plan, fixture.MailboxHeadIndex) {
					t.Errorf("%s does not use %s:\n%s", st.Name, fixture.MailboxHeadIndex, plan)
				}
				if !strings.Contains(plan, fixture.MailboxHeadIndex) && !strings.Contains(plan, "hybridcloud_mailbox_7bde0b_idx") {
					t.Errorf("%s reads through no mailbox_name index:\n%s", st.Name, plan)
				}
				for _, bad := range []string{fixture.MailboxScheduleForIndex, fixture.MailboxPriorityIndex, "Seq Scan on hybridcloud_webhookpayload"} {
					if strings.Contains(plan, bad) {
						t.Errorf("%s uses %s:\n%s", st.Name, bad, plan)
					}
				}
			}
		})
	}
}

// explain is st's plan as PostgreSQL's text EXPLAIN, in a transaction rolled back.
func explain(t *testing.T, ctx context.Context, st Statement) string {
	t.Helper()
	sql, args, err := st.Bind()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // nothing to keep
	rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", st.Name, err)
	}
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
