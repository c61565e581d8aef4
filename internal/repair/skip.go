package repair

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Skip archives and deletes, undelivered, the coalesce group of each message (skip
// MESSAGE_ID...): one plan naming every group, then each group its own archive operation,
// all in one archive file. One message is the same run, said as one.
type Skip struct {
	Env
	Target      query.Target
	IDs         []int64
	Reason      string
	Archive     string // --archive ("" one of the run's own)
	KeepBackoff bool
	Registry    func() (*enums.Registry, error)
	reg         *enums.Registry
	User        string // who runs it, for the archive
}

// skipPlan is what Skip's plan read for its run.
type skipPlan struct {
	targets     []drain.SkipTarget
	payloadType string
	archive     string
}

func (s *Skip) why() query.Why { return query.Why{Command: "skip", Reason: s.Reason} }

// Script is each message's SELECT of what would be archived and its DELETE commented out.
func (s *Skip) Script(preamble []string) ([]string, error) {
	out := make([]string, 0, len(s.IDs))
	for _, id := range s.IDs {
		text, err := PrintArchivingDelete(s.Target, preamble, func(w query.Why) query.Statement { return query.SkipGroupRows(s.Target, id, 0, w) }, s.why())
		if err != nil {
			return nil, err
		}
		out = append(out, text)
	}
	return out, nil
}

// Plan reads each message's group (bounded to what its shard's last attempt could have
// sent) and names them all.
func (s *Skip) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	d := skipPlan{archive: s.Archive}
	var lines []string
	var err error
	if s.reg, err = s.Registry(); err != nil {
		return Plan{}, err
	}
	for _, id := range s.IDs {
		sk, pt, err := s.lookup(ctx, conn, id)
		if err != nil {
			return Plan{}, err
		}
		left, err := s.boundToTried(ctx, conn, &sk, id)
		if err != nil {
			return Plan{}, err
		}
		d.payloadType = pt
		d.targets = append(d.targets, sk)
		k, cat := sk.Shard, s.reg.CategoryName(sk.Category)
		if len(s.IDs) == 1 {
			lines = append(lines, fmt.Sprintf("skip message %d: archive and delete its coalesce group (%s, object %d): %d row(s) up to id %d, undelivered, in shard %s/%d%s (%s)",
				id, cat, sk.Object, sk.Rows, sk.Newest, k.Scope.Name, k.ID, left, drain.ReasonText(s.Reason)))
		} else {
			lines = append(lines, fmt.Sprintf("message %d: group (%s, object %d) of shard %s/%d, %d row(s) up to id %d%s",
				id, cat, sk.Object, k.Scope.Name, k.ID, sk.Rows, sk.Newest, left))
		}
	}
	if len(s.IDs) > 1 {
		lines = append([]string{fmt.Sprintf("skip %d message(s): archive and delete each one's coalesce group up to its newest row, undelivered (%s)", len(s.IDs), drain.ReasonText(s.Reason))}, lines...)
		if d.archive == "" {
			// Several operations, one file: the run's own.
			if d.archive, err = drain.OperationArchivePath(drain.NewOperationID("skip", s.Now())); err != nil {
				return Plan{}, err
			}
		}
	}
	return Plan{Lines: append(lines, BackoffPlan(s.KeepBackoff)), Shards: len(s.IDs), detail: d}, nil
}

// lookup reads the message and its group in one read-only snapshot on conn.
func (s *Skip) lookup(ctx context.Context, conn *db.Conn, id int64) (drain.SkipTarget, string, error) {
	var t query.Target
	var payloadType string
	var msg *query.Result
	err := s.snapshot(ctx, conn, s.Target, func(tx pgx.Tx, st query.Target, sch query.Schema) error {
		var err error
		t, payloadType = st, sch.Table(st.TableName()).PayloadType
		msg, err = run(ctx, tx, query.Message(t, id))
		return err
	})
	if err != nil {
		return drain.SkipTarget{}, "", err
	}
	sk, found, err := drain.SkipTargetOf(t, msg, s.reg)
	if err == nil && !found {
		err = failuref("no outbox row with id %d in %s", id, t.Describe())
	}
	return sk, payloadType, err
}

// boundToTried stops a head message's skip at the newest row of its group that the shard's
// last attempt could have sent (written by then): that payload failed; a row written since
// has not been tried, and stays for Sentry to deliver (a doctor finding names heads that
// failed, and the group may have grown between it and this skip). It says what stays.
func (s *Skip) boundToTried(ctx context.Context, conn *db.Conn, sk *drain.SkipTarget, id int64) (string, error) {
	if !sk.Backoff {
		return "", nil
	}
	var b []query.TriedBoundRow
	err := s.snapshot(ctx, conn, s.Target, func(tx pgx.Tx, _ query.Target, _ query.Schema) error {
		res, err := run(ctx, tx, query.SkipTriedBound(sk.Target, id))
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

// Apply archives and deletes each planned group, as its own archive operation. A message
// whose group fails is reported and the others go on (one message: its error is the run's).
func (s *Skip) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d := p.detail.(skipPlan)
	var sum Summary
	var skipped []ledger.Record
	var firstErr error
	one := len(s.IDs) == 1
	for i, id := range s.IDs {
		sk := d.targets[i]
		t, k := sk.Target, sk.Shard
		before, err := drain.ShardHead(ctx, conn, t, k)
		if err != nil {
			return sum, err
		}
		deleted, op, outcome, err := s.deleteArchived(ctx, conn, t, query.SkipGroupRows(t, id, sk.Newest, s.why()), d.archive, ArchiveMeta(t, k, d.payloadType, "skip", s.Reason, s.User), nil)
		if err != nil && outcome == "" {
			if one {
				return sum, err
			}
			if firstErr == nil {
				firstErr = err
			}
			s.Warnf("message %d: %v", id, err)
			continue
		}
		sum.Audit = append(sum.Audit, Audit{"skip", WithInDoubt(map[string]any{"message": id, "shard_scope": k.Scope.Name, "shard": k.ID, "deleted": auditCount(deleted, outcome), "archive": op.Path, "operation": op.Meta.ID, "reason": s.Reason}, outcome)})
		if outcome != "" {
			var done func()
			conn, done = s.reconnect(ctx, conn, "skip") // the one the COMMIT went on is gone
			defer done()
		}
		rec := ledger.Record{Scope: k.Scope.Value, Shard: k.ID, HeadID: id, HeadCategory: sk.Category, GroupNewestID: sk.Newest}
		if one {
			// The group's newest row is gone without a delivery: doctor must not count it as one.
			s.RecordSkipped(ctx, conn, t, op.Meta.ID, []ledger.Record{rec})
		}
		skipped = append(skipped, rec)
		card := drain.SkipSummary{Message: id, Shard: ShardLabel(k)}
		card.Deleted, card.InDoubt = drain.Settled(deleted, outcome)
		state, steps, afterErr := s.removalState(ctx, conn, t, k, before, s.KeepBackoff, s.why(), op)
		card.StateAfter, card.Archive, card.Operation, card.NextSteps = state, op.Path, op.Meta.ID, steps
		name := "skip"
		if !one {
			name = fmt.Sprintf("skip %d", id)
			if i == len(s.IDs)-1 {
				// The path closes: doctor tells whether the shards deliver now.
				card.Next = append(card.Next, s.Next(nil, "doctor"))
			}
		} else if err == nil && afterErr != nil {
			afterErr = unreadAfter("skip", fmt.Sprintf("%d row(s) deleted, archived in %s as operation %s", deleted, op.Path, op.Meta.ID), afterErr)
		}
		sum.Doc = append(sum.Doc, render.Section{Name: name, Card: render.FieldsOf(card)})
		if err == nil {
			err = afterErr
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if !one {
		s.RecordSkipped(ctx, conn, d.targets[0].Target, "", skipped)
	}
	sum.Err = firstErr
	return sum, nil
}
