package drain

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Destination is the table restore writes an operation's rows into.
type Destination struct {
	Schema, Table string
	// CellColumn and PayloadType are the table's, as introspected (or, for a printed script,
	// as the archive recorded them).
	CellColumn, PayloadType string
}

// Destination is where the operation's rows go: its recorded table, in schema when given.
func (o *ArchivedOperation) Destination(schema string) Destination {
	d := Destination{Schema: o.Schema, Table: o.Table, CellColumn: o.CellColumn, PayloadType: o.PayloadType}
	if schema != "" {
		d.Schema = schema
	}
	return d
}

// RestoreStatements are the INSERTs that put rows back, with their original ids, payloads
// and schedules, each marked with the command and reason; an id that exists is left alone.
func RestoreStatements(d Destination, rows []Row, reason string) query.Script {
	sc := make(query.Script, 0, len(rows))
	for _, r := range rows {
		if r.Webhook != nil {
			sc = append(sc, query.Why{Command: "restore", Reason: reason}.Mark(webhookRestore(d, r)))
			continue
		}
		st := query.RestoreRow(d.Schema, d.Table, d.CellColumn, d.PayloadType, r.ID, r.ShardScope, r.ShardID, r.Category, r.ObjectID,
			r.Cell, r.Payload, r.ScheduledFrom, r.ScheduledFor, r.DateAdded)
		sc = append(sc, query.Why{Command: "restore", Reason: reason}.Mark(st))
	}
	return sc
}

// Existing returns which of ids are in the destination table.
func Existing(ctx context.Context, tx pgx.Tx, d Destination, ids []int64) (map[int64]bool, error) {
	found := map[int64]bool{}
	if len(ids) == 0 {
		return found, nil
	}
	res, err := query.Run(ctx, tx, query.ExistingIDs(d.Schema, d.Table, ids))
	if err != nil {
		return nil, err
	}
	rows, err := query.Rows[existingRow](res)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		found[r.ID] = true
	}
	return found, nil
}

// existingRow is one row of query.ExistingIDs.
type existingRow struct {
	ID int64 `db:"id"`
}

// Reinsert runs the statements and counts the rows inserted (the rest existed already).
func Reinsert(ctx context.Context, tx pgx.Tx, sc query.Script) (inserted int64, err error) {
	for _, st := range sc {
		n, err := query.Exec(ctx, tx, st)
		if err != nil {
			return inserted, err
		}
		inserted += n
	}
	return inserted, nil
}
