package query

import "fmt"

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
