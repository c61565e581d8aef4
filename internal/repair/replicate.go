package repair

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// Replicate writes the outbox rows Sentry writes for objects (outboxctl replicate PAIR ID...
// or --from), so its workers replicate them again. Unlike the other repairs it opens its
// own connections (with two contexts the cell's and the control silo's: a pair's sources
// and outbox are its source silo's, its replicas the other's), and it reads the objects
// before it can print its INSERT: the runner opens it (Open), plans, then prints or
// confirms. Plan and Apply take no connection of the runner's.
type Replicate struct {
	Env
	// Connect opens the silos' connections (cmd's: the contexts are cobra's flags).
	Connect func(ctx context.Context) (ReplicateConns, error)
	Targets map[string][]int64 // pair -> ids
	Reason  string
	// Cell is --cell, which the next commands name.
	Cell string
	// DryRun and PrintSQL are the invocation's: a dry run with nothing to write says
	// nothing, and a printed script comes without the notes of objects it cannot write.
	DryRun, PrintSQL bool

	conns ReplicateConns
	work  []replicateWork
}

// ReplicateConns are the two silos' connections (the same one in a monolith).
type ReplicateConns struct {
	Cell, Control             *db.Conn
	CellSchema, ControlSchema string
	CellName                  string // the cell's name: a control model's rows' cell (--cell, the cell context's, the monolith's)
	Close                     func()
}

// split says the silos are two databases (two contexts).
func (c ReplicateConns) split() bool { return c.Cell != c.Control }

// of is where pair p is read and written: the source's connection, the replica's, and the
// two schemas.
func (c ReplicateConns) of(p replica.Pair) (src, rep *db.Conn, s replica.Sides) {
	if p.SourceSilo == query.SiloControl {
		return c.Control, c.Cell, replica.Sides{SourceSchema: c.ControlSchema, ReplicaSchema: c.CellSchema}
	}
	return c.Cell, c.Control, replica.Sides{SourceSchema: c.CellSchema, ReplicaSchema: c.ControlSchema}
}

// TornDownError is a pair whose replica Sentry tore down: its outbox row would drain and
// replicate nothing (the command line's to fix: exit 2).
type TornDownError struct{ Pair, Model, Where string }

func (e *TornDownError) Error() string {
	return fmt.Sprintf("replicate %s: %s; an outbox row would drain and replicate nothing (%s dropped: %s)", e.Pair, query.TornDownReason, e.Model, e.Where)
}

// Open connects to the silos; the func returned closes them.
func (r *Replicate) Open(ctx context.Context) (func(), error) {
	conns, err := r.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r.conns = conns
	return conns.Close, nil
}

func (r *Replicate) why() query.Why { return query.Why{Command: "replicate", Reason: r.Reason} }

// Script is the INSERTs of the objects Plan read, in one transaction.
func (r *Replicate) Script(preamble []string) ([]string, error) {
	var script query.Script
	for _, w := range r.work {
		script = append(script, query.ReplicateOutbox(w.outbox, w.rows, r.why()))
	}
	text, err := query.InTransaction(preamble, script).Render()
	return []string{text}, err
}

// Plan reads the objects' identifiers, in a read-only snapshot of each side, and says the
// rows it would write: one line per pair.
func (r *Replicate) Plan(ctx context.Context, _ *db.Conn) (Plan, error) {
	work, err := readReplicateWork(ctx, r.conns, r.Targets)
	if err != nil {
		return Plan{}, err
	}
	r.work = work
	if !r.PrintSQL {
		for _, w := range work {
			if len(w.cellless) > 0 {
				r.Notef("%s %s: no cell to write for (its organization has no mapping naming a cell, so Sentry writes no row either): repair the organization's mapping first",
					w.pair.Name, strings.Join(idStrings(w.cellless), ", "))
			}
		}
	}
	lines := replicatePlan(work, r.Reason)
	switch {
	case len(lines) > 0:
		return Plan{Lines: lines}, nil
	case r.DryRun:
		return Plan{Quiet: true}, nil
	}
	return Plan{Nothing: "nothing to replicate", NothingErr: unknownObjects(work)}, nil
}

// Apply writes the rows, in one transaction per silo written, and says what it wrote.
func (r *Replicate) Apply(ctx context.Context, _ *db.Conn, _ Plan) (Summary, error) {
	written, err := writeReplicateWork(ctx, r.work, r.why())
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	for _, w := range r.work {
		sum.Audit = append(sum.Audit, Audit{"replicate", map[string]any{"pair": w.pair.Name, "objects": w.rows.Objects, "rows": written[w.pair.Name], "reason": r.Reason}})
	}
	sum.Doc = replicateDoc(r.work, written, func(args ...string) string {
		if r.Cell != "" {
			args = append([]string{"--cell", r.Cell}, args...)
		}
		return r.Next(nil, args...)
	})
	sum.Err = unknownObjects(r.work)
	return sum, nil
}

// replicateWork is one pair's objects and the rows that replicate them, in outbox.
type replicateWork struct {
	pair     replica.Pair
	objects  []replica.Object
	unknown  []int64
	cellless []int64 // a control model's objects outbox_cell_names() names no cell for: no row
	rows     query.OutboxRows
	outbox   string // the source silo's outbox, qualified
	write    *db.Conn
}

// readReplicateWork reads, in a read-only snapshot of each side, the identifiers of every
// target, and the source silo's outbox payload type.
func readReplicateWork(ctx context.Context, conns ReplicateConns, targets map[string][]int64) ([]replicateWork, error) {
	var work []replicateWork
	for _, p := range replica.Pairs() {
		ids := targets[p.Name]
		if len(ids) == 0 {
			continue
		}
		srcConn, repConn, s := conns.of(p)
		err := db.ReadTx(ctx, srcConn, func(stx pgx.Tx) error {
			schema, err := outbox.LoadCatalog(ctx, stx, s.SourceSchema, query.EraTables())
			if err != nil {
				return err
			}
			if err := schema.CheckOutbox(query.Target{Silo: p.SourceSilo, Schema: s.SourceSchema}); err != nil {
				return err
			}
			payloadType := schema.Table(p.Outbox()).PayloadType
			read := func(rtx pgx.Tx) error {
				era := schema // a monolith: the one catalog
				if repConn != srcConn {
					if era, err = outbox.LoadCatalog(ctx, rtx, s.ReplicaSchema, query.EraTables()); err != nil {
						return err
					}
				}
				if td, gone := replica.TornDownOf(p, era); gone {
					// Sentry's receiver for this category writes no replica any more: the
					// row would drain and change nothing.
					return &TornDownError{Pair: p.Name, Model: td.Model, Where: td.Where}
				}
				objs, unknown, err := replica.ReplicateObjects(ctx, stx, rtx, p, s, ids)
				if err != nil {
					return db.Classify(err, "replicate-"+p.Name)
				}
				var cells []string
				var cellless []int64
				if p.CellsOf != nil {
					at := replica.CellsAt{Schema: s.SourceSchema, Cell: conns.CellName, Split: conns.split()}
					before := objs
					if objs, cells, err = p.CellsOf(ctx, stx, at, objs); err != nil {
						return db.Classify(err, "replicate-"+p.Name)
					}
					cellless = withoutCells(before, objs)
				} else if p.SourceSilo == query.SiloControl {
					return failuref("replicate %s: the target cells of a control model's outbox rows are not known for this pair", p.Name)
				}
				work = append(work, replicateWork{pair: p, objects: objs, unknown: unknown, cellless: cellless, rows: p.OutboxRows(objs, cells, payloadType, fixture.ThePast),
					outbox: p.OutboxTable(s.SourceSchema), write: srcConn})
				return nil
			}
			if repConn == srcConn { // a monolith: one snapshot
				return read(stx)
			}
			return db.ReadTx(ctx, repConn, read)
		})
		if err != nil {
			return nil, err
		}
	}
	return work, nil
}

// replicatePlan is one line per pair with objects to write.
func replicatePlan(work []replicateWork, reason string) []string {
	var plan []string
	for _, w := range work {
		if len(w.objects) == 0 {
			continue
		}
		exist, gone := planObjects(w)
		line := fmt.Sprintf("write %d %s outbox row(s) into %s for %s", len(w.objects), w.pair.Category.Name, w.outbox, w.pair.Name)
		if len(exist) > 0 {
			line += ": " + strings.Join(exist, ", ")
		}
		if len(gone) > 0 {
			line += "; deletion outbox (source gone): " + strings.Join(gone, ", ")
			if w.pair.Gone != "" {
				line += " [it will not delete the replica: " + w.pair.Gone + "]"
			}
		}
		plan = append(plan, line+" ("+drain.ReasonText(reason)+")")
	}
	return plan
}

// planObjects are the plan's object ids, those that exist and those gone, each once: a
// control model replicated to several cells has a row per cell, which the plan names after
// its id ("5 (cells de, us)") rather than listing the id once per cell.
func planObjects(w replicateWork) (exist, gone []string) {
	var order []int64
	cells := map[int64][]string{}
	isGone := map[int64]bool{}
	for i, o := range w.objects {
		if _, seen := cells[o.ObjectID]; !seen {
			order = append(order, o.ObjectID)
			cells[o.ObjectID] = nil
		}
		if len(w.rows.Cells) == len(w.objects) {
			cells[o.ObjectID] = append(cells[o.ObjectID], w.rows.Cells[i])
		}
		isGone[o.ObjectID] = isGone[o.ObjectID] || o.Gone
	}
	for _, id := range order {
		label := fmt.Sprint(id)
		if c := cells[id]; len(c) > 1 {
			label += " (cells " + strings.Join(c, ", ") + ")" // ShowPlan escapes the line
		}
		if isGone[id] {
			gone = append(gone, label)
		} else {
			exist = append(exist, label)
		}
	}
	return exist, gone
}

// writeReplicateWork inserts every pair's rows, in one transaction per silo written
// (db.WriteTx checks the server is a primary): the outbox ids written, by pair. A COMMIT
// that got no answer is said as such: running replicate again is safe (Sentry coalesces an
// object's rows).
func writeReplicateWork(ctx context.Context, work []replicateWork, why query.Why) (map[string][]int64, error) {
	written := map[string][]int64{}
	var conns []*db.Conn
	for _, w := range work {
		if len(w.objects) > 0 && !slices.Contains(conns, w.write) {
			conns = append(conns, w.write)
		}
	}
	for _, conn := range conns {
		err := db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
			for _, w := range work {
				if len(w.objects) == 0 || w.write != conn {
					continue
				}
				res, err := query.Run(ctx, tx, query.ReplicateOutbox(w.outbox, w.rows, why))
				if err != nil {
					return db.Classify(err, "replicate-outbox")
				}
				for _, row := range res.Rows {
					if id, ok := row[0].(int64); ok {
						written[w.pair.Name] = append(written[w.pair.Name], id)
					}
				}
			}
			return nil
		})
		if db.IsInDoubt(err) {
			return nil, failuref("replicate: the COMMIT got no answer (%s): the outbox rows may or may not be written; "+
				"run verify to see them pending, or run replicate again (Sentry coalesces an object's rows into one delivery)", render.Escape(strings.Join(strings.Fields(err.Error()), " ")))
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// replicateDoc is what replicate wrote: one row per pair, and what to run next.
func replicateDoc(work []replicateWork, written map[string][]int64, next func(args ...string) string) render.Doc {
	rows := []replica.WrittenRow{}
	for _, w := range work {
		if len(w.objects) == 0 {
			continue
		}
		var objs, ids []string
		for _, o := range w.rows.Objects {
			objs = append(objs, fmt.Sprint(o))
		}
		for _, id := range written[w.pair.Name] {
			ids = append(ids, fmt.Sprint(id))
		}
		rows = append(rows, replica.WrittenRow{Pair: w.pair.Name, Category: w.pair.Category.Name, Objects: strings.Join(objs, ","), OutboxIDs: strings.Join(ids, ","),
			Next: next("verify", w.pair.Name, "--id", strings.Join(objs, ","))})
	}
	return render.Doc{{Name: "replicate", Title: "outbox rows written", Table: render.TableOf(rows)}}
}

// unknownObjects fails when some ids exist neither as a source nor as a replica: nothing
// Sentry could replicate was written for them.
func unknownObjects(work []replicateWork) error {
	var parts []string
	for _, w := range work {
		if len(w.unknown) > 0 {
			parts = append(parts, w.pair.Name+" "+strings.Join(idStrings(w.unknown), ", "))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return failuref("not found as a source or a replica, so nothing was written for them: %s", strings.Join(parts, "; "))
}

// withoutCells are the objects of before that after (CellsOf's rows) has no row of.
func withoutCells(before, after []replica.Object) []int64 {
	has := map[int64]bool{}
	for _, o := range after {
		has[o.ObjectID] = true
	}
	var out []int64
	for _, o := range before {
		if !has[o.ObjectID] {
			out = append(out, o.ObjectID)
		}
	}
	return out
}

func idStrings(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
	}
	return out
}
