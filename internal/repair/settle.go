package repair

import (
	"context"
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// A COMMIT that got no answer (db.InDoubtError) is in doubt, never "not done": the repair
// settles it on a fresh connection (internal/drain's Settle functions read whether its
// change is there), reports what it found, and exits 1 either way: a server or a network
// that swallowed an answer is a failure the operator must see, even when the work turned
// out done (docs/exit-codes.md).

// settle settles a repair's COMMIT in doubt (doubt, the InDoubtError) with fn on a fresh
// connection, within that connection's timeouts; n is the count the statement reported
// before the COMMIT ("3 row(s) deleted"). The error says what the settle found.
func (e Env) settle(ctx context.Context, command string, doubt error, n int64, what string, fn func(*db.Conn) (drain.Settlement, error)) (drain.Settlement, error) {
	ctx = context.WithoutCancel(ctx)
	outcome := drain.Unsettled
	conn, err := e.Connect(ctx, command)
	if err == nil {
		outcome, err = fn(conn)
		conn.Close(ctx)
	}
	switch outcome {
	case drain.Committed:
		return outcome, failuref("%s", db.SettledMessage(doubt, fmt.Sprintf("committed, %d %s", n, what)))
	case drain.NotCommitted:
		return outcome, failuref("%s", db.SettledMessage(doubt, "not committed, nothing changed: run outboxctl "+command+" again"))
	}
	why := "no answer"
	if err != nil {
		why = oneLine(db.RedactDSN(err.Error()))
	}
	return outcome, failuref("%v; it could not be settled (%s)", doubt, why)
}

// reconnect is a fresh connection for the reads after a repair whose COMMIT got no answer
// on conn (closed or stalled), and its close; conn itself when none can be had (the reads
// then fail, and say so). The caller still closes conn.
func (e Env) reconnect(ctx context.Context, conn *db.Conn, command string) (*db.Conn, func()) {
	fresh, err := e.Connect(context.WithoutCancel(ctx), command)
	if err != nil {
		return conn, func() {}
	}
	return fresh, func() { fresh.Close(context.WithoutCancel(ctx)) }
}

// oneLine makes a message fit one line, its control characters escaped.
func oneLine(s string) string {
	return render.Escape(strings.Join(strings.Fields(s), " "))
}

// archiveInDoubt adds to a settled archived delete's error what its archive now says.
func archiveInDoubt(err error, outcome drain.Settlement, op *drain.Operation) error {
	switch outcome {
	case drain.Committed:
		return failuref("%v; archive %s marks them committed: outboxctl restore %s --operation %s puts them back", err, op.Path, op.Path, op.Meta.ID)
	case drain.NotCommitted:
		return failuref("%v; archive %s marks the batch rolled back", err, op.Path)
	}
	return failuref("%v; archive %s keeps the rows staged without a commit marker: outboxctl restore %s --operation %s reports them and checks the table (--include-uncommitted puts back the ones missing)",
		err, op.Path, op.Path, op.Meta.ID)
}

// settledCount is a repair's count once its COMMIT in doubt was settled: 0 when it did not
// commit.
func settledCount(n int64, outcome drain.Settlement) int64 {
	if outcome == drain.NotCommitted {
		return 0
	}
	return n
}

// auditCount is an audit line's count: "in doubt" while the COMMIT is, never a 0.
func auditCount(n int64, outcome drain.Settlement) any {
	if outcome == drain.Unsettled {
		return "in doubt"
	}
	return n
}

// WithInDoubt records in an audit line's fields what the settle of a COMMIT in doubt found
// (in_doubt: "committed", "not committed", "in doubt"); nothing when there was none.
func WithInDoubt(fields map[string]any, outcome drain.Settlement) map[string]any {
	if outcome != "" {
		fields["in_doubt"] = string(outcome)
	}
	return fields
}

// deleteArchived archives the rows st reads and deletes them, as one archive operation of
// its own (drain.ArchivedDelete: staged and synced before the DELETE, the commit marker
// written after the commit, naming the ids deleted), in the archive at path ("" one of its own).
//
// A COMMIT that got no answer is settled on a fresh connection (settle, ArchivedDelete's
// Settle, which marks the batch): the count is then what the settle found (0 when it did not
// commit), and outcome says what that was ("": the COMMIT was answered); the error says it too.
func (e Env) deleteArchived(ctx context.Context, conn *db.Conn, t query.Target, st query.Statement, path string, meta drain.OperationMeta, progress func(int64)) (int64, *drain.Operation, drain.Settlement, error) {
	e.SettleArchive(ctx, conn, path, t)
	op, err := drain.OpenArchive(path, meta, e.Now())
	if err != nil {
		return 0, nil, "", err
	}
	defer op.Close()
	del := &drain.ArchivedDelete{Op: op, Target: t, Why: query.Why{Command: meta.Command, Reason: meta.Reason}, Warnf: e.Warnf, Progress: progress}
	deleted, err := del.DeleteArchived(ctx, conn, st)
	if !db.IsInDoubt(err) {
		return deleted, op, "", err
	}
	outcome, err := e.settle(ctx, meta.Command, err, deleted, "row(s) deleted", func(c *db.Conn) (drain.Settlement, error) { return del.Settle(ctx, c) })
	return settledCount(deleted, outcome), op, outcome, archiveInDoubt(err, outcome, op)
}

// ArchiveMeta describes a repair's archive operation on shard k of t: restore refuses a row
// of the archive that is not in that shard (and cell, for the control outbox).
func ArchiveMeta(t query.Target, k query.ShardKey, payloadType, command, reason, user string) drain.OperationMeta {
	m := drain.OperationMeta{Command: command, Reason: reason, User: user, Schema: t.Schema, Table: t.TableName(), PayloadType: payloadType,
		Shard: &drain.ArchiveShard{Scope: k.Scope.Value, ID: k.ID}}
	if t.Control() {
		m.CellColumn = t.CellColumnName()
		cell := t.Cell
		m.Shard.Cell = &cell
	}
	return m
}

// SettleArchive marks, before a run appends to the archive at path (--archive, a resume's
// file), the batches it holds whose outcome it does not record (a run killed or out of disk
// between a DELETE and its marker), from what t's table holds of their ids
// (drain.SettleArchive), and says what it found. conn nil: a connection of its own. A settle
// that fails costs the run nothing: restore settles such batches itself.
func (e Env) SettleArchive(ctx context.Context, conn *db.Conn, path string, t query.Target) {
	if path == "" {
		return
	}
	if conn == nil {
		c, err := e.Connect(ctx, "settle-archive")
		if err != nil {
			e.Warnf("could not settle the archive %s's batches with no marker (%s): restore settles them against the table", render.Escape(path), oneLine(err.Error()))
			return
		}
		defer c.Close(context.WithoutCancel(ctx))
		conn = c
	}
	settled, err := drain.SettleArchive(ctx, conn, path, t)
	if err != nil {
		e.Warnf("could not settle the archive %s's batches with no marker (%s): restore settles them against the table", render.Escape(path), oneLine(err.Error()))
		return
	}
	var committed, rows, not int
	for _, s := range settled {
		if s.Outcome == drain.Committed {
			committed, rows = committed+1, rows+s.Rows
		} else {
			not++
		}
	}
	if len(settled) > 0 {
		e.Notef("%s: %d batch(es) of an earlier run had no marker, settled against the table and marked: %d committed (%d row(s) deleted and archived: restore puts them back), %d not committed (their rows are still in the table)",
			render.Escape(path), len(settled), committed, rows, not)
	}
}

// PrintArchivingDelete is the --print-sql of a repair that archives: the SELECT of what it
// would archive and its DELETE commented out (a psql script cannot write outboxctl's
// archive, and a printed script must not delete what nothing archived).
func PrintArchivingDelete(t query.Target, preamble []string, rows func(query.Why) query.Statement, why query.Why) (string, error) {
	return query.ArchivingDeleteScript(why.Command, preamble, rows(why), query.DeleteSelected(t, rows(query.Why{}), why))
}
