-- The hand drain (reference §3.4–3.7): claim a shard like Sentry's task path, read the
-- message to deliver, delete what was delivered. Each takes the shard key like the
-- diagnostics and, where a drain is bounded, a watermark (@watermark): rows above it are
-- never touched.

-- name: drain-head
-- Lock the shard's lowest row without waiting (Sentry: SELECT … ORDER BY id LIMIT 1 FOR
-- UPDATE NOWAIT); SQLSTATE 55P03 means another drainer holds the shard. @after is a hint,
-- never a bound: the rows at or below it belong to groups already delivered.
SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   /* IF: watermark */AND o.id <= @watermark/* END: watermark */
   /* IF: after */AND o.id > @after/* END: after */
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT;

-- name: drain-claim
-- The claim of Sentry's prepare_next_from_shard: push the whole shard's schedule forward
-- (next = now + min(2 × the head's last delay, 1 h), at least 1 s) and return every row's
-- schedule from before the claim, grouped by scheduled_for (ids and, unless they share one,
-- their scheduled_from in two arrays that one aggregate pass fills in the same row order: rows never claimed since
-- they were written share THE_PAST but each has its own scheduled_from, and grouped by both a
-- 2M-row shard of them was 2M groups, spilled and decoded one by one: +2.4 s before the first
-- delivery), beside the schedule the claim wrote
-- ("next", the UPDATE's own expressions: now() is the transaction's, so every row gets that
-- one; TestUnclaimPutsBackEverySchedule reads it back from the rows). The SELECT reads the
-- shard's rows in the statement's snapshot, before "pushed" changes them (every part of one
-- statement sees the same snapshot, whatever order they run in), and "pushed" is Sentry's
-- own UPDATE of the shard: no join between them. Joining the UPDATE to the old rows by id
-- made the planner hash the whole table (a seq scan of every shard's rows, spilled in 256
-- batches): 55.9 s against Sentry's 24.2 s for the 2M-row shard of a 20M-row table. Reading the old rows into a MATERIALIZED CTE and the
-- claimed schedule from the UPDATE's RETURNING kept two tuplestores of 2M rows (spilled to
-- disk): 14.2 s against the bare UPDATE's 12.4 s on a 2M-row shard, this form 12.4 s (#27).
-- The claim holds the shard's head row (drain-head, same transaction), so no drainer
-- deletes or claims the shard's rows between the snapshot and the UPDATE. It runs in
-- REPEATABLE READ: a row another writer changed or deleted since the snapshot (one that
-- does not wait for the head: a hand-written statement, a single-shard compact or skip)
-- makes the UPDATE fail (40001) and the claim start again, so the schedules listed are the
-- ones replaced (in READ COMMITTED the UPDATE would push the newer row while this SELECT
-- listed the older one).
WITH next AS (
    SELECT now() AS claimed_from,
           now() + least(greatest(@head_for::timestamptz - @head_from::timestamptz, interval '1 second') * 2, interval '1 hour') AS claimed_for
),
pushed AS (
    UPDATE /* TEMPLATE: table */sentry_controloutbox o
       SET scheduled_for = now() + least(greatest(@head_for::timestamptz - @head_from::timestamptz, interval '1 second') * 2, interval '1 hour'),
           scheduled_from = now()
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = @shard
)
SELECT old.scheduled_for, n.claimed_from, n.claimed_for, array_agg(old.id) AS ids,
       min(old.scheduled_from) AS scheduled_from, -- the rows' one scheduled_from, when they share it
       CASE WHEN min(old.scheduled_from) IS DISTINCT FROM max(old.scheduled_from) OR count(old.scheduled_from) < count(*)
            THEN array_agg(old.scheduled_from) END AS froms
  FROM /* TEMPLATE: table */sentry_controloutbox old
 CROSS JOIN next n
 /* IF: cell */WHERE old./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND old.shard_scope = @scope
   AND old.shard_identifier = @shard
 GROUP BY old.scheduled_for, n.claimed_from, n.claimed_for;

-- name: drain-unclaim
-- Put back the schedules a claim replaced (times as microseconds since the epoch), on the
-- rows that still carry the claim's values.
UPDATE /* TEMPLATE: table */sentry_controloutbox o
   SET scheduled_from = timestamptz 'epoch' + g.from_us * interval '1 microsecond',
       scheduled_for = timestamptz 'epoch' + g.for_us * interval '1 microsecond'
  FROM unnest(@ids::bigint[], @from_us::bigint[], @for_us::bigint[]) AS g(id, from_us, for_us)
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   AND o.id = g.id
   AND o.scheduled_from = @claimed_from
   AND o.scheduled_for = @claimed_for;

-- name: drain-newest
-- The newest row of a coalesce group: the one delivered (no watermark: Sentry delivers the
-- group's newest row even in its bounded path).
SELECT o.id, o.category, o.object_identifier, o.payload::text AS payload, o.date_added, o.scheduled_for
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   AND o.category = @category
   AND o.object_identifier = @object
 ORDER BY o.id DESC
 LIMIT 1;

-- name: drain-duplicates
-- Sentry's duplicate scan: 50 ids of the group, in no order.
SELECT o.id
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   AND o.category = @category
   AND o.object_identifier = @object
 LIMIT 50;

-- name: drain-delete
-- Delete delivered or superseded rows by id; the ids returned are what an archive's commit
-- marker names.
DELETE FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
RETURNING o.id;

-- name: drain-next
-- One iteration's reads in one statement: the shard's head (at or below the watermark) and
-- the newest row of its group with the group's size. With prev, it first deletes a chunk
-- (@chunk) of the group just delivered, and the head it reads leaves those rows out (a
-- statement does not see its own deletes); deleted says how many went.
WITH del AS (
    /* EITHER: prev */DELETE FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.id IN (SELECT d.id FROM /* TEMPLATE: table */sentry_controloutbox d
                     /* IF: cell */WHERE d./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
                       AND d.shard_scope = @scope
                       AND d.shard_identifier = @shard
                       AND d.category = @prev_category
                       AND d.object_identifier = @prev_object
                       AND d.id <= @prev_up_to
                     LIMIT @chunk)
    RETURNING o.id/* OR: SELECT 0::bigint AS id WHERE false */
),
h AS (
    SELECT o.id, o.category, o.object_identifier
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = @shard
       /* IF: watermark */AND o.id <= @watermark/* END: watermark */
       /* IF: prev */AND NOT (o.category = @prev_category AND o.object_identifier = @prev_object AND o.id <= @prev_up_to)/* END: prev */
     ORDER BY o.id
     LIMIT 1
)
SELECT n.id, h.category, h.object_identifier, n.payload, n.date_added, n.scheduled_for, h.id AS head_id,
       (SELECT count(*) FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND x.shard_scope = @scope
       AND x.shard_identifier = @shard
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier) AS coalesced_count,
       (SELECT count(*) FROM del) AS deleted
  FROM (SELECT 1) one
  LEFT JOIN h ON true
  LEFT JOIN LATERAL (
    -- "x.id + 0" keeps the planner on the (…, category, object_identifier) index: the
    -- group's rows, then a top-1, rather than a backward walk through the shard's newer rows.
    SELECT x.id, x.payload::text AS payload, x.date_added, x.scheduled_for
      FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND x.shard_scope = @scope
       AND x.shard_identifier = @shard
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier
     ORDER BY x.id + 0 DESC
     LIMIT 1
  ) n ON true;

-- name: drain-delete-group-chunk
-- Delete up to @chunk rows of one coalesce group up to the delivered id (@up_to); the
-- caller repeats it until it deletes fewer.
DELETE FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id IN (SELECT x.id FROM /* TEMPLATE: table */sentry_controloutbox x
                 /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
                   AND x.shard_scope = @scope
                   AND x.shard_identifier = @shard
                   AND x.category = @category
                   AND x.object_identifier = @object
                   AND x.id <= @up_to
                 LIMIT @chunk)
RETURNING o.id;

-- name: drain-archive-rows
-- The rows of the given groups up to each id (strictly below it with below on), whole, to
-- archive them before they are deleted without delivery.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
  JOIN unnest(@categories::bigint[], @objects::bigint[], @up_to::bigint[]) AS g(category, object_identifier, up_to) ON true
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   AND o.category = g.category
   AND o.object_identifier = g.object_identifier
   AND o.id /* EITHER: below */</* OR: <= */ g.up_to
 ORDER BY o.id;

-- name: drain-plan-categories
-- The drain's plan: each category of the shard (walked on the (…, category,
-- object_identifier) index, one probe each) with its rows counted up to @cap and its
-- coalesce groups walked on the same index, one probe each, up to @cap; the *_at_least
-- columns say a count stopped at the cap. The plan is read before the claim, so its cost
-- delays the first delivery: shard-categories' exact counts read every row of the shard,
-- 0.1 s on the 2M-row hot shard of #27 when its pages are all-visible but 1.2–2.7 s after
-- an UPDATE of the shard (Sentry's every claim) left them to the heap; this ~0.2 s then.
WITH RECURSIVE c AS (
    (SELECT o.category
       FROM /* TEMPLATE: table */sentry_controloutbox o
      /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
        AND o.shard_scope = @scope
        AND o.shard_identifier = @shard
      ORDER BY o.category
      LIMIT 1)
    UNION ALL
    SELECT nx.category
      FROM c
     CROSS JOIN LATERAL (
        SELECT o.category
          FROM /* TEMPLATE: table */sentry_controloutbox o
         /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
           AND o.shard_scope = @scope
           AND o.shard_identifier = @shard
           AND o.category > c.category
         ORDER BY o.category
         LIMIT 1
     ) nx
)
SELECT c.category, least(r.n, @cap::bigint) AS depth, r.n > @cap::bigint AS depth_at_least,
       least(g.n, @cap::bigint) AS coalesce_groups, g.n > @cap::bigint AS groups_at_least
  FROM c
 CROSS JOIN LATERAL (
    SELECT count(*) AS n
      FROM (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox x
            /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
              AND x.shard_scope = @scope
              AND x.shard_identifier = @shard
              AND x.category = c.category
            LIMIT @cap::bigint + 1) l
 ) r
 CROSS JOIN LATERAL (
    WITH RECURSIVE g AS (
        (SELECT x.object_identifier, 1::bigint AS n
           FROM /* TEMPLATE: table */sentry_controloutbox x
          /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
            AND x.shard_scope = @scope
            AND x.shard_identifier = @shard
            AND x.category = c.category
          ORDER BY x.object_identifier
          LIMIT 1)
        UNION ALL
        SELECT nx.object_identifier, g.n + 1
          FROM g
         CROSS JOIN LATERAL (
            SELECT x.object_identifier
              FROM /* TEMPLATE: table */sentry_controloutbox x
             /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
               AND x.shard_scope = @scope
               AND x.shard_identifier = @shard
               AND x.category = c.category
               AND x.object_identifier > g.object_identifier
             ORDER BY x.object_identifier
             LIMIT 1
         ) nx
         WHERE g.n <= @cap::bigint
    )
    SELECT count(*) AS n FROM g
 ) g
 ORDER BY depth DESC, c.category;

-- name: shard-max-id
-- The shard's highest id: the watermark a drain's plan is bounded by.
SELECT o.id AS max_id
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
 ORDER BY o.id DESC
 LIMIT 1;

-- name: shard-max-ids
-- Each listed shard's highest id (@scopes, @ids: drain SELECTORS' plan), one probe of the
-- shard index per shard: the watermarks of a parallel drain, read at planning time as the
-- single-shard drain's is. A shard without rows has none.
SELECT l.shard_scope, l.shard_identifier, m.max_id
  FROM unnest(@scopes::integer[], @ids::bigint[]) AS l (shard_scope, shard_identifier)
 CROSS JOIN LATERAL (
    SELECT o.id AS max_id
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = l.shard_scope
       AND o.shard_identifier = l.shard_identifier
     ORDER BY o.id DESC
     LIMIT 1
 ) m;

-- name: drain-coalesced
-- How many rows wait in each group (an index-only count) and, with ids, its first @cap ids
-- up to the group's delivered id (which reads every row: opt-in, --coalesced-ids).
SELECT g.category, g.object_identifier,
       (SELECT count(*) FROM /* TEMPLATE: table */sentry_controloutbox o
          /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
            AND o.shard_scope = @scope
            AND o.shard_identifier = @shard
            AND o.category = g.category
            AND o.object_identifier = g.object_identifier) AS coalesced_count,
       /* EITHER: ids */ARRAY(SELECT o.id FROM /* TEMPLATE: table */sentry_controloutbox o
               /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
                 AND o.shard_scope = @scope
                 AND o.shard_identifier = @shard
                 AND o.category = g.category
                 AND o.object_identifier = g.object_identifier
                 AND o.id <= g.up_to
                ORDER BY o.id LIMIT @cap)/* OR: NULL::bigint[] */ AS coalesced_ids
  FROM unnest(@categories::bigint[], @objects::bigint[], @up_to::bigint[]) AS g(category, object_identifier, up_to);

-- name: drain-peek-head
-- For the psql drain script: the shard's head, the lowest row (read only).
SELECT o.id, o.category, o.object_identifier
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
 ORDER BY o.id
 LIMIT 1;

-- name: shard-category-counts
-- The rows and coalesce groups of the listed shards (@scopes, @ids: drain SELECTORS' plan)
-- per scope and category, and how many of the shards hold the category: one range of the
-- shard's (…, category, object_identifier) index each, read in the plan's snapshot.
SELECT l.shard_scope, o.category, count(*) AS rows,
       count(DISTINCT (o.shard_identifier, o.object_identifier)) AS groups, count(DISTINCT o.shard_identifier) AS shards
  FROM unnest(@scopes::integer[], @ids::bigint[]) AS l (shard_scope, shard_identifier)
  JOIN /* TEMPLATE: table */sentry_controloutbox o
    ON o.shard_scope = l.shard_scope
   AND o.shard_identifier = l.shard_identifier
   /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 GROUP BY l.shard_scope, o.category
 ORDER BY rows DESC, l.shard_scope, o.category;

-- name: shard-depths-listed
-- The depth of each listed shard (@scopes, @ids) after a parallel drain, one count on the
-- shard index each, in one statement; in the control silo without a cell, over every cell.
SELECT l.shard_scope, l.shard_identifier, d.depth
  FROM unnest(@scopes::integer[], @ids::bigint[]) AS l (shard_scope, shard_identifier)
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = l.shard_scope
       AND o.shard_identifier = l.shard_identifier
 ) d;
