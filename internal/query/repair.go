package query

import (
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// RescheduleMode is which rows of a shard a reschedule rewrites (the summaries' "mode").
type RescheduleMode string

// The reschedule modes: every row (the default), or only the lowest id of each coalesce
// group (--group-heads: a tenth of the writes at 12 rows a group; Sentry's claim reads the shard
// the same, its scheduler's id windows do not: docs/runbooks.md).
const (
	RescheduleAllRows    RescheduleMode = "all-rows"
	RescheduleGroupHeads RescheduleMode = "group-heads"
)

// on is the SQL fragment the mode turns on, appended to on.
func (m RescheduleMode) on(on []string) []string {
	if m == RescheduleGroupHeads {
		return append(on, "group_heads")
	}
	return on
}

// Reschedule makes a shard due now and clears its backoff: every row (mode
// RescheduleGroupHeads: each coalesce group's lowest row) gets the schedule of a fresh row
// (scheduled_for = THE_PAST, 2016-08-01), so Sentry's scheduler picks the shard at its next
// run and its next claim starts again from a 2 s delay.
func Reschedule(t Target, k ShardKey, wm int64, mode RescheduleMode, why Why) Statement {
	args, on := rescheduleArgs(t, k, wm)
	doc := []string{"Make the shard due now with a fresh backoff: rows get scheduled_for = THE_PAST (2016-08-01),",
		"as a new row has; Sentry's next claim then starts again from a 2 s delay."}
	if mode == RescheduleGroupHeads {
		doc = []string{"Make the shard due now with a fresh backoff, group heads only (--group-heads): the lowest row of",
			"each coalesce group gets scheduled_for = THE_PAST (2016-08-01); Sentry's next claim starts from a 2 s delay."}
	}
	return why.Mark(sqlStatement("reschedule", doc, t.idents(), args, mode.on(on)...))
}

// Superseded lists, whole, the rows of a shard that a successful drain would delete without
// delivering: every row of a coalesce group below the group's newest id.
func Superseded(t Target, k ShardKey, wm int64, why Why) Statement {
	args, on := t.shardArgs(k)
	if wm > 0 {
		args["watermark"] = Arg{Value: wm, Note: "the highest id in the plan"}
		on = append(on, "watermark")
	}
	return why.Mark(sqlStatement("superseded", []string{
		"Rows a drain would delete undelivered: each coalesce group's rows below its newest id."}, t.idents(), args, on...))
}

// SkipGroupRows lists, whole, the rows skip archives and deletes for a message: every row of
// its coalesce group (same shard, category and object). upTo, when above 0, bounds them to the
// group's newest id in the plan: rows added to the group since are left alone.
func SkipGroupRows(t Target, id, upTo int64, why Why) Statement {
	args := Args{"id": {Value: id, Note: "the message to skip"}}
	on := t.controlFragments()
	if upTo > 0 {
		args["up_to"] = Arg{Value: upTo, Note: "the group's newest id in the plan"}
		on = append(on, "up_to")
	}
	return why.Mark(sqlStatement("skip-group-rows", []string{
		"The rows skip archives, then deletes: the message's whole coalesce group."}, t.idents(), args, on...))
}

// SkipTriedBound is, for a head message, its group's newest row written by the head's last
// attempt and the rows up to it (TriedBoundRow).
func SkipTriedBound(t Target, id int64) Statement {
	return sqlStatement("skip-tried-bound", []string{
		"The rows of the message's coalesce group that its shard's last attempt could have sent: written by then."},
		t.idents(), Args{"id": {Value: id, Note: "the head message"}}, t.controlFragments()...)
}

// TriedBoundRow is SkipTriedBound's row.
type TriedBoundRow struct {
	NewestTriedID *int64 `db:"newest_tried_id"`
	TriedRows     int64  `db:"tried_rows"`
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
	region, err := sel.region()
	st := regionStatement("delete-selected", []string{"What outboxctl deletes after archiving the rows above."},
		map[string]string{"table": t.From()}, map[string]sqltemplate.Part{"selected": region}, sel.Args)
	if err != nil && st.err == nil {
		st.err = err
	}
	// The printed header names the statement it deletes the rows of.
	st.Name = sel.Name + "-delete"
	if sel.err != nil {
		st.err = sel.err
	}
	return why.Mark(st)
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

// SettleDeleted lists which of ids, deleted by a transaction whose COMMIT got no answer, are
// still in t: none, it committed; any, it did not. It waits for the rows' locks, so a
// COMMIT the server is still running is waited for, never read as not committed.
func SettleDeleted(t Target, ids []int64) Statement {
	return sqlStatement("settle-deleted", []string{"Which deleted ids are still there, after a COMMIT that got no answer."},
		t.tableIdent(), Args{"ids": {Value: ids}})
}

// SettleRescheduled counts the rows of shard k (up to wm when above 0) that a reschedule in
// mode rewrote and those of them not carrying its schedule, after its COMMIT got no answer.
func SettleRescheduled(t Target, k ShardKey, wm int64, mode RescheduleMode) Statement {
	args, on := rescheduleArgs(t, k, wm)
	return sqlStatement("settle-reschedule", []string{"Whether a reschedule whose COMMIT got no answer committed."}, t.idents(), args, mode.on(on)...)
}

// SettleRescheduledRow is settle-reschedule's row.
type SettleRescheduledRow struct {
	Rows           int64 `db:"rows"`
	NotRescheduled int64 `db:"not_rescheduled"`
}

// rescheduleArgs are reschedule's and settle-reschedule's values and fragments: the shard,
// the cell filter, and the watermark when above 0.
func rescheduleArgs(t Target, k ShardKey, wm int64) (Args, []string) {
	args := t.cellArgs()
	args["scope"] = Arg{Value: k.Scope.Value, Note: k.Scope.Name}
	args["shard"] = Arg{Value: k.ID}
	on := t.cellFragment()
	if wm > 0 {
		args["watermark"] = Arg{Value: wm, Note: "the highest id in the plan"}
		on = append(on, "watermark")
	}
	return args, on
}

// Cursor is sel behind a cursor of the transaction, named name, that Fetch reads a chunk at a
// time: a repair of a million rows (compact of a hot shard) evaluates its selection once, as
// one statement did, and archives and deletes it chunk by chunk, so its progress moves as the
// server answers instead of after one read of every row.
func Cursor(name string, sel Statement) Statement {
	st := sel
	st.Name = sel.Name + "-cursor"
	st.Doc = append([]string{"The rows below, read a chunk at a time (FETCH) in the same transaction."}, sel.Doc...)
	st.Text = "DECLARE " + name + " NO SCROLL CURSOR FOR\n" + strings.TrimRight(strings.TrimSpace(sel.Text), ";")
	return st
}

// Fetch reads the next n rows of the transaction's cursor name (Cursor).
func Fetch(name string, n int) Statement {
	return Statement{Name: "fetch", Doc: []string{"The next rows of the cursor."}, Text: fmt.Sprintf("FETCH FORWARD %d FROM %s", n, name), Args: Args{}}
}
