package repair

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
)

// RecordMadeDue writes to the ledger (internal/ledger) the shards a reschedule or a kill
// switch's removal just handed to Sentry's workers, each with its head row and the head
// group's newest row, read after the write on the database's clock: the evidence doctor
// needs to tell an outage (the heads deliver now) from poison (the same head fails again
// while its category delivers elsewhere). A failure to record is a warning, never the
// command's: the repair is done, only the later diagnosis has less to go on.
func (e Env) RecordMadeDue(ctx context.Context, conn *db.Conn, t query.Target, via, op string, refs []query.ShardRef) {
	if len(refs) == 0 {
		return
	}
	err := e.appendLedger(ctx, conn, t, op, via, func(tx pgx.Tx, st query.Target) ([]ledger.Record, error) {
		cells, scopes, ids := make([]string, len(refs)), make([]int64, len(refs)), make([]int64, len(refs))
		for i, r := range refs {
			cells[i], scopes[i], ids[i] = t.Cell, int64(r.Scope), r.ID
		}
		res, err := run(ctx, tx, query.MadeDueHeads(st, cells, scopes, ids))
		if err != nil {
			return nil, err
		}
		heads, err := query.Rows[query.MadeDueRow](res)
		recs := make([]ledger.Record, len(heads))
		for i, h := range heads {
			recs[i] = ledger.Record{Scope: int(h.ShardScope), Shard: h.ShardIdentifier, HeadID: h.HeadID, HeadCategory: int(h.HeadCategory), GroupNewestID: h.GroupNewestID}
		}
		return recs, err
	})
	if err != nil {
		e.Warnf("could not record the shards made due in outboxctl's ledger (doctor will ask for a fresh attempt again before it can call a head poison): %v", err)
	}
}

// RecordSkipped writes to the ledger the coalesce groups a skip removed: their newest rows
// are gone without a delivery, which doctor must not count as one.
func (e Env) RecordSkipped(ctx context.Context, conn *db.Conn, t query.Target, op string, groups []ledger.Record) {
	if len(groups) == 0 {
		return
	}
	err := e.appendLedger(ctx, conn, t, op, ledger.ViaSkip, func(pgx.Tx, query.Target) ([]ledger.Record, error) { return groups, nil })
	if err != nil {
		e.Warnf("could not record the skipped groups in outboxctl's ledger: %v", err)
	}
}

// appendLedger appends the records read builds, in one read-only snapshot that also names
// the database and reads its clock (a record's time is the database's, as Sentry's
// schedules are), each stamped with where, when, op and via.
func (e Env) appendLedger(ctx context.Context, conn *db.Conn, t query.Target, op, via string, read func(pgx.Tx, query.Target) ([]ledger.Record, error)) error {
	var recs []ledger.Record
	err := e.snapshot(ctx, conn, t, func(tx pgx.Tx, st query.Target, _ query.Schema) error {
		var id query.IdentityRow
		res, err := run(ctx, tx, query.DatabaseIdentity())
		if err != nil {
			return err
		}
		if rows, err := query.Rows[query.IdentityRow](res); err != nil {
			return err
		} else if len(rows) == 1 {
			id = rows[0]
		}
		if recs, err = read(tx, st); err != nil {
			return err
		}
		w := ledger.Where{Database: id.Identity, Schema: e.Schema, Table: st.TableName(), Cell: t.Cell}
		for i := range recs {
			recs[i].Where, recs[i].At, recs[i].Operation, recs[i].Via = w, id.Now, op, via
		}
		return nil
	})
	if err != nil {
		return err
	}
	path, err := ledger.Path("")
	if err != nil {
		return err
	}
	return ledger.Append(path, recs, e.Now())
}
