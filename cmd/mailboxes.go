package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The webhook payload mailboxes (hybridcloud_webhookpayload, control silo; reference §10.4):
// outboxctl mailboxes, inspect mailbox, and depth --table hybridcloud_webhookpayload. They
// name no outbox: --cell is the mailboxes' cell (region_name), without --silo control.

// mailboxCommands read or repair the mailbox table, not an outbox: validate checks no
// outbox target for them.
var mailboxCommands = map[string]bool{"outboxctl mailboxes": true, "outboxctl inspect mailbox": true} //nolint:gochecknoglobals // constant set

// noDeliveryNote is said in every mailbox command's help.
const noDeliveryNote = `outboxctl never delivers a webhook payload: Sentry's own drain does (its scheduler
finds a due head and drains the mailbox, or a push-triggered drain does).`

// mailboxTarget is the webhook payload table in --schema, with --cell as its cell filter
// (mailbox.TargetOf).
func (a *app) mailboxTarget() (query.Target, error) { return mailbox.TargetOf(a.g.Schema, a.g.Cell) }

// mailboxesOptions are mailboxes' flags.
type mailboxesOptions struct {
	Provider string
	Limit    int
}

// Validate checks --limit and --provider.
func (o mailboxesOptions) Validate() error {
	if o.Limit <= 0 {
		return usageErrorf("outboxctl mailboxes --limit 50", "`--limit` must be positive")
	}
	if strings.ContainsRune(o.Provider, 0) {
		return usageErrorf("outboxctl mailboxes --provider github", "`--provider` holds a NUL byte, which no provider name does")
	}
	return nil
}

func newMailboxesCmd(a *app) *cobra.Command {
	var o mailboxesOptions
	c := &cobra.Command{
		Use:   "mailboxes",
		Short: "List the webhook payload mailboxes (hybridcloud_webhookpayload), blocked longest first",
		Long: strings.TrimSpace(`
List the control silo's webhook payload mailboxes (hybridcloud_webhookpayload): the
webhooks Sentry's control silo received and forwards to the cells, one mailbox per
provider and integration (mailbox_name provider:identifier), each delivered head-of-line:
its lowest id first, the rest waiting behind it.

Each row is a mailbox: its state (blocked: its head failed and its provider does not skip
failures, so nothing behind it moves until the head is delivered or dropped; retrying: a
failed head of a provider that skips failures; due; waiting), its depth (exact when
counted, "at least" past 10,000, "estimated" from the planner's statistics when the
mailbox is among its most common), its oldest payload (the head), the head's attempts
and next attempt, when Sentry drops the head undelivered (3 days after it was added,
MAX_DELIVERY_AGE), its provider and cell, and whether the provider skips failures
(option hybridcloud.webhookpayload.skip_on_failure_providers; when it is not set, the
default of a Sentry since August 2026: github, github_enterprise, bitbucket,
bitbucket_server, gitlab). Most harmful first: blocked mailboxes, the one blocked longest
first, then the others by their oldest payload.

Heads are found through the (mailbox_name, id) index, which every Sentry has (the
schedule_for index was dropped in August 2026). --cell and --provider narrow the list.

` + noDeliveryNote),
		Example: examples(`
  outboxctl mailboxes
  outboxctl mailboxes --provider github --limit 50
  outboxctl mailboxes --cell us -o json
  outboxctl mailboxes --print-sql`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				return on.runMailboxes(ctx, o)
			})
		},
	}
	c.Flags().StringVar(&o.Provider, "provider", "", "only the mailboxes of this provider (github, slack, …)")
	c.Flags().IntVar(&o.Limit, "limit", query.DefaultLimit, "show at most this many mailboxes (the most harmful)")
	return c
}

// runMailboxes is mailboxes' document, or its SQL printed (mailbox.RunList).
func (a *app) runMailboxes(ctx context.Context, o mailboxesOptions) (render.Doc, error) {
	t, err := a.mailboxTarget()
	if err != nil {
		return nil, err
	}
	return mailbox.RunList(a.factory().reader(ctx, "mailboxes"), t, o.Provider, o.Limit)
}

// inspectMailboxOptions are inspect mailbox's flags and argument.
type inspectMailboxOptions struct {
	Name        string
	Limit       int
	ShowSecrets bool
}

// Validate checks the mailbox name and --limit.
func (o inspectMailboxOptions) Validate() error {
	if o.Name == "" || strings.ContainsRune(o.Name, 0) {
		return usageErrorf("outboxctl mailboxes", "invalid mailbox name %q: want provider:identifier, as outboxctl mailboxes lists them", o.Name)
	}
	if o.Limit <= 0 {
		return usageErrorf("outboxctl inspect mailbox "+o.Name+" --limit 10", "`--limit` must be positive")
	}
	return nil
}

func newInspectMailboxCmd(a *app) *cobra.Command {
	var o inspectMailboxOptions
	c := &cobra.Command{
		Use:   "mailbox NAME",
		Short: "Show a webhook mailbox's head (its request, secrets redacted), attempts and what waits behind it",
		Long: strings.TrimSpace(`
Show one webhook payload mailbox (hybridcloud_webhookpayload, NAME as outboxctl mailboxes
lists it, provider:identifier): its head, the payload Sentry delivers next, with its
attempts (of MAX_ATTEMPTS 10), its last attempt (derived from schedule_for and Sentry's
backoff of 3 × 1.4^attempts minutes capped at an hour: approximate), its next attempt,
the backoff after another failure, and when Sentry drops it undelivered (3 days after it
was added); the head's request; and the payloads behind it (--limit in all).

The request is shown with its secrets redacted: the Authorization, Cookie, X-Hub-Signature*
and other headers naming a token, secret, signature or key; in the body, JSON keys and form
fields so named, and values shaped like bearer tokens, JWTs and GitHub, GitLab or Slack
tokens. --show-secrets shows the request as stored: never the default.

` + noDeliveryNote),
		Example: examples(`
  outboxctl inspect mailbox github:1234
  outboxctl inspect mailbox github:1234 --limit 50 -o json
  outboxctl inspect mailbox slack:T0123 --show-secrets`),
		Args: exactArgs(1, "NAME"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				return on.runInspectMailbox(ctx, o)
			})
		},
	}
	c.Flags().IntVar(&o.Limit, "limit", query.DefaultLimit, "show the head and at most this many payloads in all")
	c.Flags().BoolVar(&o.ShowSecrets, "show-secrets", false, "show the head's request as stored, secrets and all (signatures, tokens, cookies)")
	return c
}

// runInspectMailbox is inspect mailbox's document, or its SQL printed (mailbox.RunInspect).
func (a *app) runInspectMailbox(ctx context.Context, o inspectMailboxOptions) (render.Doc, error) {
	t, err := a.mailboxTarget()
	if err != nil {
		return nil, err
	}
	return mailbox.RunInspect(a.factory().reader(ctx, "inspect mailbox"), t, o.Name, o.Limit, o.ShowSecrets)
}

// runMailboxDepth is depth --table hybridcloud_webhookpayload: the payloads per provider
// and cell (--estimate: per provider, from the statistics; mailbox.RunDepth).
func runMailboxDepth(ctx context.Context, d factory, o depthOptions, t query.Target) (render.Doc, error) {
	return mailbox.RunDepth(d.reader(ctx, "depth"), t, o.Estimate, o.Exact)
}
