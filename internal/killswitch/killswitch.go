// Package killswitch reads and changes Sentry's shard kill switches (the
// hybrid_cloud.authentication.disabled_*_shards options) and backfill gates
// (outbox_replication.<table>.replication_version): the lists in every options table, what
// waits behind each disabled shard, and the read-modify-write of a change under the row
// lock, planned first from a read-only look. Decoding values is internal/options' job.
package killswitch

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// ParseIDs reads shard ids: non-negative integers, returned sorted without repeats. One
// that is not is the operator's to fix (exit 2).
func ParseIDs(args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, s := range args {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 {
			return nil, &exitcode.Outcome{Means: exitcode.Usage, Msg: fmt.Sprintf("invalid shard id %q: want a non-negative integer", s)}
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// KeyFor is the kill-switch option of a scope value, or "" when Sentry reads none for it
// (should_skip_shard reads one only for ORGANIZATION_SCOPE and USER_SCOPE).
func KeyFor(scope int) string {
	for key, v := range options.KillswitchScopes {
		if v == scope {
			return key
		}
	}
	return ""
}

// ApplyChange adds or removes ids from a sorted list, returning the new list, the ids that
// changed it and the ids that were already in (or not in) it.
func ApplyChange(list, ids []int64, add bool) (after, changed, unchanged []int64) {
	in := make(map[int64]bool, len(list))
	for _, id := range list {
		in[id] = true
	}
	for _, id := range ids {
		switch {
		case add && !in[id]:
			in[id] = true
			changed = append(changed, id)
		case !add && in[id]:
			delete(in, id)
			changed = append(changed, id)
		default:
			unchanged = append(unchanged, id)
		}
	}
	after = make([]int64, 0, len(in))
	for id := range in {
		after = append(after, id)
	}
	slices.Sort(after)
	return after, changed, unchanged
}

// List is one options table's kill-switch list of one scope, as read.
type List struct {
	Table string
	Key   string
	Scope int
	IDs   []int64
	// Err is why the list could not be decoded (its shards' state is unknown).
	Err error
}

// ReadLists reads the kill-switch lists of every options table present, whether or not
// Sentry reads it here (a list Sentry ignores is shown and warned about, not hidden).
func ReadLists(ctx context.Context, q query.Querier, schema string, sch query.Schema) ([]List, error) {
	var out []List
	for _, ot := range []string{query.OptionTable, query.ControlOptionTable} {
		if !sch.Table(ot).Present {
			continue
		}
		ks, err := options.ReadKillswitchesFrom(ctx, q, schema, ot)
		if ks == nil {
			return nil, db.Classify(err, "killswitch-options")
		}
		for _, key := range []string{options.DisabledOrgShards, options.DisabledUserShards} {
			l := List{Table: ot, Key: key, Scope: options.KillswitchScopes[key], Err: ks.Failed[options.KillswitchScopes[key]]}
			for id := range ks.Disabled[l.Scope] {
				l.IDs = append(l.IDs, id)
			}
			slices.Sort(l.IDs)
			out = append(out, l)
		}
	}
	return out, nil
}

// PresentOutboxes are the standard outbox tables of the database, adapted to its columns
// (both, when SQL is printed without a catalog).
func PresentOutboxes(schema string, sch query.Schema) []query.Target {
	var out []query.Target
	for _, silo := range []query.Silo{query.SiloCell, query.SiloControl} {
		t := sch.Adapt(query.Target{Silo: silo, Schema: schema})
		if sch.Tables == nil || sch.Table(t.TableName()).Present {
			out = append(out, t)
		}
	}
	return out
}

// Waiting reads what waits behind every listed shard, in one statement.
func Waiting(ctx context.Context, q query.Querier, schema string, sch query.Schema, lists []List) ([]query.KillswitchShardRow, error) {
	qlists := make([]query.KillswitchList, 0, len(lists))
	for _, l := range lists {
		qlists = append(qlists, query.KillswitchList{OptionsTable: l.Table, Scope: l.Scope, IDs: l.IDs})
	}
	st := query.KillswitchShards(PresentOutboxes(schema, sch), qlists)
	rows, err := query.All[query.KillswitchShardRow](ctx, q, st)
	if err != nil {
		return nil, db.Classify(err, st.Name)
	}
	return rows, nil
}

// HeldGate is a table whose backfill is gated (backfill.GateOf) by the option Sentry reads
// for its silo here.
type HeldGate struct {
	Table string // the options table
	Key   string
	Value int64
	Coded int64
	// Set is false when the option is unset: Sentry's default 0 holds the gate.
	Set bool
}

// Gates reads each table's replication_version option from the options table Sentry reads
// for its silo (status.ReadOptions, as backfill status and the doctor do) and returns the
// tables backfill.GateOf calls gated, by name. A malformed value is an error, returned
// after the gates of the other tables.
func Gates(ctx context.Context, q query.Querier, schema string, sch query.Schema, tables []backfill.Table) ([]HeldGate, error) {
	read, bad, err := status.ReadOptions(ctx, q, schema, sch, tables)
	if err != nil {
		return nil, err
	}
	var out []HeldGate
	for _, t := range tables {
		ot := options.OptionTableFor(query.Silo(t.Silo), sch)
		if ot == "" {
			continue
		}
		g := backfill.GateOf(backfill.Input{Table: t, Option: read[t.Name].Value})
		if g.Held {
			out = append(out, HeldGate{Table: ot, Key: backfill.OptionKey(t.Name), Value: g.Value, Coded: g.Coded, Set: !g.Default})
		}
	}
	return out, bad
}

// loadSchema introspects tables and applies the deployment, as every command does, so
// readers and writers agree on which options table Sentry reads.
func loadSchema(ctx context.Context, tx pgx.Tx, schema string, dep query.Deployment, tables []string) (query.Schema, error) {
	sch, err := outbox.LoadCatalog(ctx, tx, schema, tables)
	if err != nil {
		return sch, err
	}
	return sch.WithDeployment(dep), nil
}

// readOption reads one option's stored text, or ok false when the row is missing.
func readOption(ctx context.Context, tx pgx.Tx, schema, table, key string) (raw string, ok bool, err error) {
	rows, err := options.ReadValues(ctx, tx, query.OptionValues(schema, table, []string{key}))
	if err != nil {
		return "", false, db.Classify(err, "option-values")
	}
	if len(rows) == 0 {
		return "", false, nil
	}
	return rows[0].Raw(), true, nil
}
