package cmd

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
)

// A COMMIT that got no answer (db.InDoubtError) is in doubt, never "not done": the repair
// settles it on a fresh connection (internal/drain's Settle functions read whether its
// change is there), reports what it found, and exits 1 either way: a server or a network
// that swallowed an answer is a failure the operator must see, even when the work turned
// out done (docs/exit-codes.md).

// settle settles a repair's COMMIT in doubt (doubt, the InDoubtError) with fn on a fresh
// connection, within that connection's timeouts; n is the count the statement reported
// before the COMMIT ("3 row(s) deleted"). The error says what the settle found.
func (d factory) settle(ctx context.Context, command string, doubt error, n int64, what string, fn func(*db.Conn) (drain.Settlement, error)) (drain.Settlement, error) {
	ctx = context.WithoutCancel(ctx)
	outcome := drain.Unsettled
	conn, err := d.connect(ctx, command)
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

// reconnect replaces conn, whose COMMIT got no answer (it is closed or stalled), with a
// fresh connection for the reads after the repair; conn itself when none can be had (the
// reads then fail, and say so).
func (d factory) reconnect(ctx context.Context, conn *db.Conn, command string) *db.Conn {
	fresh, err := d.connect(context.WithoutCancel(ctx), command)
	if err != nil {
		return conn
	}
	conn.Close(context.WithoutCancel(ctx))
	return fresh
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

// withInDoubt records in an audit line's fields what the settle of a COMMIT in doubt found
// (in_doubt: "committed", "not committed", "in doubt"); nothing when there was none.
func withInDoubt(fields map[string]any, outcome drain.Settlement) map[string]any {
	if outcome != "" {
		fields["in_doubt"] = string(outcome)
	}
	return fields
}
