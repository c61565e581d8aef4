package query

import (
	"fmt"
	"strings"
)

// Reschedule makes a shard due now and clears its backoff: every row gets the schedule of a
// fresh row (scheduled_for = THE_PAST, 2016-08-01), so Sentry's scheduler picks the shard at
// its next run and its next claim starts again from a 2 s delay.
func Reschedule(t Target, k ShardKey, wm int64, why Why) Statement {
	args := t.cellArgs()
	args["scope"] = Arg{Value: k.Scope.Value, Note: k.Scope.Name}
	args["shard"] = Arg{Value: k.ID}
	on := t.cellFragment()
	if wm > 0 {
		args["watermark"] = Arg{Value: wm, Note: "the highest id in the plan"}
		on = append(on, "watermark")
	}
	return why.Mark(sqlStatement("reschedule", []string{
		"Make the shard due now with a fresh backoff: rows get scheduled_for = THE_PAST (2016-08-01),",
		"as a new row has; Sentry's next claim then starts again from a 2 s delay."}, t.idents(), args, on...))
}

// Superseded lists, whole, the rows of a shard that a successful drain would delete without
// delivering: every row of a coalesce group below the group's newest id.
func Superseded(t Target, k ShardKey, wm int64, why Why) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	inner := b.whereClause("     ")
	b.where = nil
	b.shardPredicates(t, k, "o")
	b.and("o.category = n.category")
	b.and("o.object_identifier = n.object_identifier")
	b.and("o.id < n.newest_id")
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
 ORDER BY o.id`, t.From(), inner, archiveCell(t, "o"), b.whereClause(" "))
	return why.Mark(Statement{Name: "superseded", Doc: []string{
		"Rows a drain would delete undelivered: each coalesce group's rows below its newest id."}, Text: tidy(text), Args: b.args})
}

// archiveCell is the cell column as the archive reads it (NULL for a cell outbox).
func archiveCell(t Target, alias string) string {
	if t.Control() {
		return alias + "." + t.cellCol() + "::text"
	}
	return "NULL::text"
}

// SkipGroupRows lists, whole, the rows skip archives and deletes for a message: every row of
// its coalesce group (same shard, category and object). upTo, when above 0, bounds them to the
// group's newest id in the plan: rows added to the group since are left alone.
func SkipGroupRows(t Target, id, upTo int64, why Why) Statement {
	b := newBuilder()
	group := t.sameShard("o", "m", "     ") + "\n       AND o.category = m.category\n       AND o.object_identifier = m.object_identifier"
	idArg := b.arg("id", id, "the message to skip")
	if upTo > 0 {
		group += "\n       AND o.id <= " + b.arg("up_to", upTo, "the group's newest id in the plan")
	}
	text := fmt.Sprintf(`WITH m AS (
    SELECT o.*
      FROM %[1]s o
     WHERE o.id = %[2]s
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, %[3]s AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM %[1]s o
  JOIN m ON %[4]s
 ORDER BY o.id`, t.From(), idArg, archiveCell(t, "o"), group)
	return why.Mark(Statement{Name: "skip-group-rows", Doc: []string{
		"The rows skip archives, then deletes: the message's whole coalesce group."}, Text: tidy(text), Args: b.args})
}

// DeleteArchivedIDs deletes rows an archive has staged, by id, and returns the ids it
// deleted: the archive's commit marker names exactly those.
func DeleteArchivedIDs(t Target, ids []int64, why Why) Statement {
	return why.Mark(sqlStatement("delete-archived", []string{"Delete rows the archive has staged, by id; returns the ids deleted."},
		t.tableIdent(), Args{"ids": {Value: ids}}))
}

// DeleteSelected is the DELETE of the rows sel lists (its first column is the id), for a
// printed script: it cannot archive, so the printer comments it out (see CommentOut).
func DeleteSelected(t Target, sel Statement, why Why) Statement {
	text := fmt.Sprintf(`DELETE FROM %s d
 WHERE d.id IN (SELECT s.id FROM (
%s
 ) s)`, t.From(), sel.Text)
	return why.Mark(Statement{Name: sel.Name + "-delete", Doc: []string{"What outboxctl deletes after archiving the rows above."}, Text: text, Args: sel.Args})
}

// CommentOut turns printed SQL into comment lines: every line, and every piece of a line a
// literal's own line break or carriage return starts, begins with "-- ", so nothing in it runs.
func CommentOut(sql string) string {
	sql = strings.TrimRight(sql, "\n")
	lines := strings.FieldsFunc(sql, func(r rune) bool { return r == '\n' || r == '\r' })
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("-- " + l + "\n")
	}
	return b.String()
}
