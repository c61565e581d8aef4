package outbox

import (
	"context"
	"errors"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// VerifyRequest is one verify: the pairs and what narrows their comparison.
type VerifyRequest struct {
	Pairs []replica.Pair
	// Named: the pairs were named (--pair), so a pair whose tables this database does not
	// have is an error; otherwise it is skipped, its summary saying so.
	Named bool
	Cell  string
	IDs   []int64
	Limit int
}

// Side is one silo's database of a split verify: its connection and schema.
type Side struct {
	Conn   *db.Conn
	Schema string
}

// sides is where a pair's source and replica are read, each in its own snapshot; era is
// the catalog of a pair's replica silo (query.EraTables), read once per side.
type sides struct {
	src, rep func(replica.Pair) (db.Tx, string)
	era      func(replica.Pair) query.Schema
	split    bool
}

// VerifyMonolith compares every pair in one read-only snapshot of the database on conn,
// whose tables are in schema.
func VerifyMonolith(ctx context.Context, conn *db.Conn, schema string, r VerifyRequest) ([]replica.Result, error) {
	var results []replica.Result
	err := db.ReadTx(ctx, conn, func(tx db.Tx) error {
		era, err := LoadCatalog(ctx, tx, schema, query.EraTables())
		if err != nil {
			return err
		}
		one := func(replica.Pair) (db.Tx, string) { return tx, schema }
		results, err = r.compare(ctx, sides{src: one, rep: one, era: func(replica.Pair) query.Schema { return era }})
		return err
	})
	return results, err
}

// VerifySplit compares every pair across the cell's and the control silo's databases, in a
// read-only snapshot of each: a pair's source is read in its source silo, its replica in
// the other.
func VerifySplit(ctx context.Context, cell, control Side, r VerifyRequest) ([]replica.Result, error) {
	var results []replica.Result
	err := db.ReadTx(ctx, cell.Conn, func(cellTx db.Tx) error {
		if err := replica.PinValueText(ctx, cellTx); err != nil {
			return err
		}
		return db.ReadTx(ctx, control.Conn, func(controlTx db.Tx) error {
			if err := replica.PinValueText(ctx, controlTx); err != nil {
				return err
			}
			cellEra, err := LoadCatalog(ctx, cellTx, cell.Schema, query.EraTables())
			if err != nil {
				return err
			}
			controlEra, err := LoadCatalog(ctx, controlTx, control.Schema, query.EraTables())
			if err != nil {
				return err
			}
			inSource := func(p replica.Pair) bool { return p.SourceSilo == query.SiloControl }
			s := sides{split: true,
				src: func(p replica.Pair) (db.Tx, string) {
					if inSource(p) {
						return controlTx, control.Schema
					}
					return cellTx, cell.Schema
				},
				rep: func(p replica.Pair) (db.Tx, string) {
					if inSource(p) {
						return cellTx, cell.Schema
					}
					return controlTx, control.Schema
				},
				// A cell model's replica is in the control silo, a control model's in the cell.
				era: func(p replica.Pair) query.Schema {
					if inSource(p) {
						return cellEra
					}
					return controlEra
				},
			}
			results, err = r.compare(ctx, s)
			return err
		})
	})
	return results, err
}

// compare runs every pair's comparison on s. A replica Sentry tore down is skipped with the
// reason, named or not, never reported as not there yet.
func (r VerifyRequest) compare(ctx context.Context, s sides) ([]replica.Result, error) {
	var results []replica.Result
	for _, p := range r.Pairs {
		if td, gone := replica.TornDownOf(p, s.era(p)); gone {
			results = append(results, replica.TornDownResult(p, td))
			continue
		}
		srcTx, srcSchema := s.src(p)
		repTx, repSchema := s.rep(p)
		names := replica.Sides{SourceSchema: srcSchema, ReplicaSchema: repSchema}
		col := &replica.Collector{Pair: p, Limit: r.Limit, Cell: r.Cell}
		if err := replica.Introspect(ctx, srcTx, repTx, names, col); err != nil {
			var absent replica.TableAbsent
			if errors.As(err, &absent) && !r.Named {
				results = append(results, replica.Result{Pair: p, Skipped: []replica.Skipped{{Field: "every field", Why: absent.Error()}}})
				continue
			}
			if errors.As(err, &absent) {
				return nil, errors.New(absent.Error())
			}
			return nil, db.Classify(err, "replica-columns")
		}
		var err error
		if s.split {
			err = replica.VerifySplit(ctx, srcTx, repTx, names, r.Cell, r.IDs, col)
		} else {
			err = replica.VerifyMonolith(ctx, srcTx, srcSchema, r.Cell, r.IDs, col)
		}
		if err != nil {
			return nil, db.Classify(err, "verify-"+p.Name)
		}
		results = append(results, replica.Result{Pair: col.Pair, Counts: col.Counts, Drifts: col.Kept, Skipped: col.Skipped})
	}
	return results, nil
}

// MappedCells reads, in a read-only snapshot on conn, the cells the control silo's
// organization mappings of schema name (each once, in the statement's order); present says
// the mapping table is there at all.
func MappedCells(ctx context.Context, conn *db.Conn, schema string) (cells []string, present bool, err error) {
	err = db.ReadTx(ctx, conn, func(tx db.Tx) error {
		sch, err := LoadCatalog(ctx, tx, schema, []string{query.OrganizationMapping})
		if err != nil {
			return err
		}
		if present = sch.Table(query.OrganizationMapping).Present; !present {
			return nil
		}
		rows, err := query.All[query.ReplicaCellName](ctx, tx, query.ReplicaCellsAll(query.QualifiedTable(schema, query.OrganizationMapping), ""))
		if err != nil {
			return db.Classify(err, "replica-cells-all")
		}
		for _, r := range rows {
			if r.Cell != "" {
				cells = append(cells, r.Cell)
			}
		}
		return nil
	})
	return cells, present, err
}
