package options

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The kill-switch options should_skip_shard() reads. Only organization (0) and user (1)
// shards can be disabled; the same lists apply to the cell and the control outboxes.
const (
	DisabledOrgShards  = "hybrid_cloud.authentication.disabled_organization_shards"
	DisabledUserShards = "hybrid_cloud.authentication.disabled_user_shards"
)

// KillswitchScopes maps each kill-switch option to the scope it disables.
var KillswitchScopes = map[string]int{DisabledOrgShards: 0, DisabledUserShards: 1} //nolint:gochecknoglobals // constant table

// Killswitches are the disabled shards, as Sentry's workers on that side would read them.
type Killswitches struct {
	// Table is the options table read ("" when none exists: the state is unknown).
	Table string
	// Disabled maps scope value to disabled shard ids.
	Disabled map[int]map[int64]bool
	// Strays are list entries that disable nothing (strings, floats): Sentry compares integers.
	Strays map[string][]string
	// Failed holds, by scope, why that scope's list could not be read: its shards' state is
	// unknown, while the other scope's is still known.
	Failed map[int]error
	// Set is, by scope, when the list's option row was last written and by whom
	// (last_updated, last_updated_by): a switch left on for days is doctor's evidence.
	Set map[int]SetBy
}

// SetBy is when an option row was last written and by whom ("" when NULL).
type SetBy struct {
	At time.Time
	By string
}

// Refs are the disabled shards, scope by scope in id order (none when unknown).
func (k *Killswitches) Refs() []query.ShardRef {
	if !k.Known() {
		return nil
	}
	var out []query.ShardRef
	for _, scope := range []int{0, 1} {
		ids := make([]int64, 0, len(k.Disabled[scope]))
		for id := range k.Disabled[scope] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, query.ShardRef{Scope: scope, ID: id})
		}
	}
	return out
}

// Known reports whether the kill switches could be read.
func (k *Killswitches) Known() bool { return k != nil && k.Table != "" }

// IsDisabled says whether a shard is disabled; nil when unknown.
func (k *Killswitches) IsDisabled(scope int, shard int64) *bool {
	if !k.Known() || k.Failed[scope] != nil {
		return nil
	}
	d := k.Disabled[scope][shard]
	return &d
}

// OptionTableFor is the one place that decides which options table Sentry's workers read
// for an outbox of silo (OptionsStore.model_cls, reference §5.1): ControlOption only in a
// split deployment's control silo; Option in a cell and in a monolith, for both outboxes.
// An unknown deployment is taken as split. A control database from before ControlOption
// existed (migration 0439) read Option. With no catalog (sch.Tables nil: SQL printed without
// a database) the choice is made from the deployment alone; with one, "" means the table
// is not here and the state is unknown.
func OptionTableFor(silo query.Silo, sch query.Schema) string {
	want := query.OptionTable
	if silo == query.SiloControl && sch.Deployment != query.DeploymentMonolith {
		want = query.ControlOptionTable
	}
	switch {
	case sch.Tables == nil || sch.Table(want).Present:
		return want
	case want == query.ControlOptionTable && sch.Table(query.OptionTable).Present:
		return query.OptionTable
	}
	return ""
}

// Governs lists the outbox silos whose kill switches and backfill gates optionsTable holds
// in this deployment: none for a table Sentry does not read here (sentry_controloption in a
// monolith), whose values change nothing.
func Governs(optionsTable string, sch query.Schema) []query.Silo {
	var out []query.Silo
	outbox := map[query.Silo]string{query.SiloCell: query.CellTable, query.SiloControl: query.ControlTable}
	for _, silo := range []query.Silo{query.SiloCell, query.SiloControl} {
		if sch.Tables != nil && !sch.Table(outbox[silo]).Present {
			continue // no such outbox here: nothing to govern
		}
		if OptionTableFor(silo, sch) == optionsTable {
			out = append(out, silo)
		}
	}
	return out
}

// KillswitchStatement is the statement that reads the kill-switch options from table.
func KillswitchStatement(schema, table string) query.Statement {
	st := query.OptionValues(schema, table, []string{DisabledOrgShards, DisabledUserShards})
	st.Name = "killswitch-options"
	return st
}

// ReadKillswitches reads and decodes the kill switches. A missing options table gives an
// unknown state, not an error. A malformed value fails only its own scope (Failed): the
// first such error is returned with the otherwise complete Killswitches, so a command can
// show everything else before it exits non-zero.
func ReadKillswitches(ctx context.Context, q query.Querier, schema string, sch query.Schema, silo query.Silo) (*Killswitches, error) {
	return ReadKillswitchesFrom(ctx, q, schema, OptionTableFor(silo, sch))
}

// ReadKillswitchesFrom reads the kill switches stored in one options table ("" for none),
// whether or not Sentry reads that table (killswitch list shows every table's lists).
func ReadKillswitchesFrom(ctx context.Context, q query.Querier, schema, table string) (*Killswitches, error) {
	k := &Killswitches{Table: table, Disabled: map[int]map[int64]bool{0: {}, 1: {}}, Strays: map[string][]string{}, Failed: map[int]error{}, Set: map[int]SetBy{}}
	if table == "" {
		return k, nil
	}
	rows, err := ReadValues(ctx, q, KillswitchStatement(schema, table))
	if err != nil {
		return nil, err
	}
	var first error
	for _, r := range rows {
		by := ""
		if r.LastUpdatedBy != nil {
			by = *r.LastUpdatedBy
		}
		k.Set[KillswitchScopes[r.Key]] = SetBy{At: r.Updated(), By: by}
		if err := k.add(r.Key, r.Raw()); err != nil {
			k.Failed[KillswitchScopes[r.Key]] = err
			if first == nil {
				first = err
			}
		}
	}
	return k, first
}

// add decodes one kill-switch option into k.
func (k *Killswitches) add(key, raw string) error {
	v, err := Decode(key, raw)
	if err != nil {
		return err
	}
	ids, strays, err := v.IDs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		k.Disabled[KillswitchScopes[key]][id] = true
	}
	if len(strays) > 0 {
		k.Strays[key] = strays
	}
	return nil
}

// ValueRow is one row of query.OptionValues (and of KillswitchStatement, which is it).
type ValueRow struct {
	Key           string     `db:"key"`
	Value         *string    `db:"value"`
	LastUpdated   *time.Time `db:"last_updated"`
	LastUpdatedBy *string    `db:"last_updated_by"`
}

// Raw is the stored value as text. A SQL NULL (the jsonb column's nullability is not known
// for every Sentry version) reads as JSON null: a list option holding it is an empty list,
// as the SQL that rewrites lists treats it (query.ShardListUpdate).
func (r ValueRow) Raw() string { return RawValue(r.Value) }

// RawValue is a stored option value as text, a SQL NULL as JSON null.
func RawValue(v *string) string {
	if v == nil {
		return "null"
	}
	return *v
}

// Updated is last_updated in UTC (zero for a NULL).
func (r ValueRow) Updated() time.Time {
	if r.LastUpdated == nil {
		return time.Time{}
	}
	return r.LastUpdated.UTC()
}

// ReadValues runs st (query.OptionValues or KillswitchStatement) and returns its typed rows;
// a database error comes back unclassified, for the caller to name.
func ReadValues(ctx context.Context, q query.Querier, st query.Statement) ([]ValueRow, error) {
	return query.All[ValueRow](ctx, q, st)
}

// NoTableError is a database with neither options table: not Sentry's (a misspelt --schema,
// the wrong --dsn). A command that reads kill switches or backfill gates fails with it
// rather than report Sentry's defaults (nothing disabled, every gate at 0) as the state.
type NoTableError struct {
	// Schema is the schema looked in ("" for the search_path).
	Schema string
}

func (e *NoTableError) Error() string {
	where := "the search_path"
	if e.Schema != "" {
		where = "schema " + e.Schema
	}
	return fmt.Sprintf("no %s or %s table in %s: this does not look like Sentry's database; check --dsn or --schema", query.OptionTable, query.ControlOptionTable, where)
}

// RequireTable returns a *NoTableError when sch, introspected in schema, holds neither
// options table.
func RequireTable(sch query.Schema, schema string) error {
	if sch.Table(query.OptionTable).Present || sch.Table(query.ControlOptionTable).Present {
		return nil
	}
	return &NoTableError{Schema: schema}
}
