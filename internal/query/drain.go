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

func (b *builder) after(alias string, after int64) {
	if after > 0 {
		b.and(fmt.Sprintf("%s.id > %s", alias, b.arg("after", after, "below: groups already delivered")))
	}
}

// DrainHead locks the shard's lowest row without waiting (Sentry's task path: SELECT … ORDER
// BY id LIMIT 1 FOR UPDATE NOWAIT). SQLSTATE 55P03 means another drainer holds the shard.
//
// after is a hint, never a bound on what is drained: every row at or below it is known to
// belong to a group already delivered, so the index scan can start above the entries that
// those deletes left dead. A drain confirms emptiness without it.
func DrainHead(t Target, k ShardKey, wm, after int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	b.after("o", after)
	text := fmt.Sprintf(`SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM %s o
%s
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT`, t.From(), b.whereClause(" "))
	return Statement{Name: "drain-head", Doc: []string{"Lock the shard's lowest row without waiting (claims the shard)."}, Text: tidy(text), Args: b.args}
}

// DrainClaim is the claim of Sentry's prepare_next_from_shard: push the whole shard's
// schedule forward before processing ("proof of failure by remaining"): next = now +
// min(2 × last delay, 1 h), where the last delay is the lowest row's scheduled_for −
// scheduled_from, at least one second. It returns every row's schedule from before the claim,
// so that a drain whose handler is unreachable can put the shard back exactly as it was, and
// an archive can keep the rows as they were before outboxctl touched them.
func DrainClaim(t Target, k ShardKey, headFrom, headFor time.Time) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	next := fmt.Sprintf("now() + least(greatest(%s::timestamptz - %s::timestamptz, interval '1 second') * 2, interval '1 hour')",
		b.arg("head_for", headFor, ""), b.arg("head_from", headFrom, ""))
	where := b.whereClause("     ")
	// Every part of one statement reads the same snapshot: "old" sees the schedules as they
	// were before "pushed" changes them. The rows come back grouped by schedule (a shard
	// mostly carries its last claim's), so a claim of 100,000 rows returns a few lines.
	text := fmt.Sprintf(`WITH old AS MATERIALIZED (
    SELECT o.id, o.scheduled_from, o.scheduled_for
      FROM %[1]s o
%[2]s
),
pushed AS (
    UPDATE %[1]s o
       SET scheduled_for = %[3]s,
           scheduled_from = now()
%[2]s
    RETURNING o.id, o.scheduled_from AS claimed_from, o.scheduled_for AS claimed_for
)
SELECT old.scheduled_from, old.scheduled_for, p.claimed_from, p.claimed_for, array_agg(old.id ORDER BY old.id) AS ids
  FROM pushed p
  JOIN old ON old.id = p.id
 GROUP BY old.scheduled_from, old.scheduled_for, p.claimed_from, p.claimed_for`, t.From(), where, next)
	return Statement{Name: "drain-claim", Doc: []string{"Apply the backoff to every row of the shard before processing it; return the schedules it replaced."}, Text: tidy(text), Args: b.args}
}

// DrainUnclaim puts back the schedules a claim replaced, on the rows that still carry the
// claim's values (a row that was drained, re-claimed or rescheduled meanwhile is left alone).
// Times travel as microseconds since the epoch: exact, and one integer array per column.
func DrainUnclaim(t Target, k ShardKey, ids, fromMicros, forMicros []int64, claimedFrom, claimedFor time.Time) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.id = g.id")
	b.and("o.scheduled_from = " + b.arg("claimed_from", claimedFrom, "what the claim wrote"))
	b.and("o.scheduled_for = " + b.arg("claimed_for", claimedFor, ""))
	text := fmt.Sprintf(`UPDATE %s o
   SET scheduled_from = timestamptz 'epoch' + g.from_us * interval '1 microsecond',
       scheduled_for = timestamptz 'epoch' + g.for_us * interval '1 microsecond'
  FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS g(id, from_us, for_us)
%s`, t.From(), b.arg("ids", ids, ""), b.arg("from_us", fromMicros, ""), b.arg("for_us", forMicros, ""), b.whereClause(" "))
	return Statement{Name: "drain-unclaim", Doc: []string{"Put the shard's schedule back as it was before the claim."}, Text: tidy(text), Args: b.args}
}

// DrainNewest reads the newest row of a coalesce group (its payload is the one delivered).
// It has no watermark: Sentry delivers select_coalesced_messages().last(), the group's newest
// row, even in its bounded synchronous path; the bound decides which groups are visited, not
// which row of a group is delivered.
func DrainNewest(t Target, k ShardKey, category int, object int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = " + b.arg("category", category, ""))
	b.and("o.object_identifier = " + b.arg("object", object, ""))
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

// DrainDeleteIDs deletes rows by id and returns the ids it deleted (an archive's commit
// marker names exactly those).
func DrainDeleteIDs(t Target, ids []int64) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`DELETE FROM %s o
 WHERE o.id = ANY (%s::bigint[])
RETURNING o.id`, t.From(), b.arg("ids", ids, ""))
	return Statement{Name: "drain-delete", Doc: []string{"Delete delivered or superseded rows by id."}, Text: tidy(text), Args: b.args}
}

// DrainNext is one iteration's reads in one statement: the shard's head (its lowest row at or
// below the watermark), and the newest row of the head's coalesce group (no watermark: the
// row Sentry delivers) with how many rows that group holds. Run before every delivery of a
// batch, it sees every row committed since, a late-committing lower id included, exactly
// as Sentry's per-iteration reads do.
//
// With prev set, the same statement first deletes (a chunk of) the previous message's group
// up to its delivered row, and the head it reads leaves those rows out (a statement does not
// see its own deletes): one round trip per message. deleted says how many rows went; a full
// chunk means the caller deletes the rest.
func DrainNext(t Target, k ShardKey, wm int64, prev *GroupUpTo) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	b.watermark("o", wm)
	del := "SELECT 0::bigint AS id WHERE false"
	if prev != nil {
		b.and(fmt.Sprintf("NOT (o.category = %s AND o.object_identifier = %s AND o.id <= %s)",
			b.arg("prev_category", prev.Category, "the group just delivered"), b.arg("prev_object", prev.Object, ""), b.arg("prev_up_to", prev.UpTo, "")))
	}
	headWhere := b.whereClause("     ")
	b.where = nil
	b.shardPredicates(t, k, "x")
	b.and("x.category = h.category")
	b.and("x.object_identifier = h.object_identifier")
	groupWhere := b.whereClause("     ")
	if prev != nil {
		b.where = nil
		b.shardPredicates(t, k, "d")
		b.and("d.category = @prev_category")
		b.and("d.object_identifier = @prev_object")
		b.and("d.id <= @prev_up_to")
		del = fmt.Sprintf(`DELETE FROM %s o
     WHERE o.id IN (SELECT d.id FROM %s d
%s
                     LIMIT %s)
    RETURNING o.id`, t.From(), t.From(), b.whereClause("                     "), b.arg("chunk", DeleteChunk, ""))
	}
	text := fmt.Sprintf(`WITH del AS (
    %[4]s
),
h AS (
    SELECT o.id, o.category, o.object_identifier
      FROM %[1]s o
%[2]s
     ORDER BY o.id
     LIMIT 1
)
SELECT n.id, h.category, h.object_identifier, n.payload, n.date_added, n.scheduled_for, h.id AS head_id,
       (SELECT count(*) FROM %[1]s x
%[3]s) AS coalesced_count,
       (SELECT count(*) FROM del) AS deleted
  FROM (SELECT 1) one
  LEFT JOIN h ON true
  LEFT JOIN LATERAL (
    -- "x.id + 0" keeps the planner on the (…, category, object_identifier) index: the
    -- group's rows, then a top-1, rather than a backward walk through the shard's newer rows.
    SELECT x.id, x.payload::text AS payload, x.date_added, x.scheduled_for
      FROM %[1]s x
%[3]s
     ORDER BY x.id + 0 DESC
     LIMIT 1
  ) n ON true`, t.From(), headWhere, groupWhere, del)
	return Statement{Name: "drain-next", Doc: []string{"Delete the group just delivered; read the shard's head and the newest row of its group: the next message."}, Text: tidy(text), Args: b.args}
}

// GroupUpTo is a coalesce group and the delivered id its rows are deleted up to.
type GroupUpTo struct {
	Category int
	Object   int64
	UpTo     int64
}

// DeleteChunk is the most rows one delete statement of a drain removes: a hot group of
// millions of rows is deleted in statements that each finish well inside the statement
// timeout (Sentry moved to slices for the same reason, PR #63890).
const DeleteChunk = 10000

// DrainDeleteGroupChunk deletes up to DeleteChunk rows of one coalesce group up to the
// delivered id; the caller repeats it until it deletes fewer.
func DrainDeleteGroupChunk(t Target, k ShardKey, category int, object, upTo int64) Statement {
	b := newBuilder()
	b.shardPredicates(t, k, "x")
	b.and("x.category = " + b.arg("category", category, ""))
	b.and("x.object_identifier = " + b.arg("object", object, ""))
	b.and("x.id <= " + b.arg("up_to", upTo, "the delivered row"))
	text := fmt.Sprintf(`DELETE FROM %[1]s o
 WHERE o.id IN (SELECT x.id FROM %[1]s x
%[2]s
                 LIMIT %[3]s)
RETURNING o.id`, t.From(), b.whereClause("                 "), b.arg("chunk", DeleteChunk, ""))
	return Statement{Name: "drain-delete-group-chunk", Doc: []string{"Delete the delivered group up to the delivered row, a chunk at a time."}, Text: tidy(text), Args: b.args}
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

// DrainScript is one drain iteration for a DBA to run in psql, in two runs, so that nothing
// is ever deleted that nobody delivered:
//
//   - run as printed, it only reads: the shard's head, the newest row of its coalesce group
//     (the payload to deliver) and the command for the second run;
//   - run again with -v delivered=ID after delivering that row, it locks the head (NOWAIT,
//     like Sentry's task path), checks that ID is still the newest row of the head's group
//     (a newer row means a newer payload to deliver first), deletes the group up to ID and
//     commits, all in one transaction.
//
// psql's \gset carries values between statements; :'delivered' is quoted by psql as a
// literal and cast, so whatever the DBA passes stays data.
func DrainScript(t Target, k ShardKey) (string, error) {
	head, err := DrainHead(t, k, 0, 0).Render()
	if err != nil {
		return "", err
	}
	b := newBuilder()
	b.shardPredicates(t, k, "o")
	peek, err := Statement{Name: "drain-peek-head", Doc: []string{"The shard's head: the lowest row, the one Sentry is blocked on (read only)."},
		Text: tidy(fmt.Sprintf(`SELECT o.id, o.category, o.object_identifier
  FROM %s o
%s
 ORDER BY o.id
 LIMIT 1`, t.From(), b.whereClause(" "))), Args: b.args}.Render()
	if err != nil {
		return "", err
	}
	b = newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = :head_category")
	b.and("o.object_identifier = :head_object_identifier")
	newestSQL, err := Statement{Name: "drain-newest", Doc: []string{"The newest row of the head's coalesce group: the one to deliver.",
		"The payload is shown as a JSON string, so no byte of it reaches the terminal raw."},
		Text: tidy(fmt.Sprintf(`SELECT o.id AS newest_id,
       coalesce(to_json(o.payload::text)::text, 'SQL NULL (no payload)') AS payload_shown
  FROM %s o
%s
 ORDER BY o.id DESC
 LIMIT 1`, t.From(), b.whereClause(" "))), Args: b.args}.Render()
	if err != nil {
		return "", err
	}
	b = newBuilder()
	b.shardPredicates(t, k, "o")
	b.and("o.category = :head_category")
	b.and("o.object_identifier = :head_object_identifier")
	b.and("o.id <= :'delivered'::bigint")
	delSQL, err := Statement{Name: "drain-delete-group", Doc: []string{"The delivered row and the older rows of its group: delete them."},
		Text: tidy(fmt.Sprintf(`DELETE FROM %s o
%s`, t.From(), b.whereClause(" "))), Args: b.args}.Render()
	if err != nil {
		return "", err
	}
	gset := func(sql, prefix string) string {
		return strings.TrimSuffix(strings.TrimRight(sql, "\n"), ";") + " \\gset " + prefix + "\n"
	}
	var sb strings.Builder
	sb.WriteString(`-- outboxctl drain script: one message of one shard, in two runs.
--   1. psql -f THIS_FILE                 reads only: shows the message to deliver and its id
--   2. deliver that payload yourself, then
--      psql -v delivered=ID -f THIS_FILE  deletes the delivered row and the older rows of its
--                                         group, only if ID is still the group's newest row
-- Run as printed it changes nothing. Needs psql 10 or newer (\if).
`)
	sb.WriteString(DrainGuard)
	sb.WriteString("\n\\if :{?delivered}\n")
	sb.WriteString("BEGIN;\n\n")
	sb.WriteString(gset(head, "head_"))
	sb.WriteString("\n")
	sb.WriteString(gset(newestSQL, ""))
	sb.WriteString("\nSELECT :'newest_id'::bigint = :'delivered'::bigint AS delivered_is_newest \\gset\n")
	sb.WriteString("\\if :delivered_is_newest\n")
	sb.WriteString(delSQL)
	sb.WriteString("COMMIT;\n\\echo deleted the group of row :newest_id: run step 1 again for the next message\n")
	sb.WriteString("\\else\nROLLBACK;\n\\echo nothing deleted: the newest row of the head group is :newest_id, not :'delivered'; deliver row :newest_id, then run with -v delivered=:newest_id\n")
	sb.WriteString("\\endif\n")
	sb.WriteString("\\else\n")
	sb.WriteString(gset(peek, "head_"))
	sb.WriteString("\n")
	sb.WriteString(gset(newestSQL, ""))
	sb.WriteString("\\echo deliver row :newest_id (category :head_category, object :head_object_identifier), payload (as a JSON string):\n\\echo :payload_shown\n")
	sb.WriteString("\\echo then run this script again with: psql -v delivered=:newest_id -f THIS_FILE\n")
	sb.WriteString("\\endif\n")
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
