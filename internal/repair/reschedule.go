package repair

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Reschedule makes one shard due now with a fresh backoff: every row (or with group heads,
// each coalesce group's lowest) gets the schedule of a fresh row. Nothing is deleted.
type Reschedule struct {
	Env
	Target query.Target
	Shard  query.ShardKey
	Mode   query.RescheduleMode
	Reason string
}

type reschedulePlan struct {
	t     query.Target
	depth int64
	next  any
}

func (r *Reschedule) why() query.Why { return query.Why{Command: "reschedule", Reason: r.Reason} }

// Script is the UPDATE, in its transaction.
func (r *Reschedule) Script(preamble []string) ([]string, error) {
	text, err := query.InTransaction(preamble, query.Script{query.Reschedule(r.Target, r.Shard, 0, r.Mode, r.why())}).Render()
	return []string{text}, err
}

// Plan reads the shard's depth and next attempt (with group heads, its coalesce groups).
func (r *Reschedule) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	var d reschedulePlan
	var err error
	k := r.Shard
	if d.t, _, err = r.Open(ctx, conn, r.Target); err != nil {
		return Plan{}, err
	}
	if d.depth, d.next, err = drain.ShardState(ctx, conn, d.t, k); err != nil {
		return Plan{}, err
	}
	if d.depth == 0 {
		return Plan{Nothing: fmt.Sprintf("shard %s/%d is empty: nothing to reschedule", k.Scope.Name, k.ID)}, nil
	}
	rows := fmt.Sprintf("%d row(s)", d.depth)
	if r.Mode == query.RescheduleGroupHeads {
		groups, err := drain.ShardGroups(ctx, conn, d.t, k)
		if err != nil {
			return Plan{}, err
		}
		rows = fmt.Sprintf("group heads only (--group-heads): %d of its %d row(s) change, the lowest of each of its %d coalesce group(s)", groups, d.depth, groups)
	}
	return Plan{Lines: []string{fmt.Sprintf("make shard %s/%d due now with a fresh backoff: %s, next attempt currently: %s (%s)",
		k.Scope.Name, k.ID, rows, r.schedule(d.next), drain.ReasonText(r.Reason))}, detail: d}, nil
}

// schedule is a shard's next attempt as the plan line shows it, in the one time format.
func (r *Reschedule) schedule(v any) string {
	t, ok := v.(time.Time)
	if !ok || r.Time == nil {
		return "unknown"
	}
	return r.Time(t)
}

// Apply rewrites the schedule in one transaction, settling a COMMIT in doubt, and records
// the shard made due in the ledger.
func (r *Reschedule) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d, k := p.detail.(reschedulePlan), r.Shard
	t := d.t
	var n int64
	err := db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		var err error
		n, err = query.Exec(ctx, tx, query.Reschedule(t, k, 0, r.Mode, r.why()))
		return db.Classify(err, "reschedule")
	})
	var outcome drain.Settlement
	if db.IsInDoubt(err) {
		outcome, err = r.settle(ctx, "reschedule", err, n, "row(s) rescheduled", func(c *db.Conn) (drain.Settlement, error) {
			return drain.SettleRescheduled(ctx, c, t, k, 0, r.Mode)
		})
		var done func()
		conn, done = r.reconnect(ctx, conn, "reschedule") // the one the COMMIT went on is gone
		defer done()
	}
	if err != nil && outcome == "" {
		return Summary{}, err
	}
	if err == nil && outcome == "" {
		r.RecordMadeDue(ctx, conn, t, ledger.ViaReschedule, "", []query.ShardRef{{Scope: k.Scope.Value, ID: k.ID}})
	}
	_, after, afterErr := drain.ShardState(ctx, conn, t, k)
	n = settledCount(n, outcome)
	sum := Summary{Audit: []Audit{{"reschedule", WithInDoubt(map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "rows": auditCount(n, outcome), "mode": string(r.Mode), "reason": r.Reason}, outcome)}}}
	// JSON keeps the time (Sentry's THE_PAST); a person reads what it means.
	card := drain.RescheduleSummary{Shard: ShardLabel(k), Mode: string(r.Mode), NextAttemptBefore: report.Typed("next_attempt", d.next),
		NextAttemptAfter: report.Typed("next_attempt", after), NextAttempt: render.Styled{Text: "due now", Tone: render.ToneGood}}
	card.Rows, card.InDoubt = drain.Settled(n, outcome)
	if afterErr != nil {
		card.NextAttemptAfter, card.NextAttempt = "unknown", "unknown"
	}
	card.Next, _ = r.nextSteps(t, k, drain.Head{Depth: d.depth}, nil)
	sum.Doc = render.Doc{{Name: "reschedule", Card: render.FieldsOf(card)}}
	sum.Err = err
	if err == nil && afterErr != nil {
		sum.Err = unreadAfter("reschedule", fmt.Sprintf("%d row(s) rescheduled", n), afterErr)
	}
	return sum, nil
}
