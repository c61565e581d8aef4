package repair

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// The webhook mailboxes' repairs (hybridcloud_webhookpayload, control silo): reschedule
// --mailbox NAME or --mailbox-provider P, and skip --mailbox NAME --head. Their plans read
// the mailbox catalog in a snapshot on the connection they then write with.

// mailboxRead reads, in a read snapshot of t on conn, the mailbox catalog and the providers
// Sentry skips, and calls fn with them, the snapshot's target in cell.
func (e Env) mailboxRead(ctx context.Context, conn *db.Conn, t query.Target, cell string, fn func(s *outbox.Snapshot, cat mailbox.Catalog, skip mailbox.SkipProviders) error) error {
	return outbox.On(ctx, conn, t, outbox.Options{Deployment: e.Deployment}, func(s *outbox.Snapshot) error {
		s.Target.Cell = cell // the catalog adapts the table, not which cell it is read for
		cat, skip, err := mailbox.ReadSession(s.Context(), s, s.Target, s.Schema)
		if err != nil {
			return err
		}
		return fn(s, cat, skip)
	})
}

// MailboxReschedule makes a mailbox (Mailbox) or every mailbox of a provider whose head
// failed (Provider) due now with a fresh backoff (attempts 0).
type MailboxReschedule struct {
	Env
	Target   query.Target
	Mailbox  string
	Provider string
	Reason   string
	// PlanTarget is the plan's target line (the database, schema and mailbox table).
	PlanTarget string
	// When formats a time in a plan line (the printer's format, relative to now).
	When func(time.Time) string
}

func (r *MailboxReschedule) why() query.Why {
	return query.Why{Command: "reschedule", Reason: r.Reason}
}

// Script is --mailbox's UPDATE in its transaction (--mailbox-provider has none: cmd refuses
// it, its mailboxes are found in the database).
func (r *MailboxReschedule) Script(preamble []string) ([]string, error) {
	text, err := query.InTransaction(preamble, query.Script{query.MailboxReschedule(r.Target, []string{r.Mailbox}, r.why())}).Render()
	return []string{text}, err
}

// Plan reads the mailbox's head, or the provider's mailboxes whose head failed.
func (r *MailboxReschedule) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	var names, lines []string
	err := r.mailboxRead(ctx, conn, query.MailboxTarget(r.Target.Schema), r.Target.Cell, func(s *outbox.Snapshot, cat mailbox.Catalog, skip mailbox.SkipProviders) error {
		if r.Mailbox != "" {
			in, err := mailbox.Inspect(s.Context(), s, s.Target, cat, r.Mailbox, skip, 1, false)
			if err != nil || in.Head == nil {
				return nonNil(err, failuref("mailbox %s is empty or does not exist in %s: nothing to reschedule", r.Mailbox, r.Target.From()))
			}
			names = []string{r.Mailbox}
			lines = []string{fmt.Sprintf("make mailbox %s due now with a fresh backoff: %s %d payload(s); head %d, %d attempt(s), next attempt %s (%s)",
				r.Mailbox, in.Head.DepthIs, in.Head.Depth, in.Head.HeadID, in.Head.Attempts, r.Time(time.Time(in.Head.NextAttempt)), drain.ReasonText(r.Reason))}
			return nil
		}
		rows, err := mailbox.FailedHeads(s.Context(), s, s.Target, r.Provider)
		if err != nil {
			return err
		}
		for _, row := range rows {
			names = append(names, row.Mailbox)
		}
		lines = []string{fmt.Sprintf("make the %d mailbox(es) of provider %s whose head failed due now with a fresh backoff (%s)", len(names), r.Provider, drain.ReasonText(r.Reason))}
		for i, row := range rows {
			if i == 10 {
				lines = append(lines, fmt.Sprintf("… and %d more", len(rows)-10))
				break
			}
			lines = append(lines, fmt.Sprintf("%s: head %d, %d attempt(s), oldest payload added %s", row.Mailbox, row.HeadID, row.HeadAttempts, r.When(row.OldestAdded)))
		}
		return nil
	})
	if err != nil {
		return Plan{}, err
	}
	if len(names) == 0 {
		return Plan{Nothing: fmt.Sprintf("no mailbox of provider %s has a failed head: nothing to reschedule", r.Provider)}, nil
	}
	return Plan{Target: r.PlanTarget, Lines: lines, Shards: len(names), detail: names}, nil
}

// Apply runs the UPDATE, in transactions of mailbox.RescheduleBatch mailboxes. The audit line
// is written whatever happened: it records the attempt.
func (r *MailboxReschedule) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	names := p.detail.([]string)
	n, err := mailbox.Reschedule(ctx, conn, r.Target, names, r.why())
	audit := []Audit{{"reschedule", map[string]any{"table": query.MailboxTable, "mailboxes": names, "rows": n, "reason": r.Reason}}}
	if err != nil {
		return Summary{Audit: audit}, err
	}
	sum := mailbox.RescheduleSummary{Mailboxes: names, Rows: n, NextAttempt: render.Styled{Text: "due now", Tone: render.ToneGood}}
	if r.Mailbox != "" {
		sum.Next = render.Commands{r.Next(nil, "inspect", "mailbox", r.Mailbox)}
	} else {
		sum.Next = render.Commands{r.Next(nil, "mailboxes", "--provider", r.Provider)}
	}
	return Summary{Audit: audit, Doc: render.Doc{{Name: "reschedule", Card: render.FieldsOf(sum)}}}, nil
}

// MailboxSkip archives, then deletes, a mailbox's head, undelivered (skip --mailbox NAME
// --head): the payload behind it becomes the head.
type MailboxSkip struct {
	Env
	Target  query.Target
	Mailbox string
	Reason  string
	Archive string
	User    string
	// PlanTarget is the plan's target line (the database, schema and mailbox table).
	PlanTarget string
	// When formats a time in a plan line (the printer's format, relative to now).
	When func(time.Time) string
}

// Script is none: a skip of a mailbox's head archives before it deletes, which a printed
// script cannot (cmd refuses --print-sql before the runner).
func (m *MailboxSkip) Script([]string) ([]string, error) {
	return nil, errors.New("skip --mailbox has no SQL to print: it archives before it deletes")
}

// head reads the mailbox's head (and the payload behind it).
func (m *MailboxSkip) head(ctx context.Context, conn *db.Conn) (*mailbox.Inspected, error) {
	var in *mailbox.Inspected
	err := m.mailboxRead(ctx, conn, m.Target, m.Target.Cell, func(s *outbox.Snapshot, cat mailbox.Catalog, skip mailbox.SkipProviders) error {
		var err error
		in, err = mailbox.Inspect(s.Context(), s, s.Target, cat, m.Mailbox, skip, 2, false)
		return err
	})
	return in, err
}

// Plan reads the head it would skip.
func (m *MailboxSkip) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	in, err := m.head(ctx, conn)
	if err != nil {
		return Plan{}, err
	}
	if in.Head == nil {
		return Plan{}, failuref("mailbox %s is empty or does not exist in %s: nothing to skip", m.Mailbox, m.Target.From())
	}
	h := in.Head
	return Plan{Target: m.PlanTarget, Shards: 1, detail: h, Lines: []string{
		fmt.Sprintf("skip mailbox %s's head: archive, then delete payload %d (%d attempt(s), added %s: %s %s), undelivered (%s)",
			m.Mailbox, h.HeadID, h.Attempts, m.When(h.HeadAdded), in.Request.Method, in.Request.Path, drain.ReasonText(m.Reason)),
		fmt.Sprintf("the mailbox then holds %s %d payload(s); the archive keeps the head's request as received, secrets included (a file only you can read)", h.DepthIs, max(h.Depth-1, 0)),
	}}, nil
}

// Apply archives and deletes the head while it is still the head and no drain holds it. The
// audit line is written whatever happened: it records the attempt.
func (m *MailboxSkip) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	h := p.detail.(*mailbox.HeadCard)
	deleted, op, err := mailbox.SkipHead(ctx, conn, m.Target, m.Mailbox, h.HeadID, m.Archive, m.Reason, m.User, m.Now(), m.Warnf)
	fields := map[string]any{"table": query.MailboxTable, "mailbox": m.Mailbox, "head": h.HeadID, "deleted": deleted, "reason": m.Reason}
	if op != nil {
		fields["archive"], fields["operation"] = op.Path, op.Meta.ID
	}
	audit := []Audit{{"skip", fields}}
	if err != nil {
		if errors.Is(err, mailbox.ErrHeadMoved) {
			err = failuref("payload %d: %v; outboxctl inspect mailbox %s shows the mailbox now", h.HeadID, err, m.Mailbox)
		}
		return Summary{Audit: audit}, err
	}
	sum := mailbox.SkipSummary{Mailbox: m.Mailbox, Deleted: deleted, HeadID: h.HeadID, Archive: op.Path, Operation: op.Meta.ID,
		Next: render.Commands{m.Next(nil, "inspect", "mailbox", m.Mailbox)},
		Undo: textsafe.Command("outboxctl", "restore", op.Path, "--operation", op.Meta.ID)}
	if after, err := m.head(ctx, conn); err == nil && after.Head != nil {
		id := after.Head.HeadID
		sum.NewHead = &id
	}
	return Summary{Audit: audit, Doc: render.Doc{{Name: "skip", Card: render.FieldsOf(sum)}}}, nil
}

// nonNil is err, or other when err is nil.
func nonNil(err, other error) error {
	if err != nil {
		return err
	}
	return other
}
