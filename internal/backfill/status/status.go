// Package status answers "where does each table's outbox backfill stand?": it reads the
// cursors (watermark tables, or Redis incl. Cluster), the gating options and the tables' id
// bounds, and turns them into one row per table with progress, rate and ETA. The command
// only validates flags and renders the rows.
package status

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Where the cursors are read from (--store).
const (
	StoreAuto     = "auto"
	StorePostgres = "postgres"
	StoreRedis    = "redis"
)

// Budget is OUTBOX_BACKFILLS_PER_MINUTE: the most rows per minute Sentry backfills,
// shared by every table (less the outboxes already scheduled).
const Budget = 10_000

// Source is where a status is read from: one database connection and, for Redis-era
// cursors, a Redis. Now is the clock the cursor reads are stamped with (rates divide by it).
type Source struct {
	Conn       *db.Conn
	Schema     string
	Deployment query.Deployment
	Store      string
	Redis      db.RedisConfig
	KeyPrefix  string
	// MaxCursor caps one Redis cursor value in bytes (0: DefaultMaxCursor).
	MaxCursor int64
	Now       func() time.Time
}

func (s Source) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// OptionRead is one table's gating option: its value (nil when unset) and last_updated;
// and, for a control table, its backfill's target cells (nil when unset: every cell).
type OptionRead struct {
	Value       *int64
	Updated     time.Time
	TargetCells []string
}

// Bounds are a table's id bounds (nil for an empty table) and the planner's row estimate.
type Bounds struct {
	Min, Max *int64
	Estimate int64
}

// Snapshot is what one read-only look at the database tells about the selected tables.
type Snapshot struct {
	Schema  query.Schema
	Options map[string]OptionRead
	// OptionErr is the first malformed option value: its table's option stays unknown.
	OptionErr error
	Bounds    map[string]Bounds
	// Cells are the cells the organization mappings name, read only when a table's backfill
	// has target cells (the ones it leaves out are named "not attempted").
	Cells []string
}

// Names lists the tables' names.
func Names(tables []backfill.Table) []string {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	return names
}

// OptionKeys lists the tables' gating options, and the control tables' target cells.
func OptionKeys(tables []backfill.Table) []string {
	keys := make([]string, 0, 2*len(tables))
	for _, t := range tables {
		keys = append(keys, backfill.OptionKey(t.Name))
	}
	for _, t := range tables {
		if t.Silo == backfill.Control {
			keys = append(keys, backfill.TargetCellsKey(t.Name))
		}
	}
	return keys
}

// Script is what the status reads, for --print-sql (the Redis reads are the caller's
// comments): a psql script whose every statement reads one table and runs only where the
// table can be read (a replicated table's bounds need its id column), as the live status
// reads only the tables the catalog has (LoadSnapshot); psql says what it skipped.
func Script(schema string, tables []backfill.Table) (string, error) {
	names := Names(tables)
	steps := []query.ReadStep{
		{Table: query.CellWatermark, Read: query.Watermarks(schema, query.CellWatermark, names)},
		{Table: query.ControlWatermark, Read: query.Watermarks(schema, query.ControlWatermark, names)},
		{Table: query.OptionTable, Read: query.OptionValues(schema, query.OptionTable, OptionKeys(tables))},
		{Table: query.ControlOptionTable, Read: query.OptionValues(schema, query.ControlOptionTable, OptionKeys(tables))},
	}
	for _, n := range names {
		steps = append(steps, query.ReadStep{Table: n, NeedID: true, Read: query.TableBounds(schema, []string{n})})
	}
	return query.BackfillStatusScript(schema, steps)
}

// LoadSnapshot reads, in one read-only transaction, the catalog, the gating options and the
// id bounds of tables; a schema with neither options table is an *options.NoTableError. A database error (a lock timeout on sentry_option) ends the read
// there, reported as itself: running on would only add "current transaction is aborted".
func (s Source) LoadSnapshot(ctx context.Context, tables []backfill.Table) (Snapshot, error) {
	snap := Snapshot{Bounds: map[string]Bounds{}}
	names := Names(tables)
	look := append([]string{query.CellWatermark, query.ControlWatermark, query.OptionTable, query.ControlOptionTable, query.OrganizationMapping}, names...)
	err := db.ReadTx(ctx, s.Conn, func(tx pgx.Tx) error {
		sch, err := outbox.LoadCatalog(ctx, tx, s.Schema, look)
		if err != nil {
			return err
		}
		snap.Schema = sch.WithDeployment(s.Deployment)
		// Without an options table every gate would read as Sentry's default 0 ("gated by
		// option"), which is a misspelt --schema's answer, not the backfill's: fail as
		// killswitch list does, whatever store holds the cursors.
		if err := options.RequireTable(snap.Schema, s.Schema); err != nil {
			return err
		}
		if snap.Options, snap.OptionErr, err = ReadOptions(ctx, tx, s.Schema, snap.Schema, tables); err != nil {
			return err
		}
		if snap.Cells, err = readCells(ctx, tx, s.Schema, snap); err != nil {
			return err
		}
		return readBounds(ctx, tx, s.Schema, snap, names)
	})
	return snap, err
}

// readCells reads the cells the organization mappings name when a table's backfill has
// target cells (a scan of the mappings, so only then), to name the cells it leaves out.
func readCells(ctx context.Context, tx pgx.Tx, schema string, snap Snapshot) ([]string, error) {
	targeted := false
	for _, o := range snap.Options {
		targeted = targeted || o.TargetCells != nil
	}
	if !targeted || !snap.Schema.Table(query.OrganizationMapping).Present {
		return nil, nil
	}
	rows, err := query.All[query.ReplicaCellName](ctx, tx, query.ReplicaCellsAll(query.QualifiedTable(schema, query.OrganizationMapping), ""))
	if err != nil {
		return nil, db.Classify(err, "replica-cells-all")
	}
	var out []string
	for _, r := range rows {
		if r.Cell != "" {
			out = append(out, r.Cell)
		}
	}
	return out, nil
}

func readBounds(ctx context.Context, tx pgx.Tx, schema string, snap Snapshot, names []string) error {
	var withID []string
	for _, n := range names {
		if ti := snap.Schema.Table(n); ti.Present && ti.HasID {
			withID = append(withID, n)
		}
	}
	if len(withID) == 0 {
		return nil
	}
	rows, err := query.All[query.TableBoundsRow](ctx, tx, query.TableBounds(schema, withID))
	if err != nil {
		return db.Classify(err, "backfill-table-bounds")
	}
	for _, r := range rows {
		snap.Bounds[r.TableName] = Bounds{Min: r.MinID, Max: r.MaxID, Estimate: query.Deref(r.RowsEstimate)}
	}
	return nil
}

// ReadOptions reads each table's gating option from the options table Sentry reads for
// the table's silo here (options.OptionTableFor). A database error is returned as err; a
// malformed value leaves its table's option unknown and is returned as bad, after every
// other table's option is read.
func ReadOptions(ctx context.Context, tx query.Querier, schema string, sch query.Schema, tables []backfill.Table) (out map[string]OptionRead, bad, err error) {
	found := map[string]map[string]options.ValueRow{} // options table -> key -> row
	for _, ot := range []string{query.OptionTable, query.ControlOptionTable} {
		if !sch.Table(ot).Present {
			continue
		}
		rows, err := options.ReadValues(ctx, tx, query.OptionValues(schema, ot, OptionKeys(tables)))
		if err != nil {
			return nil, nil, db.Classify(err, "option-values")
		}
		found[ot] = map[string]options.ValueRow{}
		for _, r := range rows {
			found[ot][r.Key] = r
		}
	}
	out = map[string]OptionRead{}
	for _, t := range tables {
		in := found[options.OptionTableFor(query.Silo(t.Silo), sch)]
		var read OptionRead
		if row, ok := in[backfill.TargetCellsKey(t.Name)]; ok && t.Silo == backfill.Control {
			v, err := options.Decode(row.Key, row.Raw())
			if err == nil {
				read.TargetCells, err = v.Strings()
			}
			if err != nil && bad == nil {
				bad = err
			}
		}
		key := backfill.OptionKey(t.Name)
		if row, ok := in[key]; ok {
			n, err := options.DecodeInt(key, row.Raw())
			if err != nil && bad == nil {
				bad = err
			}
			if err == nil {
				read.Value, read.Updated = &n, row.Updated()
			}
		}
		if read.Value != nil || read.TargetCells != nil {
			out[t.Name] = read
		}
	}
	return out, bad, nil
}

// CountBelow counts exactly the rows of table below low (--exact).
func (s Source) CountBelow(ctx context.Context, table string, low int64) (int64, error) {
	var n int64
	err := db.ReadTx(ctx, s.Conn, func(tx pgx.Tx) error {
		row, err := query.One[query.RowsBelowRow](ctx, tx, query.RowsBelow(s.Schema, table, low))
		if err != nil {
			return db.Classify(err, "backfill-rows-below")
		}
		n = row.RowsDone
		return nil
	})
	return n, err
}

// StoresText says which options table Sentry reads for each outbox here, and why.
func StoresText(sch query.Schema) string {
	cell, control := options.OptionTableFor(query.SiloCell, sch), options.OptionTableFor(query.SiloControl, sch)
	if cell == control {
		return fmt.Sprintf("%s for both outboxes (%s)", orNone(cell), sch.DeploymentWhy)
	}
	return fmt.Sprintf("%s for the cell outbox, %s for the control outbox (%s)", orNone(cell), orNone(control), sch.DeploymentWhy)
}

func orNone(table string) string {
	if table == "" {
		return "no options table"
	}
	return table
}
