package query

import "fmt"

// Reschedule makes a shard due now and clears its backoff: every row gets the schedule of a
// fresh row (scheduled_for = THE_PAST, 2016-08-01), so Sentry's scheduler picks the shard at
// its next run and its next claim starts again from a 2 s delay.
func Reschedule(t Target, k ShardKey, wm int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	text := fmt.Sprintf(`UPDATE %s o
   SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
       scheduled_from = now()
%s`, t.From(), b.whereClause(" "))
	return Statement{Name: "reschedule", Doc: []string{
		"Make the shard due now with a fresh backoff: rows get scheduled_for = THE_PAST (2016-08-01),",
		"as a new row has; Sentry's next claim then starts again from a 2 s delay."}, Text: tidy(text), Args: b.args}
}

// Superseded lists, whole, the rows of a shard that a successful drain would delete without
// delivering: every row of a coalesce group below the group's newest id.
func Superseded(t Target, k ShardKey, wm int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	inner := b.whereClause("     ")
	b.where = nil
	b.shardPredicates(t, k, "o")
	b.and("o.category = n.category")
	b.and("o.object_identifier = n.object_identifier")
	b.and("o.id < n.newest_id")
	cell := "NULL::text"
	if t.Control() {
		cell = "o." + t.cellCol() + "::text"
	}
	text := fmt.Sprintf(`WITH newest AS (
    SELECT o.category, o.object_identifier, max(o.id) AS newest_id
      FROM %[1]s o
%[2]s
     GROUP BY o.category, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, %[3]s AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[1]s o
  JOIN newest n ON true
%[4]s
 ORDER BY o.id`, t.From(), inner, cell, b.whereClause(" "))
	return Statement{Name: "superseded", Doc: []string{
		"Rows a drain would delete undelivered: each coalesce group's rows below its newest id."}, Text: tidy(text), Args: b.args}
}
