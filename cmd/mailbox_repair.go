package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The mailbox forms of the repairs: reschedule --mailbox NAME and its bulk form
// reschedule --mailbox-provider PROVIDER. They take the repair's --yes, --dry-run and
// --reason and no outbox selector.

// mailboxRepairOptions are the mailbox forms' flags.
type mailboxRepairOptions struct {
	Mailbox, Provider string
}

// mailboxRepairFlags are the flags a mailbox form takes besides its own.
var mailboxRepairFlags = map[string]bool{"mailbox": true, "mailbox-provider": true, "yes": true, "dry-run": true, "reason": true} //nolint:gochecknoglobals // constant set

// addMailboxReschedule gives reschedule its mailbox forms: --mailbox and --mailbox-provider,
// run instead of the outbox forms when given.
func addMailboxReschedule(a *app, c *cobra.Command, ro *repairOptions) {
	var o mailboxRepairOptions
	c.Flags().StringVar(&o.Mailbox, "mailbox", "", "webhook mailbox form: make the payloads of this mailbox (hybridcloud_webhookpayload, provider:identifier) due now with a fresh backoff (attempts 0)")
	c.Flags().StringVar(&o.Provider, "mailbox-provider", "", "webhook mailbox bulk form: reschedule every mailbox of this provider whose head failed")
	c.Long += "\n\n" + strings.TrimSpace(`
Webhook mailboxes (hybridcloud_webhookpayload, control silo): --mailbox NAME gives every
payload of the mailbox the schedule of a new payload (schedule_for THE_PAST, attempts 0):
the mailbox is due at Sentry's next scheduler run, its head gets MAX_ATTEMPTS (10) tries
again, and its next failure backs off 4 minutes, not up to an hour. --mailbox-provider P
does it for every mailbox of provider P whose head failed, 100 mailboxes a transaction.
`+noDeliveryNote)
	c.Example += "\n" + examples(`
  outboxctl reschedule --mailbox github:1234 --reason 'INC-7: cell back' --yes
  outboxctl reschedule --mailbox-provider github --dry-run`)
	outbox := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		if o.Mailbox == "" && o.Provider == "" {
			return outbox(c, args)
		}
		if err := o.validate(c, args); err != nil {
			return err
		}
		return runMailboxReschedule(c.Context(), a, o, *ro)
	}
}

// validate refuses both forms at once, arguments, and the outbox forms' flags.
func (o mailboxRepairOptions) validate(c *cobra.Command, args []string) error {
	command := c.CommandPath()
	if o.Mailbox != "" && o.Provider != "" {
		return usageErrorf(command+" --mailbox "+o.Mailbox, "`--mailbox` and `--mailbox-provider` exclude each other: pass one")
	}
	if len(args) > 0 {
		return usageErrorf(command+" --help", "%s --mailbox takes no SCOPE ID: a mailbox is not an outbox shard", command)
	}
	var other string
	c.Flags().Visit(func(f *pflag.Flag) {
		if !mailboxRepairFlags[f.Name] && other == "" && c.Flags().Lookup(f.Name) != nil && c.LocalFlags().Lookup(f.Name) != nil {
			other = f.Name
		}
	})
	if other != "" {
		return usageErrorf(command+" --help", "`--%s` is an outbox flag: the mailbox forms take only --mailbox or --mailbox-provider, --reason, --yes and --dry-run", other)
	}
	if strings.ContainsRune(o.Mailbox+o.Provider, 0) {
		return usageErrorf(command+" --help", "a mailbox or provider name holds no NUL byte")
	}
	return nil
}

// mailboxTargetLine is a mailbox mutation's plan target: the database, schema and table.
func (a *app) mailboxTargetLine() string {
	return a.targetLine("mailbox") + ", table " + query.MailboxTable
}

// runMailboxReschedule is reschedule's mailbox forms: the plan, the confirmation, the
// UPDATE in transactions of mailbox.RescheduleBatch mailboxes, the audit line and the
// summary (--print-sql: the UPDATE of --mailbox, in its transaction).
func runMailboxReschedule(ctx context.Context, a *app, o mailboxRepairOptions, ro repairOptions) error {
	d := a.factory()
	const command = "outboxctl reschedule"
	t, err := a.mailboxTarget()
	if err != nil {
		return err
	}
	why := query.Why{Command: "reschedule", Reason: ro.Reason}
	if d.printSQL {
		if o.Mailbox == "" {
			return usageErrorf(command+" --mailbox-provider "+o.Provider+" --dry-run",
				"`--mailbox-provider` finds its mailboxes in the database, so it has no SQL to print; --dry-run shows its plan")
		}
		return d.printScript(query.InTransaction(d.preamble("reschedule"), query.Script{query.MailboxReschedule(t, []string{o.Mailbox}, why)}))
	}
	if err := d.requireDB(command); err != nil {
		return err
	}
	conn, err := d.connect(ctx, "reschedule")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var names []string
	var plan []string
	err = a.sessionOn(ctx, conn, query.MailboxTarget(t.Schema), 0, func(s *session) error {
		s.target.Cell = t.Cell
		return mailboxRead(s, func(s *session, cat mailbox.Catalog, skip mailbox.SkipProviders) error {
			if o.Mailbox != "" {
				in, err := mailbox.Inspect(s.ctx, s.tx, s.target, cat, o.Mailbox, skip, 1, false)
				if err != nil || in.Head == nil {
					return nonNil(err, failuref("mailbox %s is empty or does not exist in %s: nothing to reschedule", o.Mailbox, t.From()))
				}
				names = []string{o.Mailbox}
				plan = []string{fmt.Sprintf("make mailbox %s due now with a fresh backoff: %s %d payload(s); head %d, %d attempt(s), next attempt %s (%s)",
					o.Mailbox, in.Head.DepthIs, in.Head.Depth, in.Head.HeadID, in.Head.Attempts, schedule(d.printer, time.Time(in.Head.NextAttempt)), reasonText(ro.Reason))}
				return nil
			}
			rows, err := mailbox.FailedHeads(s.ctx, s.tx, s.target, o.Provider)
			if err != nil {
				return err
			}
			for _, r := range rows {
				names = append(names, r.Mailbox)
			}
			plan = []string{fmt.Sprintf("make the %d mailbox(es) of provider %s whose head failed due now with a fresh backoff (%s)", len(names), o.Provider, reasonText(ro.Reason))}
			for i, r := range rows {
				if i == 10 {
					plan = append(plan, fmt.Sprintf("… and %d more", len(rows)-10))
					break
				}
				plan = append(plan, fmt.Sprintf("%s: head %d, %d attempt(s), oldest payload added %s", r.Mailbox, r.HeadID, r.HeadAttempts, render.FormatTime(r.OldestAdded, d.now(), d.printer.Time)))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		d.printer.Notef("no mailbox of provider %s has a failed head: nothing to reschedule", o.Provider)
		return nil
	}
	if err := a.confirmPlan(command, mutationPlan{Target: a.mailboxTargetLine(), Lines: plan}, ro.Yes, len(names)); err != nil {
		return err
	}
	n, err := mailbox.Reschedule(ctx, conn, t, names, why)
	d.audit("reschedule", map[string]any{"table": query.MailboxTable, "mailboxes": names, "rows": n, "reason": ro.Reason})
	if err != nil {
		return err
	}
	sum := mailbox.RescheduleSummary{Mailboxes: names, Rows: n, NextAttempt: render.Styled{Text: "due now", Tone: render.ToneGood}}
	if o.Mailbox != "" {
		sum.Next = render.Commands{d.next(nil, "inspect", "mailbox", o.Mailbox)}
	} else {
		sum.Next = render.Commands{d.next(nil, "mailboxes", "--provider", o.Provider)}
	}
	return d.printer.Print(render.Doc{{Name: "reschedule", Card: render.FieldsOf(sum)}})
}

// nonNil is err, or other when err is nil.
func nonNil(err, other error) error {
	if err != nil {
		return err
	}
	return other
}
