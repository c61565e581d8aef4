package query

// The kill-switch statements, in sql/killswitch.sql.

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// ShardDepths answers "what waits behind these shards?": depth, coalesce groups, oldest
// message and next attempt of each listed shard of one scope, on the shard index.
func ShardDepths(t Target, scope Enum, ids []int64) Statement {
	args := t.cellArgs()
	args["scope"] = Arg{Value: scope.Value, Note: scope.Name}
	args["ids"] = Arg{Value: ids}
	return sqlStatement("shard-depths", []string{fmt.Sprintf("What waits in the listed %s shards of %s.", scope.Name, t.Describe())}, t.idents(), args, t.controlAndCell()...)
}

// KillswitchList is one kill-switch list as decoded: its options table, scope and ids.
type KillswitchList struct {
	OptionsTable string
	Scope        int
	IDs          []int64
}

// KillswitchShards answers "what waits behind every disabled shard?" in one statement, however
// many ids the lists hold: the (options table, scope, id) triples are unnested, each distinct
// shard is joined to every outbox in outboxes on the shard index, and a shard with no rows
// still gets one row (depth 0, silo NULL). The lists are passed decoded, since a value may
// be a pickle that SQL cannot read.
func KillswitchShards(outboxes []Target, lists []KillswitchList) Statement {
	var tables []string
	var scopes, ids []int64
	for _, l := range lists {
		for _, id := range l.IDs {
			tables, scopes, ids = append(tables, l.OptionsTable), append(scopes, int64(l.Scope)), append(ids, id)
		}
	}
	args := Args{"options_tables": {Value: tables}, "scopes": {Value: scopes}, "ids": {Value: ids}}
	branches := make([]sqltemplate.Part, 0, len(outboxes))
	var err error
	for i, t := range outboxes {
		var part Args
		var text sqltemplate.Part
		if text, part, err = numberedPart("killswitch-outbox", i, t.idents(), Args{"silo": {Value: string(t.Silo)}}, t.controlFragments()...); err != nil {
			break
		}
		branches = append(branches, text)
		for k, v := range part {
			args[k] = v
		}
	}
	if len(branches) == 0 && err == nil {
		// No outbox here: the lists alone, every shard at depth 0.
		var none sqltemplate.Part
		none, err = part("killswitch-no-outbox", nil, nil)
		branches = append(branches, none)
	}
	st := regionStatement("killswitch-shards", []string{
		"What waits behind every disabled shard, in one statement: the ids are those the",
		"kill-switch lists hold (decoded by outboxctl, which also reads pickled values).",
	}, nil, map[string]sqltemplate.Part{"outboxes": sqltemplate.Join("\n", branches)}, args)
	if err != nil {
		st.err = err
	}
	return st
}

// KillswitchShardRow is one row of KillswitchShards.
type KillswitchShardRow struct {
	OptionsTable    string     `db:"options_table"`
	ShardScope      int64      `db:"shard_scope"`
	ShardIdentifier int64      `db:"shard_identifier"`
	Silo            *string    `db:"silo"`
	RegionName      *string    `db:"region_name"`
	Depth           int64      `db:"depth"`
	CoalesceGroups  int64      `db:"coalesce_groups"`
	OldestMessage   *time.Time `db:"oldest_message"`
	NextAttempt     *time.Time `db:"next_attempt"`
}

// ShardDepthRow is one row of ShardDepths (killswitch check's "waiting" table). The control
// outbox adds its cell column (region_name or cell_name), which a plan's totals do not need.
type ShardDepthRow struct {
	RegionName      *string    `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string    `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardIdentifier int64      `db:"shard_identifier" json:"shard_identifier"`
	Depth           int64      `db:"depth" json:"depth"`
	CoalesceGroups  int64      `db:"coalesce_groups" json:"coalesce_groups"`
	OldestMessage   *time.Time `db:"oldest_message" json:"oldest_message"`
	NextAttempt     *time.Time `db:"next_attempt" json:"next_attempt"`
}
