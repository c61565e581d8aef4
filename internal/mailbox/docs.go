package mailbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Prelude is the catalog and option reads every mailbox read starts with, as printed SQL
// shows them; optionTable is the options table Sentry reads in the control silo ("": none).
func Prelude(t query.Target, optionTable string) query.Script {
	sc := query.Script{query.MailboxCatalog(t)}
	if optionTable != "" {
		sc = append(sc, query.OptionValues(t.Schema, optionTable, []string{SkipOption}))
	}
	return sc
}

// Doc is mailboxes' document: the listing, its counts, the skip-on-failure providers and the
// index set in the footer, --limit's cut and a missing head index said there too.
func (l *Listing) Doc() render.Doc {
	sec := render.Section{Name: "mailboxes", Table: render.TableOf(l.Rows)}
	notes := []string{fmt.Sprintf("%d mailbox(es), %d blocked; skipping failures: %s (%s); index set: %s",
		l.Mailboxes, l.Blocked, strings.Join(l.Skip.Providers, ", "), l.Skip.Source, l.Catalog.IndexSet())}
	if int64(len(l.Rows)) < l.Mailboxes {
		notes = append(notes, fmt.Sprintf("showing %d of %d mailboxes (--limit)", len(l.Rows), l.Mailboxes))
	}
	if !l.Catalog.HeadIndex {
		notes = append(notes, "warning: no (mailbox_name, id) index (webhookpayload_mailbox_id_idx): every head is a scan; Sentry's own drain is slow too")
	}
	sec.Footer = strings.Join(notes, "\n")
	return render.Doc{sec}
}

// Doc is inspect mailbox's document for mailbox name: the head's card with the next
// commands, its request, and what waits behind it.
func (in *Inspected) Doc(name string, next render.Commands) render.Doc {
	return render.Doc{
		{Name: "head", Title: "Mailbox " + name, Card: report.WithNext(render.FieldsOf(*in.Head), next)},
		{Name: "request", Title: "Head's request", Card: render.FieldsOf(in.Request)},
		{Name: "behind", Title: "Behind the head", Table: render.TableOf(in.Behind)},
	}
}

// Depth reads depth --table hybridcloud_webhookpayload in q: the payloads per provider and
// cell, or per provider from the statistics (estimate asked, or a table too big to count
// unless exact), and its document.
func Depth(ctx context.Context, q query.Querier, t query.Target, estimate, exact bool) (render.Doc, error) {
	cat, err := ReadCatalog(ctx, q, t)
	if err != nil {
		return nil, err
	}
	estimated := DepthByEstimate(cat, estimate, exact)
	rows, err := ReadDepth(ctx, q, t, cat, estimated)
	if err != nil {
		return nil, err
	}
	sec := render.Section{Name: "depth", Table: render.TableOf(rows)}
	if estimated {
		sec.Footer = "estimated from the planner's statistics (no table read): per provider, no split by cell, as fresh as the last ANALYZE"
		if !estimate {
			sec.Footer += fmt.Sprintf("; the table holds more than %d payloads: --exact counts them by provider and cell", ExactDepthRows)
		}
	}
	return render.Doc{sec}, nil
}
