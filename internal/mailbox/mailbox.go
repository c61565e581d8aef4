// Package mailbox reads and repairs Sentry's webhook payload mailboxes
// (hybridcloud_webhookpayload, control silo; reference §10.4): the webhook payloads the
// control silo forwards to cells, one mailbox per provider:identifier, each delivered
// head-of-line (its lowest id first). It never delivers: Sentry's own drain does.
package mailbox

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Sentry's constants (src/sentry/hybridcloud/models/webhookpayload.py and the delivery
// task, reference §10.4).
const (
	// MaxAttempts is how many deliveries of a payload Sentry tries.
	MaxAttempts = 10
	// MaxDeliveryAge is the age past which Sentry drops a payload undelivered.
	MaxDeliveryAge = 3 * 24 * time.Hour
	// MaxMailboxDrain is how many payloads one drain of a mailbox delivers.
	MaxMailboxDrain = 300
	// backoffMinutes and backoffRate: the delay after attempt n is 3 × 1.4^n minutes,
	// capped at backoffCap.
	backoffMinutes = 3
	backoffRate    = 1.4
	backoffCap     = time.Hour
)

// Backoff is the delay Sentry's schedule_next_attempt sets after a payload's attempts-th
// failed attempt: 3 × 1.4^attempts minutes, at most an hour.
func Backoff(attempts int) time.Duration {
	m := backoffMinutes * math.Pow(backoffRate, float64(attempts))
	d := time.Duration(m * float64(time.Minute))
	if m >= backoffCap.Minutes() {
		return backoffCap
	}
	return d
}

// SkipOption is the option listing the providers whose failing payloads Sentry skips
// instead of blocking their mailbox.
const SkipOption = "hybridcloud.webhookpayload.skip_on_failure_providers"

// DefaultSkipProviders is SkipOption's default on a Sentry since #121057 (2026-08-03);
// before, it was github alone. Which default a database's Sentry has cannot be told from
// the database: outboxctl takes the newer one.
var DefaultSkipProviders = []string{"github", "github_enterprise", "bitbucket", "bitbucket_server", "gitlab"} //nolint:gochecknoglobals // constant list

// SkipProviders are the providers that skip failures, and where the list came from.
type SkipProviders struct {
	Providers []string
	// Source: "option (TABLE)" when SkipOption is set, "default" otherwise.
	Source string
}

// Skips says whether provider's failing payloads are skipped.
func (s SkipProviders) Skips(provider *string) bool {
	return provider != nil && slices.Contains(s.Providers, *provider)
}

// ReadSkipProviders reads SkipOption from the options table Sentry's control silo reads
// (sch, introspected in schema), or gives the default when it is not set or no options
// table is here.
func ReadSkipProviders(ctx context.Context, q query.Querier, schema string, sch query.Schema) (SkipProviders, error) {
	def := SkipProviders{Providers: DefaultSkipProviders, Source: "default"}
	table := options.OptionTableFor(query.SiloControl, sch)
	if table == "" {
		return def, nil
	}
	st := query.OptionValues(schema, table, []string{SkipOption})
	rows, err := options.ReadValues(ctx, q, st)
	if err != nil {
		return SkipProviders{}, db.Classify(err, st.Name)
	}
	if len(rows) == 0 {
		return def, nil
	}
	v, err := options.Decode(SkipOption, rows[0].Raw())
	if err != nil {
		return SkipProviders{}, err
	}
	list, ok := v.Data.([]any)
	if !ok {
		return SkipProviders{}, fmt.Errorf("option %s in %s is not a list of providers: fix it with `sentry config set %s`", SkipOption, table, SkipOption)
	}
	out := SkipProviders{Providers: []string{}, Source: "option (" + table + ")"}
	for _, e := range list {
		if s, ok := e.(string); ok {
			out.Providers = append(out.Providers, s)
		}
	}
	return out, nil
}

// Catalog is what the catalog says of the mailbox table.
type Catalog struct {
	query.MailboxCatalogRow
}

// IndexSet names the table's side of the August 2026 drop.
func (c Catalog) IndexSet() string {
	if c.ScheduleIndex {
		return "before the Aug-2026 index drop (the schedule_for index is still there)"
	}
	return "current (no schedule_for index: heads are found through (mailbox_name, id))"
}

// NoTableError is a database without the mailbox table: not a control silo's, or a
// Sentry from before webhook mailboxes.
type NoTableError struct{ Table string }

func (e *NoTableError) Error() string {
	return fmt.Sprintf("no %s table here: webhook mailboxes live in the control silo's database; check --dsn, --context or --schema", e.Table)
}

// ReadCatalog reads the catalog of t and refuses a database without the table.
// ReadSession is what every mailbox read and repair starts with, in one snapshot: the
// catalog of t's webhook table and the providers Sentry skips on failure (the reads and the
// repairs each had a copy).
func ReadSession(ctx context.Context, q query.Querier, t query.Target, sch query.Schema) (Catalog, SkipProviders, error) {
	cat, err := ReadCatalog(ctx, q, t)
	if err != nil {
		return Catalog{}, SkipProviders{}, err
	}
	skip, err := ReadSkipProviders(ctx, q, t.Schema, sch)
	if err != nil {
		return Catalog{}, SkipProviders{}, err
	}
	return cat, skip, nil
}

func ReadCatalog(ctx context.Context, q query.Querier, t query.Target) (Catalog, error) {
	st := query.MailboxCatalog(t)
	rows, err := query.All[query.MailboxCatalogRow](ctx, q, st)
	if err != nil {
		return Catalog{}, db.Classify(err, st.Name)
	}
	if len(rows) != 1 || !rows[0].Present {
		return Catalog{}, &NoTableError{Table: t.From()}
	}
	return Catalog{rows[0]}, nil
}

// DepthIs labels a depth: counted exactly, estimated by the planner, or a lower bound.
const (
	DepthExact     = "exact"
	DepthEstimated = "estimated"
	DepthAtLeast   = "at least"
)

// depthOf is a mailbox's depth and its label from a count capped at countCap.
func depthOf(counted int64, capped bool, estimated *int64) (int64, string) {
	switch {
	case !capped:
		return counted, DepthExact
	case estimated != nil && *estimated >= counted:
		return *estimated, DepthEstimated
	}
	return counted, DepthAtLeast
}

// ListRow is a row of outboxctl mailboxes.
type ListRow struct {
	Mailbox  string  `json:"mailbox"`
	Provider *string `json:"provider"`
	Cell     *string `json:"cell"`
	// State: blocked (a head that failed, of a provider that does not skip failures),
	// retrying (a failed head of a provider that skips failures), due or waiting.
	State   render.Styled `json:"state"`
	Depth   int64         `json:"depth"`
	DepthIs string        `json:"depth_is" label:"depth is"`
	// OldestAdded is the head's date_added (the lowest id is the oldest payload).
	OldestAdded     time.Time  `json:"oldest_added" label:"oldest"`
	HeadID          int64      `json:"head_id" label:"head"`
	HeadAttempts    int        `json:"head_attempts" label:"attempts"`
	HeadNextAttempt render.Due `json:"head_next_attempt" label:"next attempt"`
	// DropsAt is when Sentry drops the head undelivered (MaxDeliveryAge after it was added).
	DropsAt         time.Time `json:"drops_at" label:"dropped"`
	SkipsFailures   bool      `json:"skips_failures" label:"skips failures"`
	DestinationType string    `json:"destination_type" render:"machine"`
}

// Listing is outboxctl mailboxes' answer.
type Listing struct {
	Rows []ListRow
	// Mailboxes and Blocked count every mailbox the filter kept, not only the rows shown.
	Mailboxes, Blocked int64
	Skip               SkipProviders
	Catalog            Catalog
	CountCap           int64
	// ObservedAt is the database's now() of the read (zero when no mailbox was read).
	ObservedAt time.Time
}

// ReadListing lists the mailboxes of t, most harmful first.
func ReadListing(ctx context.Context, q query.Querier, t query.Target, cat Catalog, skip SkipProviders, f query.MailboxFilter, limit int) (*Listing, error) {
	return readListing(ctx, q, t, cat, skip, f, limit, query.MailboxCountCap)
}

// ReadListingCapped is ReadListing counting each depth up to countCap (doctor's
// --mailbox-large: a depth at the threshold is then exact).
func ReadListingCapped(ctx context.Context, q query.Querier, t query.Target, cat Catalog, skip SkipProviders, f query.MailboxFilter, limit int, countCap int64) (*Listing, error) {
	return readListing(ctx, q, t, cat, skip, f, limit, countCap)
}

// readListing is ReadListing counting each depth up to countCap.
func readListing(ctx context.Context, q query.Querier, t query.Target, cat Catalog, skip SkipProviders, f query.MailboxFilter, limit int, countCap int64) (*Listing, error) {
	st := query.Mailboxes(t, f, skip.Providers, limit, countCap, cat.EstimatedRows)
	rows, err := query.All[query.MailboxRow](ctx, q, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	l := &Listing{Rows: []ListRow{}, Skip: skip, Catalog: cat, CountCap: countCap}
	for _, r := range rows {
		l.Mailboxes, l.Blocked, l.ObservedAt = r.Mailboxes, r.BlockedCount, r.ObservedAt
		depth, is := depthOf(r.CountedDepth, r.DepthCapped, r.EstimatedDepth)
		l.Rows = append(l.Rows, ListRow{Mailbox: r.MailboxName, Provider: r.Provider, Cell: r.Cell,
			State: state(r.Blocked, r.HeadAttempts, r.HeadNextAttempt, r.ObservedAt), Depth: depth, DepthIs: is,
			OldestAdded: r.OldestAdded, HeadID: r.HeadID, HeadAttempts: r.HeadAttempts, HeadNextAttempt: render.Due(r.HeadNextAttempt),
			DropsAt: r.OldestAdded.Add(MaxDeliveryAge), SkipsFailures: skip.Skips(r.Provider), DestinationType: r.DestinationType})
	}
	return l, nil
}

// state names a mailbox's state from its head.
func state(blocked bool, attempts int, next, now time.Time) render.Styled {
	switch {
	case blocked:
		return render.Styled{Text: "blocked", Tone: render.ToneBad}
	case attempts > 0:
		return render.Styled{Text: "retrying", Tone: render.ToneWarn}
	case !next.After(now):
		return render.Styled{Text: "due", Tone: render.ToneGood}
	}
	return render.Styled{Text: "waiting", Tone: render.ToneMuted}
}
