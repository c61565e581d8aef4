package query

import (
	"fmt"
	"strings"
	"time"
)

// The drain statements (reference §3.4–3.7). They take the shard key like the diagnostics
// and, where a drain is bounded, a watermark: rows above it are never touched.

func (b *builder) watermark(alias string, wm int64) {
	if wm > 0 {
		b.and(fmt.Sprintf("%s.id <= %s", alias, b.arg("watermark", wm, "the highest id in the plan")))
	}
}

// DrainHead locks the shard's lowest row without waiting (Sentry's task path: SELECT … ORDER
// BY id LIMIT 1 FOR UPDATE NOWAIT). SQLSTATE 55P03 means another drainer holds the shard.
func DrainHead(t Target, k ShardKey, wm int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	text := fmt.Sprintf(`SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM %s o
%s
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT`, t.From(), b.whereClause(" "))
	return Statement{Name: "drain-head", Doc: []string{"Lock the shard's lowest row without waiting (claims the shard)."}, Text: tidy(text), Args: b.args}
}

// DrainReschedule pushes the whole shard's schedule forward before processing (Sentry's
// "proof of failure by remaining"): next = now + min(2 × last delay, 1 h), where the last
// delay is the lowest row's scheduled_for − scheduled_from, at least one second.
func DrainReschedule(t Target, k ShardKey, headFrom, headFor time.Time) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	next := fmt.Sprintf("now() + least(greatest(%s::timestamptz - %s::timestamptz, interval '1 second') * 2, interval '1 hour')",
		b.arg("head_for", headFor, ""), b.arg("head_from", headFrom, ""))
	text := fmt.Sprintf(`WITH pushed AS (
    UPDATE %s o
       SET scheduled_for = %s,
           scheduled_from = now()
%s
    RETURNING 1
)
SELECT %s AS next_attempt, (SELECT count(*) FROM pushed) AS rows`, t.From(), next, b.whereClause("     "), next)
	return Statement{Name: "drain-reschedule", Doc: []string{"Apply the backoff to every row of the shard before processing it."}, Text: tidy(text), Args: b.args}
}

// DrainNewest reads the newest row of a coalesce group (its payload is the one delivered).
func DrainNewest(t Target, k ShardKey, category int, object int64, wm int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = " + b.arg("category", category, ""))
	b.and("o.object_identifier = " + b.arg("object", object, ""))
	b.watermark("o", wm)
	text := fmt.Sprintf(`SELECT o.id, o.category, o.object_identifier, o.payload::text AS payload, o.date_added, o.scheduled_for
  FROM %s o
%s
 ORDER BY o.id DESC
 LIMIT 1`, t.From(), b.whereClause(" "))
	return Statement{Name: "drain-newest", Doc: []string{"The newest row of the coalesce group: the one delivered."}, Text: tidy(text), Args: b.args}
}

// DrainDuplicateSlice is Sentry's duplicate scan: 50 ids of the group, in no order; the
// caller keeps those below the delivered id.
func DrainDuplicateSlice(t Target, k ShardKey, category int, object int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = " + b.arg("category", category, ""))
	b.and("o.object_identifier = " + b.arg("object", object, ""))
	text := fmt.Sprintf(`SELECT o.id
  FROM %s o
%s
 LIMIT 50`, t.From(), b.whereClause(" "))
	return Statement{Name: "drain-duplicates", Doc: []string{"Up to 50 ids of the coalesce group (Sentry: no ORDER BY)."}, Text: tidy(text), Args: b.args}
}

// DrainDeleteIDs deletes rows by id.
func DrainDeleteIDs(t Target, ids []int64) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`DELETE FROM %s o
 WHERE o.id = ANY (%s::bigint[])`, t.From(), b.arg("ids", ids, ""))
	return Statement{Name: "drain-delete", Doc: []string{"Delete delivered or superseded rows by id."}, Text: tidy(text), Args: b.args}
}

// DrainGroups returns the next coalesce groups to deliver, in the order Sentry reaches them
// (by each group's lowest id), each with its newest row. The groups come from the lowest ids
// of the shard: a group's first appearance there is its global lowest id, so the order is
// exact without grouping the whole shard. Their newest rows come mostly from one backward
// scan of the shard's newest ids: a group with any row among the newest has its newest row
// there. Only the groups not found there are looked up one by one.
//
// after skips the ids below the last group a previous batch delivered: every row below that
// group's lowest id belonged to a group already delivered, and starting above it spares the
// scan the index entries those deletes just left dead.
func DrainGroups(t Target, k ShardKey, wm int64, limit int, after int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	if after > 0 {
		b.and("o.id > " + b.arg("after", after, "below: groups already delivered"))
	}
	pageWhere := b.whereClause("         ")
	b.where = nil
	b.shardPredicates(t, k, "r")
	b.watermark("r", wm)
	recentWhere := b.whereClause("             ")
	b.where = nil
	b.shardPredicates(t, k, "x")
	b.and("x.category = g.category")
	b.and("x.object_identifier = g.object_identifier")
	b.and("rc.id IS NULL")
	b.watermark("x", wm)
	text := fmt.Sprintf(`WITH page AS (
    SELECT o.id, o.category, o.object_identifier
      FROM %[1]s o
%[2]s
     ORDER BY o.id
     LIMIT %[3]s
),
g AS (
    SELECT p.category, p.object_identifier, min(p.id) AS first_id
      FROM page p
     GROUP BY p.category, p.object_identifier
     ORDER BY first_id
     LIMIT %[4]s
),
recent AS (
    SELECT DISTINCT ON (r.category, r.object_identifier) r.*
      FROM (SELECT r.id, r.category, r.object_identifier, r.payload::text AS payload, r.date_added, r.scheduled_for
              FROM %[1]s r
%[5]s
             ORDER BY r.id DESC
             LIMIT %[3]s) r
     ORDER BY r.category, r.object_identifier, r.id DESC
)
SELECT coalesce(rc.id, n.id) AS id, g.category, g.object_identifier,
       CASE WHEN rc.id IS NOT NULL THEN rc.payload ELSE n.payload END AS payload,
       coalesce(rc.date_added, n.date_added) AS date_added,
       coalesce(rc.scheduled_for, n.scheduled_for) AS scheduled_for, g.first_id
  FROM g
  LEFT JOIN recent rc ON rc.category = g.category AND rc.object_identifier = g.object_identifier
  LEFT JOIN LATERAL (
    -- Only for a group with no row among the newest ids. "x.id + 0" keeps the planner on
    -- the (…, category, object_identifier) index (the group's rows, then a top-1) rather
    -- than a backward primary-key walk through every newer row.
    SELECT x.id, x.payload::text AS payload, x.date_added, x.scheduled_for
      FROM %[1]s x
%[6]s
     ORDER BY x.id + 0 DESC
     LIMIT 1
  ) n ON true
 ORDER BY g.first_id`, t.From(), pageWhere, b.arg("scan", limit*10, ""), b.arg("limit", limit, ""), recentWhere, b.whereClause("     "))
	return Statement{Name: "drain-groups", Doc: []string{"The next coalesce groups in delivery order, each with its newest row."}, Text: tidy(text), Args: b.args}
}

// DrainDeleteGroups deletes, in one statement, every row of the delivered groups up to the
// delivered id (rows inserted into a group after it was read survive).
func DrainDeleteGroups(t Target, k ShardKey, categories, objects, newest []int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = g.category")
	b.and("o.object_identifier = g.object_identifier")
	b.and("o.id <= g.newest_id")
	text := fmt.Sprintf(`DELETE FROM %s o
 USING unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS g(category, object_identifier, newest_id)
%s`, t.From(), b.arg("categories", categories, ""), b.arg("objects", objects, ""), b.arg("newest", newest, ""), b.whereClause(" "))
	return Statement{Name: "drain-delete-groups", Doc: []string{"Delete the delivered groups' rows up to each delivered id."}, Text: tidy(text), Args: b.args}
}

// DrainArchiveRows reads, whole, the rows of the given groups up to each id (below it when
// below is set), to archive them before they are deleted without delivery.
func DrainArchiveRows(t Target, k ShardKey, categories, objects, upTo []int64, below bool) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = g.category")
	b.and("o.object_identifier = g.object_identifier")
	if below {
		b.and("o.id < g.up_to")
	} else {
		b.and("o.id <= g.up_to")
	}
	cell := "NULL::text"
	if t.Control() {
		cell = "o." + t.cellCol() + "::text"
	}
	text := fmt.Sprintf(`SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, %s AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM %s o
  JOIN unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS g(category, object_identifier, up_to) ON true
%s
 ORDER BY o.id`, cell, t.From(), b.arg("categories", categories, ""), b.arg("objects", objects, ""), b.arg("up_to", upTo, ""), b.whereClause(" "))
	return Statement{Name: "drain-archive-rows", Doc: []string{"The rows about to be deleted without delivery, whole, for the archive."}, Text: tidy(text), Args: b.args}
}

// ShardMaxID reads the shard's highest id: the watermark a drain's plan is bounded by.
func ShardMaxID(t Target, k ShardKey) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	text := fmt.Sprintf(`SELECT o.id AS max_id
  FROM %s o
%s
 ORDER BY o.id DESC
 LIMIT 1`, t.From(), b.whereClause(" "))
	return Statement{Name: "shard-max-id", Doc: []string{"The shard's highest id: the drain never touches rows above it (unless --follow)."}, Text: tidy(text), Args: b.args}
}

// DrainGuard is a psql script's first statements: stop at the first error, and refuse to
// run inside an explicit transaction block (there, statement_timestamp() differs from
// transaction_timestamp(); in psql's autocommit each statement is its own transaction).
const DrainGuard = `\set ON_ERROR_STOP on
DO $guard$
BEGIN
  IF statement_timestamp() <> transaction_timestamp() THEN
    RAISE EXCEPTION 'outboxctl: run this drain script outside a transaction block (no BEGIN before it): it commits each message on its own';
  END IF;
END
$guard$;
`

// DrainScript is one drain iteration for a DBA to run in psql: lock the shard's lowest row
// (NOWAIT), read the newest row of its coalesce group (deliver its payload by hand at the
// marked step), delete the group up to it, commit. psql's \gset carries values between
// statements.
func DrainScript(t Target, k ShardKey, wm int64) (string, error) {
	head, err := DrainHead(t, k, wm).Render()
	if err != nil {
		return "", err
	}
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = :head_category")
	b.and("o.object_identifier = :head_object_identifier")
	b.watermark("o", wm)
	newest := Statement{Name: "drain-newest", Doc: []string{"The newest row of the head's coalesce group: deliver this payload."},
		Text: tidy(fmt.Sprintf(`SELECT o.id AS newest_id, o.payload::text AS payload
  FROM %s o
%s
 ORDER BY o.id DESC
 LIMIT 1`, t.From(), b.whereClause(" "))), Args: b.args}
	newestSQL, err := newest.Render()
	if err != nil {
		return "", err
	}
	b = newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = :head_category")
	b.and("o.object_identifier = :head_object_identifier")
	b.and("o.id <= :newest_id")
	del := Statement{Name: "drain-delete-group", Doc: []string{"After a successful delivery: delete the group up to the delivered row."},
		Text: tidy(fmt.Sprintf(`DELETE FROM %s o
%s`, t.From(), b.whereClause(" "))), Args: b.args}
	delSQL, err := del.Render()
	if err != nil {
		return "", err
	}
	gset := func(sql, prefix string) string {
		return strings.TrimSuffix(strings.TrimRight(sql, "\n"), ";") + " \\gset " + prefix + "\n"
	}
	var sb strings.Builder
	sb.WriteString(DrainGuard)
	sb.WriteString("\nBEGIN;\n\n")
	sb.WriteString(gset(head, "head_"))
	sb.WriteString("\n")
	sb.WriteString(gset(newestSQL, ""))
	sb.WriteString("\n-- Deliver :'payload' now (the newest row of the group). If that fails: ROLLBACK; and stop here.\n\\echo payload to deliver: :'payload'\n\n")
	sb.WriteString(delSQL)
	sb.WriteString("\nCOMMIT;\n")
	return sb.String(), nil
}

// CoalescedCap bounds the ids a handler document lists per group (the count is exact).
const CoalescedCap = 100

// DrainCoalesced counts, per group, the rows waiting in it (an index-only count on the
// (…, category, object_identifier) index) and, with ids, lists its first ids up to each
// group's delivered id (which reads every row: opt-in, --coalesced-ids).
func DrainCoalesced(t Target, k ShardKey, categories, objects, upTo []int64, ids bool) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = g.category")
	b.and("o.object_identifier = g.object_identifier")
	countWhere := b.whereClause("          ")
	idsCol := "NULL::bigint[]"
	if ids {
		b.and("o.id <= g.up_to")
		idsCol = fmt.Sprintf(`ARRAY(SELECT o.id FROM %s o
%s
                ORDER BY o.id LIMIT %s)`, t.From(), b.whereClause("               "), b.arg("cap", CoalescedCap, ""))
	}
	text := fmt.Sprintf(`SELECT g.category, g.object_identifier,
       (SELECT count(*) FROM %s o
%s) AS coalesced_count,
       %s AS coalesced_ids
  FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS g(category, object_identifier, up_to)`,
		t.From(), countWhere, idsCol, b.arg("categories", categories, ""), b.arg("objects", objects, ""), b.arg("up_to", upTo, ""))
	return Statement{Name: "drain-coalesced", Doc: []string{"How many rows each delivery stands for (and, opt-in, their first ids)."}, Text: tidy(text), Args: b.args}
}
