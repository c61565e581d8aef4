package repair

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Compact archives and deletes the superseded rows of one shard (every coalesce group's
// rows below its newest id): what a successful drain deletes without delivering.
type Compact struct {
	Env
	Target      query.Target
	Shard       query.ShardKey
	Reason      string
	Archive     string
	KeepBackoff bool
	User        string
}

type compactPlan struct {
	t                query.Target
	payloadType      string
	count, watermark int64
	before           drain.Head
	meta             drain.OperationMeta
}

func (c *Compact) why() query.Why { return query.Why{Command: "compact", Reason: c.Reason} }

// Script is the SELECT of what compact would archive and its DELETE commented out.
func (c *Compact) Script(preamble []string) ([]string, error) {
	text, err := PrintArchivingDelete(c.Target, preamble, func(why query.Why) query.Statement { return query.Superseded(c.Target, c.Shard, 0, why) }, c.why())
	return []string{text}, err
}

// Plan counts the superseded rows and reads the shard's head.
func (c *Compact) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	var d compactPlan
	var err error
	k := c.Shard
	if d.t, d.payloadType, err = c.Open(ctx, conn, c.Target); err != nil {
		return Plan{}, err
	}
	sup, err := drain.Superseded(ctx, conn, d.t, k)
	if err != nil {
		return Plan{}, err
	}
	d.count, d.watermark, d.meta = sup.Count, sup.Watermark, ArchiveMeta(d.t, k, d.payloadType, "compact", c.Reason, c.User)
	if d.before, err = drain.ShardHead(ctx, conn, d.t, k); err != nil {
		return Plan{}, err
	}
	if d.count == 0 {
		return Plan{Nothing: fmt.Sprintf("shard %s/%d has no superseded rows: nothing to compact", k.Scope.Name, k.ID)}, nil
	}
	// The archive's size and where it goes; one that would not fit is refused before
	// anything changed (#40: 650 MB written into the state directory, unannounced).
	size, err := drain.EstimateArchive(c.Archive, d.meta, d.count, sup.Sample)
	if err != nil {
		return Plan{}, err
	}
	if !size.Fits() {
		return Plan{}, &drain.NoRoomError{Size: size, Name: fmt.Sprintf("compact-%s-%d", k.Scope.ScopeWord(), k.ID)}
	}
	return Plan{Lines: []string{fmt.Sprintf("delete %d superseded row(s) of shard %s/%d (of %d), archived first; the newest row of every group stays (%s)",
		d.count, k.Scope.Name, k.ID, d.before.Depth, drain.ReasonText(c.Reason)), size.PlanLine(), BackoffPlan(c.KeepBackoff)}, detail: d}, nil
}

// Apply archives and deletes the rows below the plan's watermark, in one transaction.
func (c *Compact) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d, k := p.detail.(compactPlan), c.Shard
	t := d.t
	// One transaction, read and deleted a chunk at a time (drain.ArchiveChunk): the line
	// counts the rows the server has deleted (committed together at the end), with a rate
	// and an ETA.
	var progress Progress = noProgress{}
	if c.Progress != nil {
		progress = c.Progress(ctx, "compacted", d.count, true)
	}
	deleted, op, outcome, err := c.deleteArchived(ctx, conn, t, query.Superseded(t, k, d.watermark, c.why()), c.Archive, d.meta, progress.Set)
	progress.Set(deleted)
	progress.Done()
	if err != nil && outcome == "" {
		return Summary{}, err
	}
	if outcome != "" {
		var done func()
		conn, done = c.reconnect(ctx, conn, "compact") // the one the COMMIT went on is gone
		defer done()
	}
	var sum Summary
	sum.Audit = []Audit{{"compact", WithInDoubt(map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "deleted": auditCount(deleted, outcome), "archive": op.Path, "operation": op.Meta.ID, "reason": c.Reason}, outcome)}}
	card := drain.CompactSummary{Shard: ShardLabel(k), DepthBefore: d.before.Depth}
	card.Deleted, card.InDoubt = drain.Settled(deleted, outcome)
	state, steps, afterErr := c.removalState(ctx, conn, t, k, d.before, c.KeepBackoff, c.why(), op)
	card.StateAfter, card.Archive, card.Operation, card.NextSteps = state, op.Path, op.Meta.ID, steps
	card.ArchiveBytes = op.Bytes()
	sum.Doc = render.Doc{{Name: "compact", Card: render.FieldsOf(card)}}
	sum.Err = err
	if err == nil && afterErr != nil {
		sum.Err = unreadAfter("compact", fmt.Sprintf("%d row(s) deleted, archived in %s as operation %s", deleted, op.Path, op.Meta.ID), afterErr)
	}
	return sum, nil
}

// noProgress is no progress line.
type noProgress struct{}

func (noProgress) Set(int64) {}
func (noProgress) Done()     {}
