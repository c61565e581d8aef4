package cmd

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// maxSkipMessages bounds skip MESSAGE_ID...: a longer list is a bulk repair's (--category
// with the selector flags), not a command line's.
const maxSkipMessages = 10000

// messageIDs parses skip's MESSAGE_IDs, refusing a repeat (one group, named twice, would
// read as two in the plan's count).
func messageIDs(args []string) ([]int64, error) {
	if len(args) > maxSkipMessages {
		return nil, usageErrorf("outboxctl skip --category C --shards-from FILE", "skip takes at most %d MESSAGE_IDs; for more, select the shards with the bulk form", maxSkipMessages)
	}
	seen := map[int64]bool{}
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		id, err := nonNegativeID("message id", a, "outboxctl skip 123456 123457")
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, usageErrorf("outboxctl skip 123456 123457", "message %d is named twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// skipManyPlan reads each message's group and builds the one plan that names them all.
func (d factory) skipManyPlan(ctx context.Context, conn *db.Conn, reg *enums.Registry, o skipOptions, ids []int64) ([]drain.SkipTarget, string, []string, error) {
	var targets []drain.SkipTarget
	var payloadType string
	plan := []string{fmt.Sprintf("skip %d message(s): archive and delete each one's coalesce group up to its newest row, undelivered (%s)", len(ids), reasonText(o.Reason))}
	for _, id := range ids {
		sk, pt, err := d.skipLookup(ctx, conn, reg, id)
		if err != nil {
			return nil, "", nil, err
		}
		left, err := d.boundToTried(ctx, conn, &sk, id)
		if err != nil {
			return nil, "", nil, err
		}
		payloadType = pt
		targets = append(targets, sk)
		plan = append(plan, fmt.Sprintf("message %d: group (%s, object %d) of shard %s/%d, %d row(s) up to id %d%s",
			id, reg.CategoryName(sk.Category), sk.Object, sk.Shard.Scope.Name, sk.Shard.ID, sk.Rows, sk.Newest, left))
	}
	return targets, payloadType, append(plan, backoffPlan(o.repairOptions)), nil
}

// boundToTried stops a head message's skip at the newest row of its group that the shard's
// last attempt could have sent (written by then): that payload failed; a row written since
// has not been tried, and stays for Sentry to deliver (a doctor finding names heads that
// failed, and the group may have grown between it and this skip). It says what stays.
func (d factory) boundToTried(ctx context.Context, conn *db.Conn, sk *drain.SkipTarget, id int64) (string, error) {
	if !sk.Backoff {
		return "", nil
	}
	var b []query.TriedBoundRow
	err := d.session(ctx, conn, func(s *session) error {
		res, err := s.run(query.SkipTriedBound(sk.Target, id))
		if err == nil {
			b, err = query.Rows[query.TriedBoundRow](res)
		}
		return err
	})
	if err != nil || len(b) != 1 {
		return "", err
	}
	if b[0].NewestTriedID == nil {
		// Written after the last attempt: not tried, but named by the operator. The whole
		// group goes, as for any message, and the plan says it never failed.
		return " (written after the shard's last attempt: it has never been tried)", nil
	}
	if *b[0].NewestTriedID >= sk.Newest {
		return "", nil
	}
	left := sk.Rows - b[0].TriedRows
	sk.Newest, sk.Rows = *b[0].NewestTriedID, b[0].TriedRows
	return fmt.Sprintf(" (the %d newer row(s) written after the shard's last attempt stay: Sentry delivers the newest of them next)", left), nil
}

// runSkipMany skips several messages' coalesce groups under one plan and one confirmation:
// what doctor prints for the poison heads it proved, so the plan's count is the finding's.
// Each group is its own archive operation, all in one file; each goes as runSkip's does.
func runSkipMany(ctx context.Context, d factory, o skipOptions, t query.Target, ids []int64) error {
	why := query.Why{Command: "skip", Reason: o.Reason}
	if d.printSQL {
		// Each message's script as skip MESSAGE_ID prints it, one after the other.
		for _, id := range ids {
			if err := d.printArchivingDelete(t, func(w query.Why) query.Statement { return query.SkipGroupRows(t, id, 0, w) }, why); err != nil {
				return err
			}
		}
		return nil
	}
	if err := d.requireDB("outboxctl skip"); err != nil {
		return err
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	conn, err := d.connect(ctx, "skip")
	if err != nil {
		return err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }() // reconnect may replace it
	targets, payloadType, plan, err := d.skipManyPlan(ctx, conn, reg, o, ids)
	if err != nil {
		return err
	}
	if o.Archive == "" {
		if o.Archive, err = drain.OperationArchivePath(drain.NewOperationID("skip", d.now())); err != nil {
			return err
		}
	}
	if err := d.confirmShards("outboxctl skip", plan, o.Yes, len(ids)); err != nil {
		return err
	}
	var doc render.Doc
	var skipped []ledger.Record
	var firstErr error
	for i, id := range ids {
		sk := targets[i]
		t, k := sk.Target, sk.Shard
		before, err := drain.ShardHead(ctx, conn, t, k)
		if err != nil {
			return err
		}
		deleted, op, outcome, err := d.deleteArchived(ctx, conn, t, query.SkipGroupRows(t, id, sk.Newest, why), o.repairOptions, archiveMeta(t, k, payloadType, "skip", o.Reason))
		if err != nil && outcome == "" {
			if firstErr == nil {
				firstErr = err
			}
			d.printer.Warnf("message %d: %v", id, err)
			continue
		}
		d.audit("skip", withInDoubt(map[string]any{"message": id, "shard_scope": k.Scope.Name, "shard": k.ID, "deleted": auditCount(deleted, outcome), "archive": op.Path, "operation": op.Meta.ID, "reason": o.Reason}, outcome))
		if outcome != "" {
			conn = d.reconnect(ctx, conn, "skip") // the one the COMMIT went on is gone
		}
		skipped = append(skipped, ledger.Record{Scope: k.Scope.Value, Shard: k.ID, HeadID: id, HeadCategory: sk.Category, GroupNewestID: sk.Newest})
		sum := drain.SkipSummary{Message: id, Shard: shardLabel(k)}
		sum.Deleted, sum.InDoubt = drain.Settled(deleted, outcome)
		state, steps, afterErr := d.removalState(ctx, conn, t, k, before, o.repairOptions, "skip", op)
		sum.StateAfter, sum.Archive, sum.Operation, sum.NextSteps = state, op.Path, op.Meta.ID, steps
		if i == len(ids)-1 {
			// The path closes: doctor tells whether the shards deliver now.
			sum.Next = append(sum.Next, d.next(nil, "doctor"))
		}
		doc = append(doc, render.Section{Name: fmt.Sprintf("skip %d", id), Card: render.FieldsOf(sum)})
		if err == nil {
			err = afterErr
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	d.recordSkipped(ctx, conn, targets[0].Target, "", skipped)
	if perr := d.printer.Print(doc); perr != nil {
		return perr
	}
	return firstErr
}
