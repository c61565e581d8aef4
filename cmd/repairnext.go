package cmd

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// What a repair's summary says after the change: the shard's new state, the next step and
// the undo, each a command line as printed by d.next (nextcmd.go).

// shardLabel is the one form a message names a shard in: ORGANIZATION_SCOPE/42.
func shardLabel(k query.ShardKey) string { return fmt.Sprintf("%s/%d", k.Scope.Name, k.ID) }

// headRemoved is what compact or skip does to shard k once its rows are deleted: when the
// head row (the one Sentry's backoff was earned by) is gone and rows remain, it makes the
// shard due now, unless --keep-backoff. It returns the shard's state after, and the
// backoff's account for the summary.
func (d factory) headRemoved(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, before drain.Head, o repairOptions, command string) (drain.Head, string, error) {
	after, err := drain.ShardHead(ctx, conn, t, k)
	if err != nil {
		return after, "unknown", err
	}
	switch {
	case after.Depth == 0:
		return after, "none: the shard is empty", nil
	case after.HeadID == before.HeadID:
		return after, "unchanged: the head row stayed", nil
	case o.KeepBackoff:
		return after, "kept (--keep-backoff): the new head waits out the removed head's backoff", nil
	}
	err = db.WriteTx(ctx, conn, func(tx db.Tx) error {
		_, err := query.Exec(ctx, tx, query.Reschedule(t, k, 0, query.RescheduleAllRows, query.Why{Command: command, Reason: o.Reason}))
		return db.Classify(err, "reschedule")
	})
	if err != nil {
		return after, "unknown", fmt.Errorf("the rows were deleted and archived, but making the shard due now failed (run %s): %w",
			d.next(&t, "reschedule", k.Scope.ScopeWord(), fmt.Sprint(k.ID)), err)
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
func (d factory) nextSteps(t query.Target, k query.ShardKey, after drain.Head, op *drain.Operation) (render.Commands, string) {
	next := render.Commands{d.next(&t, "inspect", "shard", k.Scope.ScopeWord(), fmt.Sprint(k.ID))}
	if after.Depth == 0 {
		next = render.Commands{d.next(nil, "doctor", "--check", "stuck")}
	}
	if op == nil {
		return next, ""
	}
	return next, d.next(nil, "restore", op.Path, "--operation", op.Meta.ID)
}
