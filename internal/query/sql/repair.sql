-- The repairs: reschedule (make a shard due now) and the DELETE of rows an archive staged
-- (compact, skip). Each runs in the transaction the session preamble opens, after
-- db.CheckPrimary; the command's --reason is prefixed as a comment (Why.Mark).

-- name: reschedule
-- Every row of the shard (up to the plan's highest id, @watermark) gets the schedule of a
-- fresh row: scheduled_for = THE_PAST (2016-08-01), so Sentry's next claim starts again from
-- a 2 s delay. With --group-heads (group_heads) only the lowest id of each coalesce group gets
-- it: equal for Sentry, which reads the shard's lowest row (always a group's lowest) and its
-- earliest schedule before its claim rewrites every row (sql/bulk.sql, bulk-reschedule, says
-- why, and where it differs). The heads are one read of the shard's rows.
UPDATE /* TEMPLATE: table */sentry_controloutbox o
   SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
       scheduled_from = now()
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   /* IF: watermark */AND o.id <= @watermark/* END: watermark */
   /* IF: group_heads */AND o.id IN (/* END: group_heads */
   /* IF: group_heads */    SELECT min(g.id)/* END: group_heads */
   /* IF: group_heads */      FROM /* TEMPLATE: table */sentry_controloutbox g/* END: group_heads */
   /* IF: group_heads */     /* IF: cell */WHERE g./* TEMPLATE: cell_column */region_name = @cell/* END: cell *//* END: group_heads */
   /* IF: group_heads */       AND g.shard_scope = @scope/* END: group_heads */
   /* IF: group_heads */       AND g.shard_identifier = @shard/* END: group_heads */
   /* IF: group_heads */     GROUP BY g.category, g.object_identifier/* END: group_heads */
   /* IF: group_heads */)/* END: group_heads */;

-- name: delete-archived
-- Delete the rows an archive has staged, by id; the ids returned are what the archive's
-- commit marker names.
DELETE FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
RETURNING o.id;

-- name: superseded
-- The rows compact archives, then deletes: every row of a coalesce group below the group's
-- newest id (up to the plan's highest id, @watermark), whole, as the archive stores them.
-- In no order: compact reads them through a cursor, a chunk at a time, and an ORDER BY o.id
-- sorted the whole shard before the first row (a 1M-row shard: 620 MB spilled to disk, the
-- progress line still for 4 s, #40). restore orders an archive's rows by id itself.
WITH newest AS (
    SELECT o.category, o.object_identifier, max(o.id) AS newest_id
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = @shard
       /* IF: watermark */AND o.id <= @watermark/* END: watermark */
     GROUP BY o.category, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
  JOIN newest n ON true
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id;

-- name: skip-group-rows
-- The rows skip archives, then deletes: the message's whole coalesce group (same shard,
-- category and object), up to the group's newest id in the plan (@up_to) when it is bounded.
WITH m AS (
    SELECT o.*
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.id = @id
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
  JOIN m ON /* IF: control */o./* TEMPLATE: cell_column */region_name = m./* TEMPLATE: cell_column */region_name
       AND /* END: control */o.shard_scope = m.shard_scope
       AND o.shard_identifier = m.shard_identifier
       AND o.category = m.category
       AND o.object_identifier = m.object_identifier
       /* IF: up_to */AND o.id <= @up_to/* END: up_to */
 ORDER BY o.id;

-- name: skip-tried-bound
-- For a shard's head message in backoff: the newest row of its coalesce group written at or
-- before the head's last attempt (scheduled_from, the claim), and how many rows of the group
-- go up to it. Those rows are what failed (Sentry delivered the newest of them); a row
-- written after the attempt has not been tried and is left for Sentry to deliver.
SELECT max(o.id) AS newest_tried_id, count(*) AS tried_rows
  FROM /* TEMPLATE: table */sentry_controloutbox o
  JOIN /* TEMPLATE: table */sentry_controloutbox m ON m.id = @id
 WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = m./* TEMPLATE: cell_column */region_name
   AND /* END: control */o.shard_scope = m.shard_scope
   AND o.shard_identifier = m.shard_identifier
   AND o.category = m.category
   AND o.object_identifier = m.object_identifier
   AND o.date_added <= m.scheduled_from;

-- name: delete-selected
-- The DELETE of the rows a statement above selected (its first column is the id), for a
-- printed script: it cannot archive, so the script prints it commented out. The region is
-- that statement (superseded, skip-group-rows) as printed above it.
DELETE FROM /* TEMPLATE: table */sentry_controloutbox d
 WHERE d.id IN (SELECT s.id FROM (
/* TEMPLATE_BEGIN: selected */SELECT o.id FROM sentry_controloutbox o WHERE false/* TEMPLATE_END: selected */
 ) s);

-- name: settle-deleted
-- Which of the ids a transaction deleted are still in the table, after its COMMIT got no
-- answer: none means it committed (a transaction commits whole), any means it did not. FOR
-- SHARE waits (up to lock_timeout) for that transaction if the server still runs it, so an
-- unfinished COMMIT is never read as "not committed".
SELECT o.id
  FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
 ORDER BY o.id
   FOR SHARE;

-- name: settle-reschedule
-- Whether a reschedule whose COMMIT got no answer committed: how many of the shard's rows (up
-- to its @watermark when it had one) do not carry its schedule (scheduled_for = THE_PAST; rows
-- that carried it already are what the reschedule makes, so a shard due now reads committed):
-- none means it committed, any that it did not (or that Sentry claimed the shard since).
-- FOR SHARE waits for the transaction as settle-deleted does. A --group-heads reschedule
-- (group_heads) rewrote only each coalesce group's lowest row: only those are read.
WITH locked AS (
    SELECT o.scheduled_for
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = @shard
       /* IF: watermark */AND o.id <= @watermark/* END: watermark */
       /* IF: group_heads */AND o.id IN (/* END: group_heads */
       /* IF: group_heads */    SELECT min(g.id)/* END: group_heads */
       /* IF: group_heads */      FROM /* TEMPLATE: table */sentry_controloutbox g/* END: group_heads */
       /* IF: group_heads */     /* IF: cell */WHERE g./* TEMPLATE: cell_column */region_name = @cell/* END: cell *//* END: group_heads */
       /* IF: group_heads */       AND g.shard_scope = @scope/* END: group_heads */
       /* IF: group_heads */       AND g.shard_identifier = @shard/* END: group_heads */
       /* IF: group_heads */     GROUP BY g.category, g.object_identifier/* END: group_heads */
       /* IF: group_heads */)/* END: group_heads */
       FOR SHARE
)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE scheduled_for <> '2016-08-01 00:00:00+00'::timestamptz) AS not_rescheduled
  FROM locked;
