package query

import (
	"fmt"
	"strings"
	"time"
)

// ShardDepths answers "what waits behind these shards?": depth, coalesce groups, oldest
// message and next attempt of each listed shard of one scope, on the shard index.
func ShardDepths(t Target, scope Enum, ids []int64) Statement {
	b := newBuilder()
	b.cellFilter(t, "o")
	b.and("o.shard_scope = " + b.arg("scope", scope.Value, scope.Name))
	b.and("o.shard_identifier = ANY (" + b.arg("ids", ids, "") + "::bigint[])")
	group := "o.shard_identifier"
	if t.Control() {
		group = "o." + t.cellCol() + ", o.shard_identifier"
	}
	text := fmt.Sprintf(`SELECT %[1]so.shard_identifier, count(*) AS depth,
       count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
       min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
  FROM %[2]s o
%[3]s
 GROUP BY %[4]s
 ORDER BY %[4]s`, selectCell(t, "o"), t.From(), b.whereClause(" "), group)
	return Statement{
		Name: "shard-depths",
		Doc:  []string{fmt.Sprintf("What waits in the listed %s shards of %s.", scope.Name, t.Describe())},
		Text: tidy(text), Args: b.args,
	}
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
	b := newBuilder()
	var tables []string
	var scopes, ids []int64
	for _, l := range lists {
		for _, id := range l.IDs {
			tables, scopes, ids = append(tables, l.OptionsTable), append(scopes, int64(l.Scope)), append(ids, id)
		}
	}
	tablesArg, scopesArg, idsArg := b.arg("options_tables", tables, ""), b.arg("scopes", scopes, ""), b.arg("ids", ids, "")
	branches := make([]string, 0, len(outboxes))
	for _, t := range outboxes {
		cell, group := "NULL::text", "o.shard_scope, o.shard_identifier"
		if t.Control() {
			cell, group = "o."+t.cellCol()+"::text", "o."+t.cellCol()+", "+group
		}
		branches = append(branches, fmt.Sprintf(`SELECT '%s'::text AS silo, %s AS cell, o.shard_scope, o.shard_identifier,
         count(*) AS depth, count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
         min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
    FROM s
    JOIN %s o ON o.shard_scope = s.shard_scope AND o.shard_identifier = s.shard_identifier
   GROUP BY %s`, t.Silo, cell, t.From(), group))
	}
	if len(branches) == 0 {
		// No outbox here: the lists alone, every shard at depth 0.
		branches = append(branches, `SELECT NULL::text AS silo, NULL::text AS cell, s.shard_scope, s.shard_identifier,
         0::bigint AS depth, 0::bigint AS coalesce_groups,
         NULL::timestamptz AS oldest_message, NULL::timestamptz AS next_attempt
    FROM s
   WHERE false`)
	}
	text := fmt.Sprintf(`WITH k AS (
  SELECT k.options_table, k.shard_scope, k.shard_identifier
    FROM unnest(%s::text[], %s::int[], %s::bigint[]) AS k(options_table, shard_scope, shard_identifier)
), s AS (
  SELECT DISTINCT k.shard_scope, k.shard_identifier FROM k
), d AS (
  %s
)
SELECT k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell AS region_name,
       coalesce(d.depth, 0) AS depth, coalesce(d.coalesce_groups, 0) AS coalesce_groups,
       d.oldest_message, d.next_attempt
  FROM k
  LEFT JOIN d ON d.shard_scope = k.shard_scope AND d.shard_identifier = k.shard_identifier
 ORDER BY k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell`,
		tablesArg, scopesArg, idsArg, strings.Join(branches, "\n  UNION ALL\n  "))
	return Statement{
		Name: "killswitch-shards",
		Doc: []string{
			"What waits behind every disabled shard, in one statement: the ids are those the",
			"kill-switch lists hold (decoded by outboxctl, which also reads pickled values).",
		},
		Text: tidy(text), Args: b.args,
	}
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

// ShardDepthRow is one row of ShardDepths. The control outbox adds its cell column
// (region_name or cell_name), which a plan's totals do not need: scan it laxly.
type ShardDepthRow struct {
	ShardIdentifier int64      `db:"shard_identifier"`
	Depth           int64      `db:"depth"`
	CoalesceGroups  int64      `db:"coalesce_groups"`
	OldestMessage   *time.Time `db:"oldest_message"`
	NextAttempt     *time.Time `db:"next_attempt"`
}
