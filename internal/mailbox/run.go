package mailbox

import (
	"strings"

	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// The runs of the webhook payload mailboxes' reads (hybridcloud_webhookpayload, control
// silo): mailboxes, inspect mailbox and depth --table hybridcloud_webhookpayload. Each
// prints its script or reads in a snapshot the command's outbox.Reader opens, and returns
// its document; cmd keeps the flags, their checks and one call.

// usageError is the operator's input refused: exit 2, as cmd's usage errors (cmd/exit.go's
// usage).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// UsageError marks the error as the operator's input.
func (e *usageError) UsageError() bool { return true }

// TargetOf is the webhook payload table in schema (--schema), with cell (--cell) as its cell
// filter; a schema that is no identifier or a cell holding a NUL byte is the operator's to
// fix.
func TargetOf(schema, cell string) (query.Target, error) {
	t := query.MailboxTarget(schema)
	if t.Schema != "" {
		if err := query.ValidateIdent("schema", t.Schema); err != nil {
			return t, &usageError{err.Error()}
		}
	}
	if strings.ContainsRune(cell, 0) {
		return t, &usageError{"`--cell` holds a NUL byte, which no cell name does"}
	}
	t.Cell = cell
	return t, nil
}

// session opens a read-only snapshot of the mailbox table t with the catalog (the options
// tables among it), checks that the mailbox table is here, reads the catalog and the
// skip-on-failure providers and calls fn with what it read. t's cell is the rows' filter,
// not part of the table opened.
func session(r outbox.Reader, t query.Target, fn func(s *outbox.Snapshot, cat Catalog, skip SkipProviders) error) error {
	filter := t.Cell
	t.Cell = ""
	return r.OpenOn(t, func(s *outbox.Snapshot) error {
		s.Target.Cell = filter
		cat, skip, err := ReadSession(s.Context(), s, s.Target, s.Schema)
		if err != nil {
			return err
		}
		return fn(s, cat, skip)
	})
}

// prelude is the catalog and option reads every mailbox read starts with, printed.
func prelude(r outbox.Reader, t query.Target) query.Script {
	return Prelude(t, options.OptionTableFor(query.SiloControl, r.PrintSchema))
}

// RunList is mailboxes' document for the mailboxes of t (its cell, provider: "" for all),
// the limit most harmful, or its SQL printed.
func RunList(r outbox.Reader, t query.Target, provider string, limit int) (render.Doc, error) {
	filter := query.MailboxFilter{Provider: provider, Cell: t.Cell}
	if r.PrintOnly {
		return nil, r.Print(append(prelude(r, t), query.Mailboxes(t, filter, DefaultSkipProviders, limit, query.MailboxCountCap, nil)))
	}
	var l *Listing
	err := session(r, t, func(s *outbox.Snapshot, cat Catalog, skip SkipProviders) (err error) {
		l, err = ReadListing(s.Context(), s, s.Target, cat, skip, filter, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.Doc(), nil
}

// RunInspect is inspect mailbox's document for mailbox name in t (its head, its request
// redacted unless show, and limit payloads in all), or its SQL printed; a mailbox that is
// empty or absent is a failure (exit 1).
func RunInspect(r outbox.Reader, t query.Target, name string, limit int, show bool) (render.Doc, error) {
	if r.PrintOnly {
		return nil, r.Print(append(prelude(r, t), query.MailboxPayloads(t, name, limit), query.MailboxDepthOne(t, name, query.MailboxCountCap, nil)))
	}
	var in *Inspected
	err := session(r, t, func(s *outbox.Snapshot, cat Catalog, skip SkipProviders) (err error) {
		in, err = Inspect(s.Context(), s, s.Target, cat, name, skip, limit, show)
		return err
	})
	if err != nil {
		return nil, err
	}
	if in.Head == nil {
		return nil, outbox.Failuref("mailbox %s is empty or does not exist in %s: outboxctl mailboxes lists them", textsafe.Command(name), t.From())
	}
	next := render.Commands{r.Next(nil, "reschedule", "--mailbox", name, "--reason", "receiver fixed")}
	return in.Doc(name, next), nil
}

// RunDepth is depth --table hybridcloud_webhookpayload on t: the payloads per provider and
// cell (estimate: per provider, from the statistics), or its SQL printed.
func RunDepth(r outbox.Reader, t query.Target, estimate, exact bool) (render.Doc, error) {
	st := query.MailboxDepth(t)
	if estimate {
		st = query.MailboxDepthEstimate(t, nil)
	}
	if r.PrintOnly {
		return nil, r.Print(query.Script{query.MailboxCatalog(t), st})
	}
	var doc render.Doc
	err := r.Open(outbox.CheckNothing, func(s *outbox.Snapshot) (err error) {
		doc, err = Depth(s.Context(), s, s.Target, estimate, exact)
		return err
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}
