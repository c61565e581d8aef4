package options

import (
	"context"

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

// OptionTableFor picks the options table whose values the workers of a silo read: a cell's
// Option, the control silo's ControlOption (OptionsStore.model_cls). A database that has only
// the other one (a monolith, a restored dump) falls back to it.
func OptionTableFor(silo query.Silo, sch query.Schema) string {
	first, second := query.OptionTable, query.ControlOptionTable
	if silo == query.SiloControl {
		first, second = second, first
	}
	for _, t := range []string{first, second} {
		if sch.Table(t).Present {
			return t
		}
	}
	return ""
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
	table := OptionTableFor(silo, sch)
	k := &Killswitches{Table: table, Disabled: map[int]map[int64]bool{0: {}, 1: {}}, Strays: map[string][]string{}, Failed: map[int]error{}}
	if table == "" {
		return k, nil
	}
	res, err := query.Run(ctx, q, KillswitchStatement(schema, table))
	if err != nil {
		return nil, err
	}
	var first error
	for _, r := range res.Rows {
		key, _ := r[0].(string)
		raw, _ := r[1].(string)
		if err := k.add(key, raw); err != nil {
			k.Failed[KillswitchScopes[key]] = err
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
