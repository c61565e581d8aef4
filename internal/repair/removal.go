package repair

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// What a repair's summary says after the change: the shard's new state, the next step and
// the undo, each a command line as Env.Next writes it.

// ShardLabel is the one form a message names a shard in: ORGANIZATION_SCOPE/42.
func ShardLabel(k query.ShardKey) string { return fmt.Sprintf("%s/%d", k.Scope.Name, k.ID) }

// BackoffPlan is the plan's line for what follows a deletion when it removes the head.
func BackoffPlan(keepBackoff bool) string {
	if keepBackoff {
		return "if the shard's head row is removed, keep the shard's backoff (--keep-backoff)"
	}
	return "if the shard's head row is removed, make the shard due now: its backoff was earned by that row (--keep-backoff keeps it)"
}

// headRemoved is what compact or skip does to shard k once its rows are deleted: when the
// head row (the one Sentry's backoff was earned by) is gone and rows remain, it makes the
// shard due now, unless keepBackoff. It returns the shard's state after, and the backoff's
// account for the summary.
func (e Env) headRemoved(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, before drain.Head, keepBackoff bool, why query.Why) (drain.Head, string, error) {
	after, err := drain.ShardHead(ctx, conn, t, k)
	if err != nil {
		return after, "unknown", err
	}
	switch {
	case after.Depth == 0:
		return after, "none: the shard is empty", nil
	case after.HeadID == before.HeadID:
		return after, "unchanged: the head row stayed", nil
	case keepBackoff:
		return after, "kept (--keep-backoff): the new head waits out the removed head's backoff", nil
	}
	err = db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		_, err := query.Exec(ctx, tx, query.Reschedule(t, k, 0, query.RescheduleAllRows, why))
		return db.Classify(err, "reschedule")
	})
	if err != nil {
		return after, "unknown", fmt.Errorf("the rows were deleted and archived, but making the shard due now failed (run %s): %w",
			e.Next(&t, "reschedule", k.Scope.ScopeWord(), fmt.Sprint(k.ID)), err)
	}
	after, err = drain.ShardHead(ctx, conn, t, k)
	return after, "cleared: the head row was removed, so the shard is due now (--keep-backoff keeps the backoff)", err
}

// stateAfter is a shard's state after a repair: depth, head, next attempt and backoff.
func stateAfter(after drain.Head, backoff string) drain.StateAfter {
	head := any(after.HeadID)
	if after.Depth == 0 {
		head = nil
	}
	return drain.StateAfter{DepthAfter: after.Depth, HeadAfter: head, NextAttemptAfter: report.Typed("next_attempt", after.Next), Backoff: backoff}
}

// nextSteps are a repair's next step and undo: inspect the shard (or the doctor, once it is
// empty), and restore FILE --operation ID when it archived rows.
func (e Env) nextSteps(t query.Target, k query.ShardKey, after drain.Head, op *drain.Operation) (render.Commands, string) {
	next := render.Commands{e.Next(&t, "inspect", "shard", k.Scope.ScopeWord(), fmt.Sprint(k.ID))}
	if after.Depth == 0 {
		next = render.Commands{e.Next(nil, "doctor", "--check", "stuck")}
	}
	if op == nil {
		return next, ""
	}
	return next, e.Next(nil, "restore", op.Path, "--operation", op.Meta.ID)
}

// removalState is a removal's shard after it (its backoff made due, or kept, when the head
// went), its next steps and undo.
func (e Env) removalState(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, before drain.Head, keepBackoff bool, why query.Why, op *drain.Operation) (drain.StateAfter, drain.NextSteps, error) {
	after, backoff, afterErr := e.headRemoved(ctx, conn, t, k, before, keepBackoff, why)
	state := drain.StateAfter{DepthAfter: "unknown", Backoff: backoff}
	if afterErr == nil {
		state = stateAfter(after, backoff)
	}
	var steps drain.NextSteps
	steps.Next, steps.Undo = e.nextSteps(t, k, after, op)
	return state, steps, afterErr
}

// unreadAfter is a repair that committed but whose shard could not be read after it.
func unreadAfter(command, done string, err error) error {
	return failuref("%s committed (%s), but the shard's state after it could not be read: %v",
		command, done, oneLine(db.RedactDSN(err.Error())))
}
