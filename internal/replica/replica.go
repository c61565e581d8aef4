// Package replica compares Sentry's replicated models with their replicas (verify) and
// writes the outbox rows that make Sentry replicate them again (replicate). The pairs, the
// fields each replica copies and the outbox rows Sentry writes for them are read from
// Sentry's source: docs/replicas.md says where.
//
// A pair is data (query.ReplicaSpec: tables, key columns, fields with the source value each
// is compared with, the outbox scope, category, shard and payload, the cell scope of each
// side); the engine (verify.go, replicate.go) runs every pair alike, whichever silo its
// source lives in. The cell -> control pairs are in pairs_cell.go; Register adds others.
package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The drift classes, as verify's drift column says them.
const (
	Missing = "missing" // a source row without its replica
	Stale   = "stale"   // both, with fields that differ
	Orphan  = "orphan"  // a replica whose source is gone: a deletion never delivered
	Pending = "pending" // drifted, with an outbox row for the object still queued: not drift yet
)

// Pair is one replication pair: a model of one silo and its replica in the other, as the
// statements read it.
type Pair struct {
	query.ReplicaSpec
	// Gone says what delivering a deletion outbox does for an orphan of the pair: "" when
	// the receiver deletes the replica, else why it does not (the note verify's next gives).
	Gone string
	// CellsOf, for a control model, is outbox_cell_names(): the objects' rows, one per
	// target cell, with the cell of each (q is the source silo's, at says its schema and the
	// run's cell and mode). nil for a cell model (its one row has no cell).
	CellsOf func(ctx context.Context, q query.Querier, at CellsAt, objs []Object) ([]Object, []string, error)
}

// CellsAt is what a control model's CellsOf needs of the run: the source silo's schema, the
// cell the run is for (the monolith's, or the cell context's) and whether the silos are two
// databases (in a monolith Sentry's find_cells_for_* answer the monolith's cell alone).
type CellsAt struct {
	Schema, Cell string
	Split        bool
}

// registered are the pairs verify and replicate know, in the order verify checks them.
var registered []Pair //nolint:gochecknoglobals // the pairs, set up by init() of the pair files

// Register adds pairs (a pair file's init()).
func Register(ps ...Pair) { registered = append(registered, ps...) }

// Pairs are the replication pairs verify and replicate know, in the order verify checks
// them: the cell -> control ones first.
func Pairs() []Pair {
	var out []Pair
	for _, silo := range []query.Silo{query.SiloCell, query.SiloControl} {
		for _, p := range registered {
			if p.SourceSilo == silo {
				out = append(out, p)
			}
		}
	}
	return out
}

// Names are the pairs' names, for help and completion.
func Names() []string {
	var out []string
	for _, p := range Pairs() {
		out = append(out, p.Name)
	}
	return out
}

// Lookup finds a pair by its name or by either of its tables' names.
func Lookup(name string) (Pair, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range Pairs() {
		if n == p.Name || n == p.Source || n == p.Replica || "sentry_"+n == p.Source {
			return p, nil
		}
	}
	return Pair{}, fmt.Errorf("unknown replication pair %q: known pairs are %s", name, strings.Join(Names(), ", "))
}

// Skipped is a field verify does not compare on this database, and why.
type Skipped struct {
	Field, Why string
}

// Compared is p with only the fields the database's tables have (columns: the qualified
// table's column names), and the fields left out, each with why. An error when a table is
// not there at all.
func (p Pair) Compared(sourceTable, replicaTable string, columns map[string]map[string]bool) (Pair, []Skipped, error) {
	for _, t := range []string{sourceTable, replicaTable} {
		if len(columns[t]) == 0 {
			return p, nil, TableAbsent{Pair: p.Name, Table: t}
		}
	}
	var kept []query.ReplicaField
	var skipped []Skipped
	for _, f := range p.Fields {
		switch {
		case !columns[replicaTable][f.Name]:
			skipped = append(skipped, Skipped{f.Name, "no column " + replicaTable + "." + f.Name})
		case f.Source.OnSource() && !columns[sourceTable][f.Source.Column]:
			skipped = append(skipped, Skipped{f.Name, "no column " + sourceTable + "." + f.Source.Column})
		default:
			kept = append(kept, f)
		}
	}
	p.Fields = kept
	return p, skipped, nil
}

// TableAbsent is a pair whose table the database does not have (a Sentry from before the
// model, or a silo that is not the pair's).
type TableAbsent struct{ Pair, Table string }

func (e TableAbsent) Error() string {
	return fmt.Sprintf("pair %s: table %s is not there (no such table in this database or schema)", e.Pair, e.Table)
}

// TornDown is a pair whose replica Sentry dropped in July 2026 (query.Teardowns), on a
// database past that: there is nothing to compare, and no outbox row writes a replica.
type TornDown struct{ query.Teardown }

// TornDownOf is pair p's teardown when the replica silo's catalog (era: its Schema, loaded
// with query.EraTables()) says Sentry dropped p's replica.
func TornDownOf(p Pair, era query.Schema) (TornDown, bool) {
	if era.ReplicaState(p.Replica) != query.ReplicaTornDown {
		return TornDown{}, false
	}
	td, _ := query.TeardownOf(p.Replica)
	return TornDown{td}, true
}

// TornDownResult is verify's summary of a torn-down pair: skipped, with the reason.
func TornDownResult(p Pair, td TornDown) Result {
	return Result{Pair: p, Skipped: []Skipped{{Field: "every field", Why: query.TornDownReason + " (" + td.Model + " dropped: " + td.Where + ")"}}, TornDown: true}
}

// PendingRows are an object's queued outbox rows in one shard: the shard, how many rows,
// and when the shard is next attempted.
type PendingRows struct {
	Shard int64
	Rows  int64
	Next  time.Time
	Due   bool
}

// Record is one object as the statements read it: its source and replica values (text, nil
// for NULL; nil slices when there is no such row) and its queued outbox rows in its shard.
type Record struct {
	ObjectID        int64
	Source, Replica []*string
	Pending         *PendingRows
	// ReplicaShard is the replica's shard (a split read); candidates are the queued rows of
	// an object without a source row, one per shard: the one in ReplicaShard is its pending.
	ReplicaShard int64
	candidates   []PendingRows
}

// HasSource and HasReplica say which rows exist.
func (r Record) HasSource() bool  { return r.Source != nil }
func (r Record) HasReplica() bool { return r.Replica != nil }

// FieldDiff is one field that differs, with both values (nil for NULL).
type FieldDiff struct {
	Field   string  `json:"field"`
	Source  *string `json:"source"`
	Replica *string `json:"replica"`
}

// Drift is one drifted object.
type Drift struct {
	Pair     string
	Class    string // Missing, Stale, Orphan or Pending
	Would    string // for Pending: the class it is until its outbox is delivered
	ObjectID int64
	Fields   []FieldDiff
	Pending  *PendingRows
	scope    query.Enum
	silo     query.Silo // the source's: a control model's pending rows are the control outbox's
	cell     string     // the cell verified (Collector.Cell)
	gone     string
}

// Classify says whether r is drifted, and how: a missing or orphan object, a stale one, or
// any of these with an outbox row queued for it in its shard (pending); ok is false for an
// object in sync (queued or not).
func Classify(p Pair, r Record) (d Drift, ok bool) {
	d = Drift{Pair: p.Name, ObjectID: r.ObjectID, Pending: r.Pending, scope: p.Scope, silo: p.SourceSilo, gone: p.Gone}
	switch {
	case !r.HasSource() && !r.HasReplica():
		// A deletion queued for an object already gone on both sides: nothing to do.
		return d, false
	case !r.HasReplica():
		d.Class = Missing
	case !r.HasSource():
		d.Class = Orphan
	default:
		for i, f := range p.Fields {
			if !sameText(r.Source[i], r.Replica[i]) {
				d.Fields = append(d.Fields, FieldDiff{Field: f.Name, Source: r.Source[i], Replica: r.Replica[i]})
			}
		}
		if len(d.Fields) == 0 {
			return d, false
		}
		d.Class = Stale
	}
	if r.Pending != nil {
		d.Would, d.Class = d.Class, Pending
	}
	return d, true
}

func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// FieldsJSON is the drift's fields as verify's fields column holds them: for a stale
// object {"slug": {"source": "a", "replica": "b"}, …} in the pair's field order, else null.
func (d Drift) FieldsJSON() string {
	if len(d.Fields) == 0 {
		return "null"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range d.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Field)
		v, _ := json.Marshal(struct {
			Source  *string `json:"source"`
			Replica *string `json:"replica"`
		}{f.Source, f.Replica})
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// Commands make the command lines a drift's next names, each of which runs as printed
// where verify ran: Repair for replicate (which reads both silos: in a split deployment
// both contexts), Outbox for a command on the outbox of silo (for the control outbox, its
// rows for cell): in a split deployment the context that holds that outbox.
type Commands struct {
	Repair func(args ...string) string
	Outbox func(silo query.Silo, cell string, args ...string) string
}

// Next is what to do about the drift: the command that repairs it, or what it waits for.
func (d Drift) Next(c Commands) string {
	if d.Class == Pending {
		outbox := func(args ...string) string { return c.Outbox(d.silo, d.cell, args...) }
		if d.Pending.Due {
			return fmt.Sprintf("wait: shard %s/%d is due; Sentry's workers deliver it (or drain it: %s)", d.scope.Name, d.Pending.Shard,
				outbox("inspect", "shard", d.scope.ScopeWord(), fmt.Sprint(d.Pending.Shard)))
		}
		return outbox("reschedule", d.scope.ScopeWord(), fmt.Sprint(d.Pending.Shard), "--reason", "replicate: deliver the queued outbox")
	}
	if d.Class == Orphan && d.gone != "" {
		return "no outbox repairs it: " + d.gone
	}
	// Missing, stale and orphan alike: replicate writes the outbox Sentry would (for an
	// orphan, whose source is gone, the deletion outbox).
	return c.Repair("replicate", d.Pair, fmt.Sprint(d.ObjectID))
}

// Counts are one pair's summary.
type Counts struct {
	InSync, Missing, Stale, Orphan, Pending int64
}

// Drifted is the number of drifted objects.
func (c Counts) Drifted() int64 { return c.Missing + c.Stale + c.Orphan + c.Pending }

// Collector counts every drift of a pair and keeps the first limit of them (0: all), so a
// verify of a million drifted rows holds only what it prints.
type Collector struct {
	Pair    Pair
	Limit   int
	Counts  Counts
	Kept    []Drift
	Skipped []Skipped // the fields not compared on this database
	Cell    string    // the cell verified: a control model's pending shard is that cell's
}

// Add classifies one record.
func (c *Collector) Add(r Record) {
	d, ok := Classify(c.Pair, r)
	if !ok {
		if r.HasSource() {
			c.Counts.InSync++
		}
		return
	}
	switch d.Class {
	case Missing:
		c.Counts.Missing++
	case Stale:
		c.Counts.Stale++
	case Orphan:
		c.Counts.Orphan++
	case Pending:
		c.Counts.Pending++
	}
	c.keep(d)
}

func (c *Collector) keep(d Drift) {
	d.cell = c.Cell
	if c.Limit == 0 || len(c.Kept) < c.Limit {
		c.Kept = append(c.Kept, d)
	}
}
