package query

import (
	"fmt"
	"time"
)

// The statements of the webhook payload mailboxes (outboxctl mailboxes, inspect mailbox,
// depth --table hybridcloud_webhookpayload, reschedule --mailbox), in sql/mailbox.sql.

// MailboxTable is Sentry's webhook payload table (reference §10.4), in the control silo.
const MailboxTable = "hybridcloud_webhookpayload"

// MailboxCountCap is how far the mailbox listing counts each mailbox's depth before it
// says "more than": an index-only range of 10,001 entries is a few milliseconds.
const MailboxCountCap = 10_000

// IsMailboxTable says whether t names the webhook payload table (--table
// hybridcloud_webhookpayload).
func IsMailboxTable(t Target) bool { return t.Table == MailboxTable }

// MailboxTarget is the webhook payload table in schema ("" : the search_path).
func MailboxTarget(schema string) Target {
	return Target{Silo: SiloControl, Schema: schema, Table: MailboxTable}
}

// MailboxCatalogRow is the one row of MailboxCatalog.
type MailboxCatalogRow struct {
	Present       bool     `db:"present"`
	EstimatedRows *int64   `db:"estimated_rows"`
	HeadIndex     bool     `db:"head_index"`
	ScheduleIndex bool     `db:"schedule_index"`
	Columns       []string `db:"columns"`
}

// MailboxCatalog reads whether the table is here, its size as the planner sees it, and
// which of its indexes exist (by columns).
func MailboxCatalog(t Target) Statement {
	return sqlStatement("mailbox-catalog", []string{
		"Is " + t.From() + " here, how many rows the planner thinks it holds, and does it have",
		"the (mailbox_name, id) index (head_index) and the schedule_for index Sentry dropped in Aug 2026.",
	}, nil, Args{"table": {Value: t.From()}})
}

// MailboxFilter narrows the mailbox listing to one provider and one cell (either empty:
// every one).
type MailboxFilter struct {
	Provider, Cell string
}

// MailboxRow is a row of Mailboxes.
type MailboxRow struct {
	MailboxName     string    `db:"mailbox_name"`
	Provider        *string   `db:"provider"`
	Cell            *string   `db:"cell"`
	DestinationType string    `db:"destination_type"`
	CountedDepth    int64     `db:"counted_depth"`
	DepthCapped     bool      `db:"depth_capped"`
	EstimatedDepth  *int64    `db:"estimated_depth"`
	HeadID          int64     `db:"head_id"`
	HeadAttempts    int       `db:"head_attempts"`
	HeadNextAttempt time.Time `db:"head_next_attempt"`
	OldestAdded     time.Time `db:"oldest_added"`
	Blocked         bool      `db:"blocked"`
	Mailboxes       int64     `db:"mailboxes"`
	BlockedCount    int64     `db:"blocked_mailboxes"`
	ObservedAt      time.Time `db:"observed_at"`
}

// Mailboxes lists the mailboxes of t, most harmful first (blocked longest first), the first
// limit of them with their depth counted up to countCap; skip are the providers that skip
// a failing payload instead of blocking their mailbox; tableRows is the catalog's estimate
// of the table's rows (nil: unknown, no mailbox's depth is estimated).
func Mailboxes(t Target, f MailboxFilter, skip []string, limit int, countCap int64, tableRows *int64) Statement {
	args := Args{
		"table_rows":     tableRowsArg(tableRows),
		"skip_providers": {Value: nonNil(skip), Note: "providers that skip a failing payload (hybridcloud.webhookpayload.skip_on_failure_providers)"},
		"limit":          {Value: limitOrDefault(limit)},
		"count_cap":      {Value: countCap, Note: "count each mailbox's depth up to this"},
		"table_name":     {Value: t.From()},
	}
	on := []string{"listing"}
	if f.Provider != "" {
		on = append(on, "provider")
		args["provider"] = Arg{Value: f.Provider}
	}
	if f.Cell != "" {
		on = append(on, "cell")
		args["cell"] = Arg{Value: f.Cell}
	}
	return sqlStatement("mailboxes", []string{
		"The mailboxes of " + t.From() + " (webhook payloads, control silo), most harmful first: blocked",
		"mailboxes (a head that failed, of a provider that does not skip failures), the one blocked",
		"longest first, then the others by their oldest payload; each head is found through",
		"the (mailbox_name, id) index. Depths are counted up to @count_cap.",
	}, t.tableIdent(), args, on...)
}

// MailboxPayloadRow is a row of MailboxPayloads: one payload, its request as stored.
type MailboxPayloadRow struct {
	ID              int64     `db:"id"`
	MailboxName     string    `db:"mailbox_name"`
	Provider        *string   `db:"provider"`
	DestinationType string    `db:"destination_type"`
	Cell            *string   `db:"cell"`
	IntegrationID   *int64    `db:"integration_id"`
	DateAdded       time.Time `db:"date_added"`
	ScheduleFor     time.Time `db:"schedule_for"`
	Attempts        int       `db:"attempts"`
	RequestMethod   string    `db:"request_method"`
	RequestPath     string    `db:"request_path"`
	RequestHeaders  string    `db:"request_headers"`
	RequestBody     string    `db:"request_body"`
	ObservedAt      time.Time `db:"observed_at"`
}

// MailboxPayloads reads mailbox's head and the payloads behind it, limit in all.
func MailboxPayloads(t Target, mailbox string, limit int) Statement {
	return sqlStatement("mailbox-payloads", []string{
		"The head of mailbox @mailbox in " + t.From() + " (its lowest id, which Sentry delivers first)",
		"and the payloads behind it. Their requests hold secrets (signatures, tokens): outboxctl redacts them.",
	}, t.tableIdent(), Args{"mailbox": {Value: mailbox}, "limit": {Value: limitOrDefault(limit)}})
}

// MailboxDepthOneRow is the one row of MailboxDepthOne.
type MailboxDepthOneRow struct {
	CountedDepth   int64  `db:"counted_depth"`
	DepthCapped    bool   `db:"depth_capped"`
	EstimatedDepth *int64 `db:"estimated_depth"`
}

// MailboxDepthOne counts mailbox's payloads up to countCap, with the planner's estimate of
// them from tableRows (the catalog's estimate of the table's rows).
func MailboxDepthOne(t Target, mailbox string, countCap int64, tableRows *int64) Statement {
	return sqlStatement("mailbox-depth-one", []string{
		"The depth of mailbox @mailbox in " + t.From() + ", counted up to @count_cap, and the planner's estimate.",
	}, t.tableIdent(), Args{"mailbox": {Value: mailbox}, "count_cap": {Value: countCap}, "table_name": {Value: t.From()}, "table_rows": tableRowsArg(tableRows)})
}

// MailboxDepthRow is a row of MailboxDepth and MailboxDepthEstimate.
type MailboxDepthRow struct {
	Provider    *string    `db:"provider" json:"provider"`
	Cell        *string    `db:"cell" json:"cell"`
	Depth       *int64     `db:"depth" json:"depth"`
	OldestAdded *time.Time `db:"oldest_added" json:"oldest_added"`
	Estimated   bool       `db:"estimated" json:"estimated"`
}

// MailboxDepth counts the payloads of t per provider and cell.
func MailboxDepth(t Target) Statement {
	return sqlStatement("mailbox-depth", []string{
		"Webhook payloads of " + t.From() + " per provider and cell, counted, with their mailboxes and oldest payload.",
	}, t.tableIdent(), nil)
}

// MailboxDepthEstimate is MailboxDepth from the planner's statistics alone, per provider.
func MailboxDepthEstimate(t Target, tableRows *int64) Statement {
	return sqlStatement("mailbox-depth-estimate", []string{
		"Estimated webhook payloads of " + t.From() + " per provider from the planner's statistics (no",
		"table read): as fresh as the last ANALYZE, no split by cell, only the most common providers.",
	}, nil, Args{"table_name": {Value: t.From()}, "table_rows": tableRowsArg(tableRows)})
}

// tableRowsArg is the catalog's estimate of the table's rows as a value (NULL: unknown,
// and in printed SQL, where it comes from mailbox-catalog's estimated_rows).
func tableRowsArg(rows *int64) Arg {
	if rows == nil {
		return Arg{Value: nil, Note: "mailbox-catalog's estimated_rows"}
	}
	return Arg{Value: *rows, Note: "mailbox-catalog's estimated_rows"}
}

// ThePast is Sentry's THE_PAST, the schedule_for of a new webhook payload (and the
// scheduled_for of a new outbox row).
var ThePast = time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // a constant time

// MailboxRescheduledRow is a row of MailboxReschedule's RETURNING.
type MailboxRescheduledRow struct {
	ID          int64  `db:"id"`
	MailboxName string `db:"mailbox_name"`
}

// MailboxReschedule makes every payload of mailboxes due now with a fresh backoff
// (schedule_for THE_PAST, attempts 0), as a new payload is written.
func MailboxReschedule(t Target, mailboxes []string, why Why) Statement {
	what := "mailbox @mailboxes"
	if len(mailboxes) != 1 {
		what = fmt.Sprintf("the %d mailboxes of @mailboxes", len(mailboxes))
	}
	return why.Mark(sqlStatement("mailbox-reschedule", []string{
		"Make the payloads of " + what + " in " + t.From() + " due now with a fresh backoff",
		"(schedule_for THE_PAST, attempts 0, as a new payload is written). Nothing is delivered or deleted.",
	}, t.tableIdent(), Args{"mailboxes": {Value: nonNil(mailboxes)}, "the_past": {Value: ThePast, Note: "Sentry's THE_PAST"}}))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MailboxCommonRow is a row of MailboxCommon.
type MailboxCommonRow struct {
	MailboxName    string `db:"mailbox_name"`
	EstimatedDepth int64  `db:"estimated_depth"`
}

// MailboxCommon lists the mailboxes the planner's statistics estimate at minDepth payloads
// or more, from tableRows (the catalog's estimate of the table's rows).
func MailboxCommon(t Target, tableRows *int64, minDepth int64) Statement {
	return sqlStatement("mailbox-common", []string{
		"The mailboxes of " + t.From() + " the planner's statistics estimate at @min_depth payloads or more",
		"(its most common mailbox names): no mailbox is counted.",
	}, nil, Args{"table_name": {Value: t.From()}, "table_rows": tableRowsArg(tableRows), "min_depth": {Value: minDepth}})
}

// MailboxHeadsSummaryRow is a row of MailboxHeadsSummary.
type MailboxHeadsSummaryRow struct {
	Provider              *string `db:"provider"`
	Cell                  *string `db:"cell"`
	Mailboxes             int64   `db:"mailboxes"`
	Blocked               int64   `db:"blocked"`
	OldestAgeSeconds      float64 `db:"oldest_age_seconds"`
	LongestBlockedSeconds float64 `db:"longest_blocked_seconds"`
}

// MailboxHeadsSummary sums the mailboxes' heads per provider and cell: how many, how many
// blocked (skip: the providers that skip failures), the oldest head's and the oldest blocked
// head's age.
func MailboxHeadsSummary(t Target, skip []string) Statement {
	st := sqlStatement("mailboxes", []string{
		"The mailboxes of " + t.From() + " per provider and cell (their head's): how many, how many blocked,",
		"the oldest head's age and the longest-blocked head's age (0 when none is blocked).",
	}, t.tableIdent(), Args{"skip_providers": {Value: nonNil(skip), Note: "providers that skip a failing payload"}})
	st.Name = "mailbox-heads-summary"
	return st
}

// MailboxHeadLock reads mailbox's head whole and locks it, while it is still headID (see
// sql/mailbox.sql): the rows are MailboxPayloadRow's, without observed_at.
func MailboxHeadLock(t Target, mailbox string, headID int64) Statement {
	return sqlStatement("mailbox-head-lock", []string{
		"Mailbox @mailbox's head in " + t.From() + ", locked, while it is still @head_id.",
	}, t.tableIdent(), Args{"mailbox": {Value: mailbox}, "head_id": {Value: headID}})
}

// MailboxRestoreRow reinserts an archived webhook payload as it was.
func MailboxRestoreRow(schema, table string, id int64, mailbox string, provider *string, destination string, cell *string, integration *int64,
	added, scheduleFor time.Time, attempts int, method, path, headers, body string) Statement {
	var integ any
	if integration != nil {
		integ = *integration
	}
	return sqlStatement("mailbox-restore-row", []string{"Reinsert an archived webhook payload as it was, request included; an id that exists is left alone."},
		map[string]string{"table": qualified(schema, table)}, Args{
			"id": {Value: id}, "mailbox": {Value: mailbox}, "provider": {Value: nilIfNil(provider)}, "destination_type": {Value: destination},
			"cell": {Value: nilIfNil(cell)}, "integration_id": {Value: integ}, "date_added": {Value: added}, "schedule_for": {Value: scheduleFor},
			"attempts": {Value: attempts}, "request_method": {Value: method}, "request_path": {Value: path},
			"request_headers": {Value: headers}, "request_body": {Value: body},
		})
}
