package repair

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// snapshot opens a read-only snapshot on conn, reads the catalog of t and the tables every
// read looks up (--deployment applied), checks t is an outbox table, and calls fn with t
// adapted to its cell column: a repair plans on the connection it then writes with.
func (e Env) snapshot(ctx context.Context, conn *db.Conn, t query.Target, fn func(tx pgx.Tx, t query.Target, sch query.Schema) error) error {
	return db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		sch, err := query.LoadSchema(ctx, tx, t.Schema, introspected(t))
		if err != nil {
			return db.Classify(err, "introspect")
		}
		sch = sch.WithDeployment(e.Deployment)
		t = sch.Adapt(t)
		if err := sch.CheckOutbox(t); err != nil {
			return err
		}
		return fn(tx, t, sch)
	})
}

// introspected lists the tables a repair's snapshot looks up.
func introspected(t query.Target) []string {
	names := []string{t.TableName()}
	for _, n := range []string{query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable} {
		if n != t.TableName() {
			names = append(names, n)
		}
	}
	return names
}

// run executes one statement in tx.
func run(ctx context.Context, tx pgx.Tx, st query.Statement) (*query.Result, error) {
	res, err := query.Run(ctx, tx, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	return res, nil
}

// Open reads what a repair of t needs before its plan: t adapted to its cell column, and
// the table's payload type (the archive records it).
func (e Env) Open(ctx context.Context, conn *db.Conn, t query.Target) (query.Target, string, error) {
	var payloadType string
	err := e.snapshot(ctx, conn, t, func(_ pgx.Tx, at query.Target, sch query.Schema) error {
		t, payloadType = at, sch.Table(at.TableName()).PayloadType
		return nil
	})
	return t, payloadType, err
}
