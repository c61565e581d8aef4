package mailbox

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// RescheduleBatch is how many mailboxes one transaction of a bulk reschedule rewrites.
const RescheduleBatch = 100

// RescheduleSummary is what reschedule --mailbox changed.
type RescheduleSummary struct {
	// Mailboxes are the mailboxes rescheduled (one for --mailbox).
	Mailboxes []string `json:"mailboxes"`
	// Rows are the payloads whose schedule_for or attempts changed: every payload of the
	// mailboxes not already due with no attempts.
	Rows        int64           `json:"rows"`
	NextAttempt render.Styled   `json:"next_attempt"`
	Next        render.Commands `json:"next,omitempty"`
}

// Reschedule makes every payload of mailboxes due now with a fresh backoff
// (query.MailboxReschedule), RescheduleBatch mailboxes per write transaction on conn. It
// returns the payloads changed. The UPDATE is idempotent: a run stopped (or a COMMIT that
// got no answer) is completed by running it again.
func Reschedule(ctx context.Context, conn *db.Conn, t query.Target, mailboxes []string, why query.Why) (int64, error) {
	var total int64
	for len(mailboxes) > 0 {
		n := min(len(mailboxes), RescheduleBatch)
		st := query.MailboxReschedule(t, mailboxes[:n], why)
		var rows []query.MailboxRescheduledRow
		err := db.WriteTx(ctx, conn, func(tx db.Tx) error {
			var err error
			rows, err = query.All[query.MailboxRescheduledRow](ctx, tx, st)
			return db.Classify(err, st.Name)
		})
		if err != nil {
			if db.IsInDoubt(err) {
				return total, fmt.Errorf("%w; whether the last %d mailbox(es) were rescheduled is unknown: the reschedule is idempotent, run it again", err, n)
			}
			return total, err
		}
		total += int64(len(rows))
		mailboxes = mailboxes[n:]
	}
	return total, nil
}

// FailedHeads lists the mailboxes of t (of provider, when given) whose head failed at
// least once: what a bulk reschedule rewrites. A mailbox whose head never failed is due as
// it is, or waits on a claim that will deliver it.
func FailedHeads(ctx context.Context, q query.Querier, t query.Target, provider string) ([]ListRow, error) {
	// Every mailbox: the listing's blocked-first order, no skip providers (a failed head
	// of any provider counts), no cap on how many, no depth counted (a cap of 0).
	l, err := readListing(ctx, q, t, Catalog{}, SkipProviders{}, query.MailboxFilter{Provider: provider, Cell: t.Cell}, maxMailboxes, 0)
	if err != nil {
		return nil, err
	}
	var out []ListRow
	for _, r := range l.Rows {
		if r.HeadAttempts > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// maxMailboxes bounds a bulk reschedule's listing: more mailboxes than Sentry's GitHub
// integrations ever had.
const maxMailboxes = 1_000_000
