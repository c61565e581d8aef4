-- The bulk repairs: reschedule, skip --category and compact over the shards a selector
-- chose (sql/selector.sql), a batch of shards per transaction. outboxctl fills each
-- statement's shards region with one batch (shard-batch: the shards as two arrays); printed
-- with --print-sql the region is the selector's own statement, so what a DBA pastes works on
-- every selected shard at once. A shard whose head row (its lowest id, which every Sentry
-- drainer locks first) is locked by a drainer is skipped with SKIP LOCKED, never waited for.

-- name: shard-batch
-- One batch of a bulk repair: the shards, key by key.
SELECT b.shard_scope, b.shard_identifier
  FROM unnest(@scopes::integer[], @ids::bigint[]) AS b (shard_scope, shard_identifier);

-- name: bulk-reschedule
-- Every row of each shard whose head row this transaction could lock gets the schedule of a
-- fresh row (scheduled_for = THE_PAST, 2016-08-01), so Sentry's next claim starts again from
-- a 2 s delay. One row per shard of the batch: empty (no row left: drained meanwhile),
-- being_drained (its head row is locked: a drainer holds it, left alone), rows rescheduled.
-- Made due after a skip or compact removed a shard's head (not_due), a row that carries
-- THE_PAST already is left as it is: Sentry reads nothing else of it (the backoff of a row
-- scheduled for THE_PAST is 1 s whatever its scheduled_from).
-- With --group-heads (group_heads) only the lowest id of each coalesce group (shard, category,
-- object) is rewritten. Sentry's claim reads the shard the same: it is due when any row is,
-- the claim derives the backoff from the shard's lowest row, always the lowest of its group
-- (so 2 s), and rewrites every row; a drain deletes whole groups, leaving again some group's
-- lowest row. It differs where Sentry reads a row's schedule before a claim: the scheduler's
-- five id windows list the shard only where a group head is (fewer tasks share the shards);
-- a control drain sends the newest row's scheduled_for; and a group's lowest row deleted
-- while newer rows of it stay (the 50-row deletion left rows, a disabled shard's drain,
-- compact or skip --keep-backoff) brings the old backoff back (docs/runbooks.md). The heads are
-- one read of each locked shard's rows on the (…, category, object_identifier) index (min(id)
-- per group); MATERIALIZED makes the UPDATE probe them by id, where inlined it read every row
-- of the shard again to join them.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: shards */SELECT 0 AS shard_scope, 0::bigint AS shard_identifier WHERE false/* TEMPLATE_END: shards */
    ) s
),
heads AS (
    SELECT b.shard_scope, b.shard_identifier, h.id AS head_id, l.id AS locked_id
      FROM batch b
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM /* TEMPLATE: table */sentry_controloutbox o
         /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
           AND o.shard_scope = b.shard_scope
           AND o.shard_identifier = b.shard_identifier
         ORDER BY o.id
         LIMIT 1
      ) h ON true
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE o.id = h.id
           FOR UPDATE SKIP LOCKED
      ) l ON true
),
/* IF: group_heads */group_heads AS MATERIALIZED (
    SELECT k.shard_scope, k.shard_identifier, k.locked_id, g.id
      FROM heads k
     CROSS JOIN LATERAL (
        SELECT min(o.id) AS id
          FROM /* TEMPLATE: table */sentry_controloutbox o
         /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         GROUP BY o.category, o.object_identifier
     ) g
     WHERE k.locked_id IS NOT NULL
),/* END: group_heads */
rescheduled AS (
    UPDATE /* TEMPLATE: table */sentry_controloutbox o
       SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
           scheduled_from = now()
      FROM /* EITHER: group_heads */group_heads/* OR: heads */ k
     WHERE k.locked_id IS NOT NULL
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
       /* IF: group_heads */AND o.id = k.id/* END: group_heads */
       /* IF: not_due */AND o.scheduled_for <> '2016-08-01 00:00:00+00'::timestamptz/* END: not_due */
    RETURNING o.shard_scope, o.shard_identifier
),
counted AS (
    SELECT r.shard_scope, r.shard_identifier, count(*) AS rows
      FROM rescheduled r
     GROUP BY r.shard_scope, r.shard_identifier
)
SELECT k.shard_scope, k.shard_identifier, k.head_id IS NULL AS empty,
       k.head_id IS NOT NULL AND k.locked_id IS NULL AS being_drained, coalesce(c.rows, 0) AS rows
  FROM heads k
  LEFT JOIN counted c ON c.shard_scope = k.shard_scope AND c.shard_identifier = k.shard_identifier
 ORDER BY k.shard_scope, k.shard_identifier;

-- name: bulk-lock-heads
-- Lock the head row of each shard of the batch for this transaction, skipping those a
-- drainer holds (SKIP LOCKED): skip and compact then archive and delete only in the shards
-- locked here. One row per shard: empty (no row left), being_drained (left alone), and its
-- head row's id (when a skip or compact deletes it, the shard is made due now).
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: shards */SELECT 0 AS shard_scope, 0::bigint AS shard_identifier WHERE false/* TEMPLATE_END: shards */
    ) s
)
SELECT b.shard_scope, b.shard_identifier, h.id IS NULL AS empty, h.id IS NOT NULL AND l.id IS NULL AS being_drained, 0::bigint AS rows, h.id AS head_id
  FROM batch b
  LEFT JOIN LATERAL (
    SELECT o.id
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     ORDER BY o.id
     LIMIT 1
  ) h ON true
  LEFT JOIN LATERAL (
    SELECT o.id
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.id = h.id
       FOR UPDATE SKIP LOCKED
  ) l ON true
 ORDER BY b.shard_scope, b.shard_identifier;

-- name: bulk-skip-rows
-- The rows skip --category archives, then deletes, in the batch's shards: in every coalesce
-- group (shard, category, object) of @category with a matching row (added in the window when
-- it is given), every row up to the group's highest matching id, as skip MESSAGE_ID does for
-- one message: an older row of the group is never left to be delivered in place of a newer one.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: shards */SELECT 0 AS shard_scope, 0::bigint AS shard_identifier WHERE false/* TEMPLATE_END: shards */
    ) s
),
groups AS (
    SELECT o.shard_scope, o.shard_identifier, o.object_identifier, max(o.id) AS up_to
      FROM batch b
      JOIN /* TEMPLATE: table */sentry_controloutbox o
        ON o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     WHERE o.category = @category
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       /* IF: added_after */AND o.date_added >= @added_after/* END: added_after */
       /* IF: added_before */AND o.date_added < @added_before/* END: added_before */
     GROUP BY o.shard_scope, o.shard_identifier, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM groups g
  JOIN /* TEMPLATE: table */sentry_controloutbox o
    ON o.shard_scope = g.shard_scope
   AND o.shard_identifier = g.shard_identifier
   AND o.category = @category
   AND o.object_identifier = g.object_identifier
   AND o.id <= g.up_to
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 ORDER BY o.id;

-- name: bulk-superseded
-- The rows compact archives, then deletes, in the batch's shards: every row of a coalesce
-- group below the group's newest id, whole, as the archive stores them.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: shards */SELECT 0 AS shard_scope, 0::bigint AS shard_identifier WHERE false/* TEMPLATE_END: shards */
    ) s
),
newest AS (
    SELECT o.shard_scope, o.shard_identifier, o.category, o.object_identifier, max(o.id) AS newest_id
      FROM batch b
      JOIN /* TEMPLATE: table */sentry_controloutbox o
        ON o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     GROUP BY o.shard_scope, o.shard_identifier, o.category, o.object_identifier
    HAVING count(*) > 1
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM newest n
  JOIN /* TEMPLATE: table */sentry_controloutbox o
    ON o.shard_scope = n.shard_scope
   AND o.shard_identifier = n.shard_identifier
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 ORDER BY o.id;

-- name: bulk-group-heads
-- The plan of a bulk reschedule --group-heads: the coalesce groups of the batch's shards, one
-- row each (its lowest row is the one the reschedule rewrites), for bulk-count. Every column
-- is the (…, category, object_identifier) index's: an index-only read of the shards' rows.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
/* TEMPLATE_BEGIN: shards */SELECT 0 AS shard_scope, 0::bigint AS shard_identifier WHERE false/* TEMPLATE_END: shards */
    ) s
)
SELECT o.shard_scope, o.category, o.shard_identifier, o.object_identifier
  FROM batch b
  JOIN /* TEMPLATE: table */sentry_controloutbox o
    ON o.shard_scope = b.shard_scope
   AND o.shard_identifier = b.shard_identifier
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 GROUP BY o.shard_scope, o.shard_identifier, o.category, o.object_identifier;

-- name: bulk-count
-- The plan of a bulk skip or compact: the rows its statement (the region) would archive and
-- delete over every selected shard, and their coalesce groups, per scope and category.
SELECT r.shard_scope, r.category, count(*) AS rows,
       count(DISTINCT (r.shard_identifier, r.object_identifier)) AS groups, count(DISTINCT r.shard_identifier) AS shards
  FROM (
/* TEMPLATE_BEGIN: rows */SELECT 0 AS shard_scope, 0 AS category, 0::bigint AS shard_identifier, 0::bigint AS object_identifier WHERE false/* TEMPLATE_END: rows */
  ) r
 GROUP BY r.shard_scope, r.category
 ORDER BY rows DESC, r.shard_scope, r.category;
