package mailbox

import (
	"context"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// HeadCard is inspect mailbox's card: the mailbox and its head, the payload Sentry
// delivers next, with what its attempts say.
type HeadCard struct {
	Mailbox       string        `json:"mailbox"`
	Provider      *string       `json:"provider"`
	Cell          *string       `json:"cell"`
	Destination   string        `json:"destination_type"`
	IntegrationID *int64        `json:"integration_id"`
	State         render.Styled `json:"state"`
	Depth         int64         `json:"depth"`
	DepthIs       string        `json:"depth_is"`
	HeadID        int64         `json:"head_id"`
	HeadAdded     time.Time     `json:"head_added"`
	Attempts      int           `json:"head_attempts"`
	AttemptsLeft  int           `json:"attempts_left"`
	// LastAttempt is derived, not stored: Sentry's schedule_next_attempt sets schedule_for
	// to the attempt's time plus Backoff(attempts), so the attempt was about schedule_for
	// minus that (nil before any attempt). A claim that pushed schedule_for (+3 min) makes
	// it later than it was.
	LastAttempt *time.Time `json:"last_attempt_approx"`
	NextAttempt render.Due `json:"next_attempt"`
	// NextBackoff is the delay Sentry sets if the next attempt fails.
	NextBackoff   string    `json:"next_backoff"`
	DropsAt       time.Time `json:"drops_at"`
	SkipsFailures bool      `json:"skips_failures"`
	SkipSource    string    `json:"skip_providers_source"`
}

// PayloadRow is a payload behind the head, in inspect mailbox's table.
type PayloadRow struct {
	ID          int64      `json:"id"`
	DateAdded   time.Time  `json:"date_added" label:"added"`
	Attempts    int        `json:"attempts"`
	NextAttempt render.Due `json:"next_attempt" label:"next attempt"`
	Method      string     `json:"method"`
	Path        string     `json:"path"`
}

// Inspected is inspect mailbox's answer; nil Head: the mailbox is empty (or unknown).
type Inspected struct {
	Head    *HeadCard
	Request Request
	Behind  []PayloadRow
}

// Inspect reads mailbox name of t: its head, its depth (counted up to
// query.MailboxCountCap, estimated past it from cat's size and the statistics) and the
// limit-1 payloads behind the head. show keeps the requests' secrets (--show-secrets).
func Inspect(ctx context.Context, q query.Querier, t query.Target, cat Catalog, name string, skip SkipProviders, limit int, show bool) (*Inspected, error) {
	st := query.MailboxPayloads(t, name, limit)
	rows, err := query.All[query.MailboxPayloadRow](ctx, q, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	out := &Inspected{Behind: []PayloadRow{}}
	if len(rows) == 0 {
		return out, nil
	}
	dst := query.MailboxDepthOne(t, name, query.MailboxCountCap, cat.EstimatedRows)
	depths, err := query.All[query.MailboxDepthOneRow](ctx, q, dst)
	if err != nil {
		return nil, db.Classify(err, dst.Name)
	}
	h := rows[0]
	depth, is := depthOf(depths[0].CountedDepth, depths[0].DepthCapped, depths[0].EstimatedDepth)
	skips := skip.Skips(h.Provider)
	c := &HeadCard{Mailbox: h.MailboxName, Provider: h.Provider, Cell: h.Cell, Destination: h.DestinationType, IntegrationID: h.IntegrationID,
		State: state(h.Attempts > 0 && !skips, h.Attempts, h.ScheduleFor, h.ObservedAt), Depth: depth, DepthIs: is,
		HeadID: h.ID, HeadAdded: h.DateAdded, Attempts: h.Attempts, AttemptsLeft: max(0, MaxAttempts-h.Attempts),
		NextAttempt: render.Due(h.ScheduleFor), NextBackoff: render.Duration(Backoff(h.Attempts + 1)),
		DropsAt: h.DateAdded.Add(MaxDeliveryAge), SkipsFailures: skips, SkipSource: skip.Source}
	// A derived time after the snapshot is no attempt (a schedule_for pushed by a claim or
	// written by hand): left unknown rather than shown in the future.
	if last := h.ScheduleFor.Add(-Backoff(h.Attempts)); h.Attempts > 0 && h.ScheduleFor.After(query.ThePast) && !last.After(h.ObservedAt) {
		c.LastAttempt = &last
	}
	out.Head = c
	out.Request = RedactRequest(h.RequestMethod, h.RequestPath, h.RequestHeaders, h.RequestBody, show)
	for _, r := range rows[1:] {
		path := r.RequestPath
		if !show {
			path = RedactPath(path)
		}
		out.Behind = append(out.Behind, PayloadRow{ID: r.ID, DateAdded: r.DateAdded, Attempts: r.Attempts,
			NextAttempt: render.Due(r.ScheduleFor), Method: r.RequestMethod, Path: path})
	}
	return out, nil
}

// ExactDepthRows is the table size above which depth --table hybridcloud_webhookpayload
// estimates unless --exact: its count is a pass over every payload (0.3–0.4 s at 1M on the
// test machine; 11–17 s at 20M under load), where the statistics answer at once.
const ExactDepthRows = 2_000_000

// DepthByEstimate says whether ReadDepth estimates: --estimate, or a table the catalog puts
// above ExactDepthRows without --exact.
func DepthByEstimate(cat Catalog, estimate, exact bool) bool {
	return estimate || (!exact && cat.EstimatedRows != nil && *cat.EstimatedRows > ExactDepthRows)
}

// ReadDepth counts the payloads of t per provider and cell (estimate: from the planner's
// statistics, per provider, cat's estimate of the table's rows split by them).
func ReadDepth(ctx context.Context, q query.Querier, t query.Target, cat Catalog, estimate bool) ([]query.MailboxDepthRow, error) {
	st := query.MailboxDepth(t)
	if estimate {
		st = query.MailboxDepthEstimate(t, cat.EstimatedRows)
	}
	rows, err := query.All[query.MailboxDepthRow](ctx, q, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	if rows == nil {
		rows = []query.MailboxDepthRow{}
	}
	return rows, nil
}
