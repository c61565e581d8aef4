package drain

import (
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// A skipped webhook payload (skip --mailbox NAME --head; hybridcloud_webhookpayload,
// docs/mailboxes.md) is archived as one operation of the same format: its Row carries the
// payload's columns in Webhook (the outbox columns are left zero), and its shard is the
// mailbox: scope MailboxScope, id 0, the mailbox's name where a control shard has its cell.
// The row holds the request as received, secrets included, as the table did: the archive
// file is the user's alone (0600), and restore prints no SQL for it.

// MailboxScope is the shard scope of a mailbox operation: no outbox scope is negative.
const MailboxScope = -1

// WebhookPayload is a webhook payload's columns, as archived.
type WebhookPayload struct {
	Mailbox        string    `json:"mailbox_name"`
	Provider       *string   `json:"provider"`
	Destination    string    `json:"destination_type"`
	Cell           *string   `json:"region_name"`
	IntegrationID  *int64    `json:"integration_id"`
	DateAdded      time.Time `json:"date_added"`
	ScheduleFor    time.Time `json:"schedule_for"`
	Attempts       int       `json:"attempts"`
	RequestMethod  string    `json:"request_method"`
	RequestPath    string    `json:"request_path"`
	RequestHeaders string    `json:"request_headers"`
	RequestBody    string    `json:"request_body"`
}

// MailboxShard is the archive shard of mailbox name.
func MailboxShard(name string) *ArchiveShard {
	return &ArchiveShard{Scope: MailboxScope, ID: 0, Cell: &name}
}

// WebhookRow is the archive row of webhook payload id.
func WebhookRow(id int64, p WebhookPayload) Row {
	name := p.Mailbox
	return Row{ID: id, ShardScope: MailboxScope, Cell: &name, DateAdded: p.DateAdded, ScheduledFor: p.ScheduleFor, Webhook: &p}
}

// webhookRestore is the INSERT that puts an archived webhook payload back.
func webhookRestore(d Destination, r Row) query.Statement {
	p := r.Webhook
	return query.MailboxRestoreRow(d.Schema, d.Table, r.ID, p.Mailbox, p.Provider, p.Destination, p.Cell, p.IntegrationID,
		p.DateAdded, p.ScheduleFor, p.Attempts, p.RequestMethod, p.RequestPath, p.RequestHeaders, p.RequestBody)
}
