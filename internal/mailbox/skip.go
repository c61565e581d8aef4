package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// SkipSummary is what skip --mailbox NAME --head archived and deleted.
type SkipSummary struct {
	Mailbox   string `json:"mailbox"`
	Deleted   int64  `json:"deleted"`
	HeadID    int64  `json:"head_id"`
	Archive   string `json:"archive"`
	Operation string `json:"operation"`
	// NewHead is the mailbox's head after (nil: the mailbox is empty).
	NewHead *int64          `json:"new_head"`
	Next    render.Commands `json:"next,omitempty"`
	Undo    string          `json:"undo"`
}

// ErrHeadMoved is a skip whose head is no longer the mailbox's head (delivered, or a payload
// of a lower id committed late) or is held by Sentry's drain: nothing was deleted.
var ErrHeadMoved = errors.New("the head is no longer the mailbox's head, or Sentry's drain holds it: nothing was deleted")

// SkipHead archives, then deletes, payload headID of mailbox name in t, while it is still the
// mailbox's head, as one archive operation (at archivePath, or its own file under the state
// directory when ""): staged and synced before the DELETE, marked committed after it.
func SkipHead(ctx context.Context, conn *db.Conn, t query.Target, name string, headID int64, archivePath, reason, user string,
	now time.Time, warnf func(string, ...any)) (int64, *drain.Operation, error) {
	meta := drain.OperationMeta{Command: "skip", Reason: reason, User: user, Schema: t.Schema, Table: query.MailboxTable,
		PayloadType: "webhook", Shard: drain.MailboxShard(name)}
	op, err := drain.OpenArchive(archivePath, meta, now)
	if err != nil {
		return 0, nil, err
	}
	defer op.Close()
	del := &drain.ArchivedDelete{Op: op, Target: t, Why: query.Why{Command: "skip", Reason: reason}, Warnf: warnf}
	var deleted []int64
	committing := false
	err = db.WriteTx(ctx, conn, func(tx db.Tx) error {
		st := query.MailboxHeadLock(t, name, headID)
		rows, err := query.All[mailboxLockedRow](ctx, tx, st)
		if err != nil {
			return db.Classify(err, st.Name)
		}
		if len(rows) != 1 {
			return ErrHeadMoved
		}
		r := rows[0]
		row := drain.WebhookRow(r.ID, drain.WebhookPayload{Mailbox: r.MailboxName, Provider: r.Provider, Destination: r.DestinationType,
			Cell: r.Cell, IntegrationID: r.IntegrationID, DateAdded: r.DateAdded, ScheduleFor: r.ScheduleFor, Attempts: r.Attempts,
			RequestMethod: r.RequestMethod, RequestPath: r.RequestPath, RequestHeaders: r.RequestHeaders, RequestBody: r.RequestBody})
		if deleted, err = del.StageAndDelete(ctx, tx, []drain.Row{row}); err != nil {
			return db.Classify(err, "delete-archived")
		}
		committing = true
		return nil
	})
	if err = del.Finish(err, committing); err != nil {
		if db.IsInDoubt(err) {
			return 0, op, fmt.Errorf("%w; whether the head was deleted is unknown: its row is staged in %s, and outboxctl restore %s --operation %s --include-uncommitted puts it back if it is gone",
				err, op.Path, op.Path, op.Meta.ID)
		}
		return 0, op, err
	}
	return int64(len(deleted)), op, nil
}

// mailboxLockedRow is a row of query.MailboxHeadLock.
type mailboxLockedRow struct {
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
}
