package killswitch

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Change adds shard ids to (or removes them from) the kill-switch list of one scope, in the
// options table Sentry reads for Target's outbox.
type Change struct {
	Target     query.Target
	Deployment query.Deployment
	Scope      query.Enum
	Key        string
	IDs        []int64
	Add        bool
	Reason     string
	// PrintValueType is the options value column's type printed SQL is written for (jsonb,
	// Sentry since Aug 2025, or text before): a run reads it from the catalog, a script
	// cannot, and one script cannot serve both (text has no assignment cast from jsonb).
	PrintValueType string
}

// printType is PrintValueType, jsonb when unset.
func printType(vt string) string {
	if vt == "" {
		return "jsonb"
	}
	return vt
}

// Verb is "add" or "remove".
func (c Change) Verb() string {
	if c.Add {
		return "add"
	}
	return "remove"
}

// ChangePlan is what a change would do, from a read-only look; the write recomputes it
// under the row lock.
type ChangePlan struct {
	Table     string // the options table Sentry reads for the outbox
	ValueType string // its value column's type (jsonb or text)
	Why       string // how the deployment was decided
	Before    []int64
	After     []int64
	Changed   []int64
	Unchanged []int64
	// Waiting totals what waits in the changed shards (nil when the outbox is not here).
	Waiting *Totals
}

// Totals are a set of shards' rows and coalesce groups.
type Totals struct{ Rows, Groups int64 }

// Script is what a change runs, for --print-sql: printed for the current Sentry (jsonb
// values); a text column takes the same statements with the ::jsonb casts.
func (c Change) Script(table string) query.Script {
	return query.Script{
		query.OptionEnsure(c.Target.Schema, table, printType(c.PrintValueType), c.Key, "[]", c.Reason),
		query.ShardListUpdate(c.Target.Schema, table, printType(c.PrintValueType), c.Key, c.IDs, c.Add, c.Reason),
	}
}

// Plan reads the current list and what waits in the shards, in a read-only transaction.
func (c Change) Plan(ctx context.Context, conn *db.Conn) (ChangePlan, error) {
	var p ChangePlan
	t := c.Target
	err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		sch, err := loadSchema(ctx, tx, t.Schema, c.Deployment, []string{query.OptionTable, query.ControlOptionTable, t.TableName()})
		if err != nil {
			return err
		}
		p.Why = sch.DeploymentWhy
		if p.Table = options.OptionTableFor(t.Silo, sch); p.Table == "" {
			return fmt.Errorf("no options table here for the %s outbox (%s); check --dsn, --schema, --silo or --deployment", t.Silo, sch.DeploymentWhy)
		}
		p.ValueType = sch.Table(p.Table).ValueType
		if p.Before, err = c.readList(ctx, tx, p.Table); err != nil {
			return err
		}
		if sch.Table(t.TableName()).Present {
			p.Waiting, err = c.waiting(ctx, tx, sch.Adapt(t))
		}
		return err
	})
	if err != nil {
		return p, err
	}
	p.After, p.Changed, p.Unchanged = ApplyChange(p.Before, c.IDs, c.Add)
	return p, nil
}

func (c Change) readList(ctx context.Context, tx pgx.Tx, table string) ([]int64, error) {
	raw, ok, err := readOption(ctx, tx, c.Target.Schema, table, c.Key)
	if err != nil || !ok {
		return nil, err
	}
	v, err := options.Decode(c.Key, raw)
	if err != nil {
		return nil, err
	}
	return v.StrictIDs()
}

func (c Change) waiting(ctx context.Context, tx pgx.Tx, t query.Target) (*Totals, error) {
	rows, err := query.Picked[query.ShardDepthRow](ctx, tx, query.ShardDepths(t, c.Scope, c.IDs))
	if err != nil {
		return nil, db.Classify(err, "shard-depths")
	}
	var tot Totals
	for _, r := range rows {
		tot.Rows += r.Depth
		tot.Groups += r.CoalesceGroups
	}
	return &tot, nil
}

// Apply writes the change under the row lock and returns the stored value: one statement
// computes the new list from the row it updates, so concurrent writers lose nothing. A
// value still stored as a pickle is decoded under the lock and written back as JSON.
func (c Change) Apply(ctx context.Context, conn *db.Conn, p ChangePlan) (stored string, err error) {
	t := c.Target
	err = db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		if _, err := query.Exec(ctx, tx, query.OptionEnsure(t.Schema, p.Table, p.ValueType, c.Key, "[]", c.Reason)); err != nil {
			return db.Classify(err, "option-ensure")
		}
		locked, err := query.One[query.OptionLockRow](ctx, tx, query.OptionLock(t.Schema, p.Table, c.Key))
		if err != nil {
			return db.Classify(err, "option-lock")
		}
		v, err := options.Decode(c.Key, options.RawValue(locked.Value))
		if err != nil {
			return err
		}
		st := query.ShardListUpdate(t.Schema, p.Table, p.ValueType, c.Key, c.IDs, c.Add, c.Reason)
		if v.Encoding != options.EncodingJSON {
			cur, err := v.StrictIDs()
			if err != nil {
				return err
			}
			next, _, _ := ApplyChange(cur, c.IDs, c.Add)
			st = query.OptionWrite(t.Schema, p.Table, p.ValueType, c.Key, options.EncodeIDs(next), c.Reason, "killswitch "+c.Verb())
		}
		row, err := query.One[query.OptionReturningRow](ctx, tx, st)
		if err != nil {
			return db.Classify(err, st.Name)
		}
		stored = query.Deref(row.Value)
		return nil
	})
	return stored, err
}

// Gate sets a table's backfill gate, outbox_replication.<table>.replication_version, in the
// options table Sentry reads for the table's silo.
type Gate struct {
	Schema     string
	Deployment query.Deployment
	Table      backfill.Table
	Version    int64
	Reason     string
	// PrintValueType: as Change's.
	PrintValueType string
}

// Key is the gate's option.
func (g Gate) Key() string { return backfill.OptionKey(g.Table.Name) }

// Value is the version as the option's JSON.
func (g Gate) Value() string { return strconv.FormatInt(g.Version, 10) }

// Statement is the write, for --print-sql (jsonb) or to run (valueType of the table).
func (g Gate) Statement(table, valueType string) query.Statement {
	return query.OptionWrite(g.Schema, table, valueType, g.Key(), g.Value(), g.Reason, "killswitch gate")
}

// PrintStatement is the write as --print-sql prints it, for PrintValueType (jsonb when unset).
func (g Gate) PrintStatement(table string) query.Statement {
	return g.Statement(table, printType(g.PrintValueType))
}

// GatePlan is where the gate is and what it holds now.
type GatePlan struct {
	OptionsTable string
	ValueType    string
	// Before is the current value, or "(unset: 0)".
	Before string
}

// Plan reads the current gate in a read-only transaction.
func (g Gate) Plan(ctx context.Context, conn *db.Conn) (GatePlan, error) {
	var p GatePlan
	err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		sch, err := loadSchema(ctx, tx, g.Schema, g.Deployment, []string{query.OptionTable, query.ControlOptionTable})
		if err != nil {
			return err
		}
		if p.OptionsTable = options.OptionTableFor(query.Silo(g.Table.Silo), sch); p.OptionsTable == "" {
			return fmt.Errorf("no options table here for %s's gate (%s silo; %s); check --dsn, --schema or --deployment", g.Table.Name, g.Table.Silo, sch.DeploymentWhy)
		}
		p.ValueType = sch.Table(p.OptionsTable).ValueType
		raw, ok, err := readOption(ctx, tx, g.Schema, p.OptionsTable, g.Key())
		if err != nil {
			return err
		}
		p.Before = "(unset: 0)"
		if ok {
			n, err := options.DecodeInt(g.Key(), raw)
			if err != nil {
				return err
			}
			p.Before = strconv.FormatInt(n, 10)
		}
		return nil
	})
	return p, err
}

// Apply writes the gate and returns the stored value.
func (g Gate) Apply(ctx context.Context, conn *db.Conn, p GatePlan) (string, error) {
	var stored string
	err := db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		row, err := query.One[query.OptionReturningRow](ctx, tx, g.Statement(p.OptionsTable, p.ValueType))
		if err != nil {
			return db.Classify(err, "option-write")
		}
		stored = query.Deref(row.Value)
		return nil
	})
	return stored, err
}
