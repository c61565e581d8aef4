package repair

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// DrainBulk is drain SELECTORS --parallel N: every selected shard drained as Drain drains
// one, Workers at once, each on its own connection and handler (internal/drain.RunParallel);
// the runner's connection reads the plan. --handler discard archives each shard's rows in an
// operation of its own, every operation in one file (restore FILE --all --include-skipped
// puts them back).
type DrainBulk struct {
	Env
	DrainRun
	Target   query.Target
	Selector query.ShardSelector
	Workers  int
	FailFast bool
	// Where names the database written (the plan's target line); Notes is stderr under the
	// printer's lock: every worker's notes land whole.
	Where string
	Notes io.Writer

	first drain.Handler // checked (Preflight), never delivers: each worker makes its own
	reg   *enums.Registry
}

// bulkDrainPlan is what DrainBulk's Plan read for its Apply.
type bulkDrainPlan struct {
	t           query.Target
	plan        drain.BulkPlan
	payloadType string
}

// Hold parses the handler, once to check it (a discard has none), and reads the registry.
func (m *DrainBulk) Hold(context.Context) (func(), error) {
	end := func() {}
	if !m.Flags.discard() {
		h, err := m.handler()
		if err != nil {
			return nil, err
		}
		m.first, end = h, func() { closeHandler(h) }
	}
	var err error
	if m.reg, err = m.Registry(); err != nil {
		end()
		return nil, err
	}
	return end, nil
}

// Script is the statement that selects the shards (each shard's drain is drain SCOPE ID
// --print-sql's).
func (m *DrainBulk) Script([]string) ([]string, error) {
	text, err := query.Script{query.SelectedShards(m.Target, m.Selector, nil)}.Render()
	return []string{text}, err
}

// Plan reads the selected shards and their kill switches in one read-only snapshot.
func (m *DrainBulk) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	if err := guard(ctx, conn); err != nil {
		return Plan{}, err
	}
	d, unread, err := m.readPlan(ctx, conn)
	if err != nil {
		return Plan{}, err
	}
	if unread > 0 {
		m.Warnf("%d selected shard(s) are listed in the options table Sentry does not read here: they are not disabled, and are drained (killswitch list shows them)", unread)
	}
	p := Plan{Target: fmt.Sprintf("target: %s, %s", m.Where, d.t.Describe()), Lines: d.plan.Lines(), Shards: d.plan.Draining(), detail: d}
	switch {
	case d.plan.Draining() == 0:
		return Plan{Nothing: fmt.Sprintf("no selected shard to drain (%d selected, %d kill-switched): nothing was claimed", len(d.plan.Jobs), d.plan.Skipped)}, nil
	case m.Flags.DryRun:
		p.Stop = func(ctx context.Context) error {
			if m.Flags.discard() {
				return nil
			}
			return dryRunPreflight(ctx, m.Notef, m.first)
		}
	}
	return p, nil
}

// readPlan reads the plan in one snapshot; unread counts the selected shards listed in an
// options table Sentry does not read here.
func (m *DrainBulk) readPlan(ctx context.Context, conn *db.Conn) (d bulkDrainPlan, unread int, err error) {
	req := drain.BulkRequest{Request: m.Flags.request(), Selector: m.Selector, Workers: m.Workers, FailFast: m.FailFast, IgnoreKillswitch: m.Flags.IgnoreKillswitch}
	err = outbox.On(ctx, conn, m.Target, m.snapshotOptions(), func(s *outbox.Snapshot) error {
		d.t = s.Target
		d.payloadType = s.Schema.Table(s.Target.TableName()).PayloadType
		sw, err := killswitch.ReadSwitches(s.Context(), s.Tx(), s.Target, s.Schema)
		if err != nil {
			return db.Classify(err, "reading the kill switches")
		}
		disabled := func(k query.ShardKey) bool {
			v := sw.Verdict(k.Scope, k.ID)
			if v.Warning != "" {
				unread++
			}
			return v.Disabled != nil && *v.Disabled
		}
		if req.Selector.NotKillswitched { // left out of the selection, not listed as skipped
			req.Selector.Excluded = sw.Read.Refs()
		}
		d.plan, err = drain.ReadBulkPlan(s.Context(), s.Tx(), s.Target, req, disabled, m.reg.ScopeName, m.reg.CategoryName)
		return err
	})
	return d, unread, err
}

// Apply checks the handler, drains the planned shards Workers at a time, and summarises a
// row per shard. The plan's connection is closed first (the runner's Close after it does
// nothing, pgx's Close of a closed connection): the workers open their own, and an idle
// one held for the length of the run would take one more of max_connections, which
// Sentry's own processes share (drain's help counts them).
func (m *DrainBulk) Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error) {
	d, f := p.detail.(bulkDrainPlan), m.Flags
	_ = conn.Close(context.WithoutCancel(ctx))
	if _, err := preflight(ctx, m.first, "; nothing was claimed or changed"); err != nil {
		return Summary{}, err
	}
	var archive *bulkDrainArchive
	var newHandler func() (drain.Handler, error)
	if f.discard() {
		m.SettleArchive(ctx, nil, f.Archive, d.t)
		var err error
		if archive, err = m.newArchive(d.t, d.payloadType); err != nil {
			return Summary{}, err
		}
	} else {
		newHandler = m.handler
	}
	progress := m.progress(ctx, map[bool]string{false: "delivered", true: "discarded"}[f.discard()], d.plan.Groups)
	res, err := drain.RunParallel(ctx, drain.ParallelOptions{
		Base: m.options(d.t, m.reg, m.Notes, m.Warnf), Jobs: d.plan.Jobs, Workers: m.Workers, FailFast: m.FailFast, Follow: f.Follow,
		Connect:    func(ctx context.Context) (*db.Conn, error) { return m.Connect(ctx, "drain") },
		NewHandler: newHandler, OnDelivered: func(query.ShardKey, drain.Message) { progress.add() }, OpenArchive: archive.opener(),
	})
	progress.Done()
	if err != nil {
		return Summary{}, err
	}
	return m.summary(ctx, d.plan, res, archive), nil
}

// bulkDrainArchive is the one file a parallel discard archives to: an operation per shard.
type bulkDrainArchive struct {
	m           *DrainBulk
	t           query.Target
	path        string
	payloadType string
}

// newArchive names the run's archive file (--archive, else one under the user's state
// directory named after the run) and says where it is.
func (m *DrainBulk) newArchive(t query.Target, payloadType string) (*bulkDrainArchive, error) {
	path := m.Flags.Archive
	if path == "" {
		var err error
		if path, err = drain.OperationArchivePath(drain.NewOperationID(drain.CommandDrainDiscard, m.Now())); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(m.Notes, "archiving to %s (an operation per shard)\n", render.Escape(path))
	return &bulkDrainArchive{m: m, t: t, path: path, payloadType: payloadType}, nil
}

// opener opens a shard's operation (called from its worker, once the shard is claimed); nil
// without an archive (nothing is discarded).
func (a *bulkDrainArchive) opener() func(query.ShardKey) (*drain.Operation, error) {
	if a == nil {
		return nil
	}
	return func(k query.ShardKey) (*drain.Operation, error) {
		return drain.OpenArchive(a.path, ArchiveMeta(a.t, k, a.payloadType, drain.CommandDrainDiscard, a.m.Flags.Reason, a.m.User), a.m.Now())
	}
}

// summary is a row per shard and the totals, the audit line, and how the run ended:
// interrupted (130), some shards failed (partial, 6), all failed (1).
func (m *DrainBulk) summary(ctx context.Context, plan drain.BulkPlan, res drain.ParallelResult, archive *bulkDrainArchive) Summary {
	f := m.Flags
	doc, tot := parallelDrainDoc(plan, res, archive)
	fields := map[string]any{"selector": m.Selector.Describe(), "shards": plan.Draining(), "parallel": m.Workers, "mode": f.Mode, "handler": drain.HandlerName(f.Handler),
		"done": tot.done, "failed": tot.failed, "being_drained": tot.locked, "kill_switched": plan.Skipped, "not_started": tot.notStarted,
		"delivered": tot.delivered, "discarded": tot.discarded, "deleted": tot.deleted, "reason": f.Reason}
	if archive != nil {
		fields["archive"], fields["operations"] = archive.path, tot.operations
	}
	sum := Summary{Doc: doc, Audit: []Audit{{"drain", fields}}}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		sum.Err = interruptedf("interrupted: %d shard(s) drained, %d stopped mid-drain, %d not started, %d row(s) left in them; run the same command again to continue",
			tot.done, tot.interrupted, tot.notStarted, tot.left)
	case tot.failed > 0 && tot.done+tot.empty == 0:
		sum.Err = failuref("every drained shard failed (%d; the error column says why): %d message(s) delivered", tot.failed, tot.delivered)
	case tot.failed > 0:
		sum.Err = partialf("%d of %d shard(s) failed (the error column says why); %d drained, %d message(s) delivered",
			tot.failed, plan.Draining(), tot.done, tot.delivered)
	}
	return sum
}

// parallelTotals adds up a parallel drain's rows.
type parallelTotals struct {
	done, empty, failed, locked, interrupted, notStarted int
	delivered, discarded, operations                     int
	deleted, left                                        int64
}

// parallelDrainDoc is the parallel drain's document, shaped as the bulk repairs' (summary,
// then a row per shard: scope, shard, outcome, delivered, deleted, left, error). A shard
// whose turn never came is left with the rows the plan counted.
func parallelDrainDoc(plan drain.BulkPlan, res drain.ParallelResult, archive *bulkDrainArchive) (render.Doc, parallelTotals) {
	var tot parallelTotals
	rows := make([]drain.ParallelShardRow, 0, len(res.Shards))
	for i, sh := range res.Shards {
		var left *int64
		var errText *string
		switch {
		case sh.Left != nil:
			left = sh.Left
			tot.left += *sh.Left
		case sh.Status == drain.StatusNotStarted:
			left = &plan.Shards[i].Depth
			tot.left += plan.Shards[i].Depth
		}
		if sh.Err != nil {
			e := oneLine(db.RedactDSN(sh.Err.Error()))
			errText = &e
		}
		tot.count(sh.Status)
		delivered, discarded := sh.Result.Delivered, 0
		if archive != nil { // nothing reached a handler: each group's rows were archived and deleted
			delivered, discarded = 0, sh.Result.Delivered
		}
		tot.delivered += delivered
		tot.discarded += discarded
		tot.deleted += sh.Result.Deleted
		var op *string
		if sh.Operation != "" {
			op = &sh.Operation
			tot.operations++
		}
		rows = append(rows, drain.ParallelShardRow{Scope: sh.Shard.Scope.Value, ScopeName: sh.Shard.Scope.Name, ID: sh.Shard.ID, Outcome: string(sh.Status),
			Delivered: delivered, Discarded: discarded, Deleted: sh.Result.Deleted, Left: left, Error: errText, Operation: op})
	}
	card := drain.ParallelCard{Selected: len(res.Shards), Done: tot.done, Empty: tot.empty, Failed: tot.failed, BeingDrained: tot.locked,
		KillSwitched: plan.Skipped, Interrupted: tot.interrupted, NotStarted: tot.notStarted, Delivered: tot.delivered, Discarded: tot.discarded, Deleted: tot.deleted, Left: tot.left}
	if archive != nil && tot.operations > 0 {
		card.Archive, card.Operations = archive.path, tot.operations
		// restore counts a discard with the skips (poison messages): --all alone leaves it out.
		card.Restore = archive.m.Next(&archive.t, "restore", archive.path, "--all", "--include-skipped")
	}
	return render.Doc{{Name: "summary", Title: "Drain summary", Card: render.FieldsOf(card)}, {Name: "shards", Title: "Shards", Table: render.TableOf(rows)}}, tot
}

// count adds a shard's outcome to the totals.
func (tot *parallelTotals) count(s drain.Status) {
	switch s {
	case drain.StatusDone:
		tot.done++
	case drain.StatusEmpty:
		tot.empty++
	case drain.StatusFailed:
		tot.failed++
	case drain.StatusBeingDrained:
		tot.locked++
	case drain.StatusInterrupted, drain.StatusStopped:
		tot.interrupted++
	case drain.StatusNotStarted:
		tot.notStarted++
	}
}
