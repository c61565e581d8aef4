package cmd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// replicateOptions are replicate's flags and arguments.
type replicateOptions struct {
	repairOptions
	DryRun bool
	Args   []string // PAIR ID...
	From   string
	Drift  []string
	Cell   string // --cell: the cell a control model's rows are for

	targets map[string][]int64 // pair -> ids, set by Validate (--from: by resolve)
}

var driftClasses = []string{replica.Missing, replica.Stale, replica.Orphan, replica.Pending} //nolint:gochecknoglobals // constant list

// Validate checks PAIR ID... or --from, and --drift.
func (o *replicateOptions) Validate() error {
	const hint = "outboxctl replicate organization 42 --reason 'mapping missing after upgrade'"
	for _, c := range o.Drift {
		if !slices.Contains(driftClasses, c) {
			return usageErrorf("outboxctl replicate --from drift.json --drift missing,stale", "invalid `--drift` %q: valid values are %s", c, strings.Join(driftClasses, ", "))
		}
	}
	if o.From != "" {
		if len(o.Args) > 0 {
			return usageErrorf("outboxctl replicate --from drift.json", "`--from` takes the objects from the file: drop PAIR ID...")
		}
		return nil
	}
	if len(o.Args) < 2 {
		return usageErrorf(hint, "name a pair and at least one id (or --from verify's JSON)")
	}
	p, err := replica.Lookup(o.Args[0])
	if err != nil {
		return usageErrorf(hint, "%s", err.Error())
	}
	o.targets = map[string][]int64{}
	for _, s := range o.Args[1:] {
		id, err := nonNegativeID("object id", s, hint)
		if err != nil {
			return err
		}
		if !slices.Contains(o.targets[p.Name], id) {
			o.targets[p.Name] = append(o.targets[p.Name], id)
		}
	}
	return nil
}

// resolve reads --from into targets.
func (o *replicateOptions) resolve() error {
	if o.From == "" {
		return nil
	}
	f, err := os.Open(o.From)
	if err != nil {
		return usageErrorf("outboxctl verify -o json", "reading `--from`: %s", err.Error())
	}
	defer f.Close()
	classes := o.Drift
	if len(classes) == 0 {
		classes = []string{replica.Missing, replica.Stale, replica.Orphan}
	}
	if o.targets, err = replica.FromFile(f, classes); err != nil {
		return usageErrorf("outboxctl verify -o json", "`--from` %s: %s", o.From, err.Error())
	}
	return nil
}

func newReplicateCmd(a *app) *cobra.Command {
	var o replicateOptions
	c := &cobra.Command{
		Use:   "replicate PAIR ID... | --from FILE",
		Short: "Write the outbox rows Sentry writes for objects, so its workers replicate them again",
		Long: strings.TrimSpace(`
For each object, write into the source silo's outbox (sentry_regionoutbox for the cell ->
control pairs; sentry_controloutbox for the control -> cell pairs, one row per cell
outbox_cell_names() names: --cell, the cell context's or the monolith's for a gone object)
the row Sentry's own outbox_for_update() writes for it: the pair's category
and scope, the shard and object identifiers infer_identifiers gives it, the payload of
payload_for_update() and a fresh row's schedule (scheduled_for 2016-08-01, Sentry's
THE_PAST), so the shard is due at once. Sentry's workers (or outboxctl drain) then deliver
it through the real receiver, which upserts the replica. An object whose source row is gone
gets the deletion outbox Sentry writes as it deletes (the same identifiers, read from its
replica): delivered, it deletes the replica.

--from reads the objects of verify's JSON (-o json or jsonl); --drift picks the classes
(default missing,stale,orphan: pending objects are already queued). With two contexts
(--context us,control) the sources and the outbox are the cell's, the replicas the control
silo's. The plan is confirmed (--yes off a terminal); --dry-run prints it and stops;
--print-sql prints the INSERT after reading the objects. Afterwards verify PAIR --id ID
shows the object pending, then in sync once the shard drained. A pair whose replica Sentry
tore down in July 2026 (team, organizationmemberteam, externalactor, on a database past it)
is refused (exit 2): its outbox row would drain and replicate nothing.`),
		Example: examples(`
  outboxctl replicate organization 1 --reason 'INC-7: mapping missing after upgrade' --yes
  outboxctl verify -o json > drift.json
  outboxctl replicate --from drift.json --drift missing,stale --reason 'INC-7' --yes`),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return replica.Names(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Args = args
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.resolve(); err != nil {
				return err
			}
			o.DryRun, o.Cell = a.dryRun, a.g.Cell
			return runReplicate(c.Context(), a.factory(), o)
		},
	}
	addRepairFlags(a, c, &o.repairOptions, false) // --yes, --reason and the shared --dry-run
	c.Flags().StringVar(&o.From, "from", "", "replicate the drifted objects of this file (verify -o json or -o jsonl)")
	c.Flags().StringSliceVar(&o.Drift, "drift", nil, "with --from: the drift classes to replicate (missing, stale, orphan, pending; default missing,stale,orphan)")
	return c
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

// replicateConns are the two silos' connections (the same one in a monolith): a pair's
// sources and outbox are its source silo's, its replicas the other's.
type replicateConns struct {
	cell, control             *db.Conn
	cellSchema, controlSchema string
	cellName                  string // the cell's name: a control model's rows' cell (--cell, the cell context's, the monolith's)
	close                     func()
}

// split says the silos are two databases (two contexts).
func (c replicateConns) split() bool { return c.cell != c.control }

// of is where pair p is read and written: the source's connection, the replica's, and the
// two schemas.
func (c replicateConns) of(p replica.Pair) (src, rep *db.Conn, s replica.Sides) {
	if p.SourceSilo == query.SiloControl {
		return c.control, c.cell, replica.Sides{SourceSchema: c.controlSchema, ReplicaSchema: c.cellSchema}
	}
	return c.cell, c.control, replica.Sides{SourceSchema: c.cellSchema, ReplicaSchema: c.controlSchema}
}

func (d factory) replicateConns(ctx context.Context, cell string) (replicateConns, error) {
	sides, err := d.split(ctx, "replicate", true)
	if err != nil {
		return replicateConns{}, err
	}
	if sides != nil {
		if cell == "" {
			cell = sides.cellName()
		}
		return replicateConns{cell: sides.cell.conn, control: sides.control.conn, cellSchema: sides.cell.schema,
			controlSchema: sides.control.schema, cellName: cell, close: func() { sides.close(ctx) }}, nil
	}
	if err := d.requireDB("outboxctl replicate"); err != nil {
		return replicateConns{}, err
	}
	conn, err := d.connect(ctx, "replicate")
	if err != nil {
		return replicateConns{}, err
	}
	if cell == "" {
		cell = monolithCell
	}
	return replicateConns{cell: conn, control: conn, cellSchema: d.schema, controlSchema: d.schema, cellName: cell,
		close: func() { conn.Close(context.WithoutCancel(ctx)) }}, nil
}

// runReplicate reads the objects' identifiers, shows the plan and, confirmed, writes the
// outbox rows in one transaction per silo written.
func runReplicate(ctx context.Context, d factory, o replicateOptions) error {
	conns, err := d.replicateConns(ctx, o.Cell)
	if err != nil {
		return err
	}
	defer conns.close()
	work, err := readReplicateWork(ctx, conns, o.targets)
	if err != nil {
		return err
	}
	why := query.Why{Command: "replicate", Reason: o.Reason}
	if d.printSQL {
		var script query.Script
		for _, w := range work {
			script = append(script, query.ReplicateOutbox(w.outbox, w.rows, why))
		}
		return d.printScript(query.InTransaction(d.preamble("replicate"), script))
	}
	for _, w := range work {
		if len(w.cellless) > 0 {
			d.printer.Notef("%s %s: no cell to write for (its organization has no mapping naming a cell, so Sentry writes no row either): repair the organization's mapping first",
				w.pair.Name, strings.Join(idStrings(w.cellless), ", "))
		}
	}
	plan := replicatePlan(work, o.Reason)
	if o.DryRun {
		if len(plan) == 0 {
			return nil
		}
		return d.confirm("outboxctl replicate", repair.Plan{Lines: plan}, o.Yes) // the target and the plan, then "dry run"
	}
	if len(plan) == 0 {
		d.printer.Notef("nothing to replicate")
		return unknownObjects(work)
	}
	if err := d.confirm("outboxctl replicate", repair.Plan{Lines: plan}, o.Yes); err != nil {
		return err
	}
	written, err := writeReplicateWork(ctx, work, why)
	if err != nil {
		return err
	}
	for _, w := range work {
		d.audit("replicate", map[string]any{"pair": w.pair.Name, "objects": w.rows.Objects, "rows": written[w.pair.Name], "reason": o.Reason})
	}
	if err := d.printer.Print(replicateDoc(work, written, func(args ...string) string { return d.next(nil, withCell(o.Cell, args)...) })); err != nil {
		return err
	}
	return unknownObjects(work)
}

// readReplicateWork reads, in a read-only snapshot of each side, the identifiers of every
// target, and the source silo's outbox payload type.
func readReplicateWork(ctx context.Context, conns replicateConns, targets map[string][]int64) ([]replicateWork, error) {
	var work []replicateWork
	for _, p := range replica.Pairs() {
		ids := targets[p.Name]
		if len(ids) == 0 {
			continue
		}
		srcConn, repConn, s := conns.of(p)
		err := db.ReadTx(ctx, srcConn, func(stx db.Tx) error {
			schema, err := query.LoadSchema(ctx, stx, s.SourceSchema, query.EraTables())
			if err != nil {
				return db.Classify(err, "introspect")
			}
			if err := schema.CheckOutbox(query.Target{Silo: p.SourceSilo, Schema: s.SourceSchema}); err != nil {
				return err
			}
			payloadType := schema.Table(p.Outbox()).PayloadType
			read := func(rtx db.Tx) error {
				era := schema // a monolith: the one catalog
				if repConn != srcConn {
					if era, err = query.LoadSchema(ctx, rtx, s.ReplicaSchema, query.EraTables()); err != nil {
						return db.Classify(err, "introspect")
					}
				}
				if td, gone := replica.TornDownOf(p, era); gone {
					// Sentry's receiver for this category writes no replica any more: the
					// row would drain and change nothing.
					return usageErrorf("outboxctl verify", "replicate %s: %s; an outbox row would drain and replicate nothing (%s dropped: %s)",
						p.Name, query.TornDownReason, td.Model, td.Where)
				}
				objs, unknown, err := replica.ReplicateObjects(ctx, stx, rtx, p, s, ids)
				if err != nil {
					return db.Classify(err, "replicate-"+p.Name)
				}
				var cells []string
				var cellless []int64
				if p.CellsOf != nil {
					at := replica.CellsAt{Schema: s.SourceSchema, Cell: conns.cellName, Split: conns.split()}
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
		plan = append(plan, line+" ("+reasonText(reason)+")")
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
			label += " (cells " + strings.Join(c, ", ") + ")" // printPlan escapes the line
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
		err := db.WriteTx(ctx, conn, func(tx db.Tx) error {
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
				"run verify to see them pending, or run replicate again (Sentry coalesces an object's rows into one delivery)", oneLine(err.Error()))
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
