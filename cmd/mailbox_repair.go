package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
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

// validate refuses both forms at once, arguments, and the outbox forms' flags
// (mailbox.CheckRescheduleForm).
func (o mailboxRepairOptions) validate(c *cobra.Command, args []string) error {
	return tried(mailbox.CheckRescheduleForm(c.CommandPath(), o.Mailbox, o.Provider, len(args), func() error {
		return onlyFlags(c, mailboxRepairFlags, "the mailbox forms take only --mailbox or --mailbox-provider, --reason, --yes and --dry-run")
	}))
}

// mailboxTargetLine is a mailbox mutation's plan target: the database, schema and table.
func (a *app) mailboxTargetLine() string {
	return a.targetLine("mailbox") + ", table " + query.MailboxTable
}

// runMailboxReschedule is reschedule's mailbox forms through the one runner
// (repair.MailboxReschedule: the plan, the UPDATE in transactions of mailbox.RescheduleBatch
// mailboxes, the audit line and the summary; --print-sql: the UPDATE of --mailbox).
func runMailboxReschedule(ctx context.Context, d factory, t query.Target, targetLine string, o mailboxRepairOptions, ro repairOptions) error {
	const command = "outboxctl reschedule"
	if d.sql.printSQL && o.Mailbox == "" {
		return usageErrorf(command+" --mailbox-provider "+o.Provider+" --dry-run",
			"`--mailbox-provider` finds its mailboxes in the database, so it has no SQL to print; --dry-run shows its plan")
	}
	return runMutation(ctx, d, command, &repair.MailboxReschedule{Env: d.repairEnv(), Target: t, Mailbox: o.Mailbox, Provider: o.Provider,
		Reason: ro.Reason, PlanTarget: targetLine, When: d.when}, ro.Yes)
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
		if err := tried(mailbox.CheckSkipForm(c.CommandPath(), o.Mailbox, o.Head, len(args), func() error {
			return onlyFlags(c, mailboxSkipFlags, "the mailbox form takes only --mailbox, --head, --reason, --archive, --yes and --dry-run")
		}, a.g.PrintSQL)); err != nil {
			return err
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

// runMailboxSkip is skip --mailbox NAME --head through the one runner (repair.MailboxSkip:
// the plan, the archived delete, the audit line and the summary).
func runMailboxSkip(ctx context.Context, d factory, t query.Target, targetLine string, o mailboxSkipOptions, ro repairOptions) error {
	t.Cell = ""
	return runMutation(ctx, d, "outboxctl skip", &repair.MailboxSkip{Env: d.repairEnv(), Target: t, Mailbox: o.Mailbox, Reason: ro.Reason,
		Archive: ro.Archive, User: osUser(), PlanTarget: targetLine, When: d.when}, ro.Yes)
}
