package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/textsafe"
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
		t, err := a.mailboxTarget()
		if err != nil {
			return err
		}
		return runMailboxReschedule(c.Context(), a.factory(), t, a.mailboxTargetLine(), o, *ro)
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
	if err := onlyFlags(c, mailboxRepairFlags, "the mailbox forms take only --mailbox or --mailbox-provider, --reason, --yes and --dry-run"); err != nil {
		return err
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
func runMailboxReschedule(ctx context.Context, d factory, t query.Target, targetLine string, o mailboxRepairOptions, ro repairOptions) error {
	const command = "outboxctl reschedule"
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
	err = d.sessionOn(ctx, conn, query.MailboxTarget(t.Schema), 0, func(s *session) error {
		s.target.Cell = t.Cell
		return heldMailboxRead(s, func(s *session, cat mailbox.Catalog, skip mailbox.SkipProviders) error {
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
	if err := d.confirm(command, repair.Plan{Target: targetLine, Lines: plan, Shards: len(names)}, ro.Yes); err != nil {
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

// mailboxSkipOptions are skip's mailbox form's flags.
type mailboxSkipOptions struct {
	Mailbox string
	Head    bool
}

// mailboxSkipFlags are the flags skip's mailbox form takes besides its own.
var mailboxSkipFlags = map[string]bool{"mailbox": true, "head": true, "yes": true, "dry-run": true, "reason": true, "archive": true} //nolint:gochecknoglobals // constant set

// addMailboxSkip gives skip its mailbox form, skip --mailbox NAME --head, run instead of the
// outbox forms when --mailbox is given.
func addMailboxSkip(a *app, c *cobra.Command, ro *repairOptions) {
	var o mailboxSkipOptions
	c.Flags().StringVar(&o.Mailbox, "mailbox", "", "webhook mailbox form (with --head): the mailbox (hybridcloud_webhookpayload, provider:identifier) whose head to archive and delete")
	c.Flags().BoolVar(&o.Head, "head", false, "webhook mailbox form: skip the mailbox's head, the payload Sentry delivers next")
	c.Long += "\n\n" + strings.TrimSpace(`
Webhook mailboxes (hybridcloud_webhookpayload, control silo): --mailbox NAME --head archives,
then deletes, the mailbox's head, undelivered: the payload behind it becomes the head. The
run is one archive operation, as for a message (restore FILE --operation ID puts it back);
the archive holds the head's request as received, secrets included, in a file only you can
read, and restore prints no SQL for it. It deletes only while the payload is still the head
and no drain holds it. There is no --print-sql (a script cannot write the archive): --dry-run
shows the plan.
`+noDeliveryNote)
	c.Example += "\n" + examples(`
  outboxctl skip --mailbox jira:9 --head --reason 'INC-8: poison payload' --yes`)
	outbox := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		if o.Mailbox == "" && !o.Head {
			return outbox(c, args)
		}
		command := c.CommandPath()
		if o.Mailbox == "" || !o.Head {
			return usageErrorf(command+" --mailbox NAME --head", "`--mailbox` and `--head` go together: skip --mailbox NAME --head skips that mailbox's head")
		}
		if len(args) > 0 {
			return usageErrorf(command+" --help", "%s --mailbox takes no MESSAGE_ID: a webhook payload is not an outbox message", command)
		}
		if err := onlyFlags(c, mailboxSkipFlags, "the mailbox form takes only --mailbox, --head, --reason, --archive, --yes and --dry-run"); err != nil {
			return err
		}
		if a.g.PrintSQL {
			return usageErrorf(command+" --mailbox "+o.Mailbox+" --head --dry-run", "skip --mailbox archives before it deletes, which a printed script cannot: --dry-run shows the plan")
		}
		t, err := a.mailboxTarget()
		if err != nil {
			return err
		}
		return runMailboxSkip(c.Context(), a.factory(), t, a.mailboxTargetLine(), o, *ro)
	}
}

// onlyFlags refuses a flag of c's own not in allowed.
func onlyFlags(c *cobra.Command, allowed map[string]bool, what string) error {
	var other string
	c.Flags().Visit(func(f *pflag.Flag) {
		if !allowed[f.Name] && other == "" && c.LocalFlags().Lookup(f.Name) != nil {
			other = f.Name
		}
	})
	if other != "" {
		return usageErrorf(c.CommandPath()+" --help", "`--%s` is an outbox flag: %s", other, what)
	}
	return nil
}

// runMailboxSkip is skip --mailbox NAME --head: the plan, the confirmation, the archived
// delete, the audit line and the summary.
func runMailboxSkip(ctx context.Context, d factory, t query.Target, targetLine string, o mailboxSkipOptions, ro repairOptions) error {
	const command = "outboxctl skip"
	t.Cell = ""
	if err := d.requireDB(command); err != nil {
		return err
	}
	conn, err := d.connect(ctx, "skip")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	head := func() (*mailbox.Inspected, error) {
		var in *mailbox.Inspected
		err := d.sessionOn(ctx, conn, t, 0, func(s *session) error {
			return heldMailboxRead(s, func(s *session, cat mailbox.Catalog, skip mailbox.SkipProviders) error {
				var err error
				in, err = mailbox.Inspect(s.ctx, s.tx, s.target, cat, o.Mailbox, skip, 2, false)
				return err
			})
		})
		return in, err
	}
	in, err := head()
	if err != nil {
		return err
	}
	if in.Head == nil {
		return failuref("mailbox %s is empty or does not exist in %s: nothing to skip", o.Mailbox, t.From())
	}
	h := in.Head
	plan := []string{
		fmt.Sprintf("skip mailbox %s's head: archive, then delete payload %d (%d attempt(s), added %s: %s %s), undelivered (%s)",
			o.Mailbox, h.HeadID, h.Attempts, render.FormatTime(h.HeadAdded, d.now(), d.printer.Time), in.Request.Method, in.Request.Path, reasonText(ro.Reason)),
		fmt.Sprintf("the mailbox then holds %s %d payload(s); the archive keeps the head's request as received, secrets included (a file only you can read)", h.DepthIs, max(h.Depth-1, 0)),
	}
	if err := d.confirm(command, repair.Plan{Target: targetLine, Lines: plan, Shards: 1}, ro.Yes); err != nil {
		return err
	}
	deleted, op, err := mailbox.SkipHead(ctx, conn, t, o.Mailbox, h.HeadID, ro.Archive, ro.Reason, osUser(), d.now(), d.printer.Warnf)
	fields := map[string]any{"table": query.MailboxTable, "mailbox": o.Mailbox, "head": h.HeadID, "deleted": deleted, "reason": ro.Reason}
	if op != nil {
		fields["archive"], fields["operation"] = op.Path, op.Meta.ID
	}
	d.audit("skip", fields)
	if err != nil {
		if errors.Is(err, mailbox.ErrHeadMoved) {
			return failuref("payload %d: %v; outboxctl inspect mailbox %s shows the mailbox now", h.HeadID, err, o.Mailbox)
		}
		return err
	}
	sum := mailbox.SkipSummary{Mailbox: o.Mailbox, Deleted: deleted, HeadID: h.HeadID, Archive: op.Path, Operation: op.Meta.ID,
		Next: render.Commands{d.next(nil, "inspect", "mailbox", o.Mailbox)},
		Undo: textsafe.Command("outboxctl", "restore", op.Path, "--operation", op.Meta.ID)}
	if after, err := head(); err == nil && after.Head != nil {
		id := after.Head.HeadID
		sum.NewHead = &id
	}
	return d.printer.Print(render.Doc{{Name: "skip", Card: render.FieldsOf(sum)}})
}
