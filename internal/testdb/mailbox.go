package testdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
)

// MailboxSchema is Schema with hybridcloud_webhookpayload added, built with index set ix.
func MailboxSchema(t testing.TB, o fixture.Options, ix fixture.MailboxIndexes) string {
	t.Helper()
	name := Schema(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fixture.CreateMailboxes(ctx, Pool(t), name, ix); err != nil {
		t.Fatalf("creating the mailbox table: %v", err)
	}
	return name
}

// Payload is one webhook payload to seed; zero values are what Sentry's
// WebhookPayload.create_from_request writes (schedule_for THE_PAST, no attempts, date_added
// now, destination sentry_region, GET /).
type Payload struct {
	Mailbox     string // provider:identifier
	Provider    string // "" : the part of Mailbox before its colon
	Destination string // "" : sentry_region
	Cell        *string
	Integration *int64
	DateAdded   time.Time
	ScheduleFor time.Time
	Attempts    int
	Method      string
	Path        string
	Headers     string // JSON text, as Sentry stores it ("" : {})
	Body        string
}

// InsertPayloads seeds webhook payloads into schema's hybridcloud_webhookpayload and returns
// their ids, in order.
func InsertPayloads(t testing.TB, schema string, rows ...Payload) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q := fmt.Sprintf(`INSERT INTO %s.hybridcloud_webhookpayload (mailbox_name, provider, destination_type, region_name,
		integration_id, date_added, schedule_for, attempts, request_method, request_path, request_headers, request_body)
		VALUES ($1, $2, $3, $4, $5, coalesce($6, now()), coalesce($7, '%s'::timestamptz), $8, $9, $10, $11, $12) RETURNING id`,
		pgx.Identifier{schema}.Sanitize(), fixture.ThePast)
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		provider := r.Provider
		if provider == "" {
			for i := range len(r.Mailbox) {
				if r.Mailbox[i] == ':' {
					provider = r.Mailbox[:i]
					break
				}
			}
		}
		dest := r.Destination
		if dest == "" {
			dest = "sentry_region"
		}
		method, path, headers := r.Method, r.Path, r.Headers
		if method == "" {
			method = "POST"
		}
		if path == "" {
			path = "/extensions/" + provider + "/webhook/"
		}
		if headers == "" {
			headers = "{}"
		}
		var id int64
		if err := Pool(t).QueryRow(ctx, q, r.Mailbox, provider, dest, r.Cell, r.Integration, nullTime(r.DateAdded), nullTime(r.ScheduleFor),
			r.Attempts, method, path, headers, r.Body).Scan(&id); err != nil {
			t.Fatalf("seeding hybridcloud_webhookpayload: %v", err)
		}
		ids = append(ids, id)
	}
	return ids
}
