-- outboxctl exporter and outboxctl metrics: the statements of the two collection tiers that
-- no read command already has. The cheap tier also runs depth-estimate (depth.sql) and
-- doctor-unclaimed-shards (doctor.sql); the expensive tier top-shards (shards.sql), the
-- kill-switch and backfill reads.

-- name: exporter-oldest-row
-- Cheap tier: the oldest row, read in primary-key order (ids grow with time), so it stops at
-- the first live index entry instead of aggregating date_added, which has no index. No row
-- when the table is empty.
SELECT o.id, o.date_added, extract(epoch FROM now() - o.date_added)::float8 AS age_seconds
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 ORDER BY o.id
 LIMIT 1;

-- name: exporter-depth
-- Expensive tier: the exact depth per cell, scope and category, one plain GROUP BY (a
-- parallel scan, as depth's; the cell silo's constant cell is not a grouping key, which
-- would hash it for every row). The sum over every row is count(*).
SELECT /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: ''::text */ AS cell,
       o.shard_scope, o.category, count(*) AS depth
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 GROUP BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.category
 ORDER BY 1, 2, 3;

-- name: exporter-shard-states
-- Expensive tier: how many shards are in backoff (stuck: every row scheduled in the future)
-- and how many of those have reached the backoff cap (@cap seconds, a poison suspect), per
-- cell and scope. Candidates from one index-only pass over the (…, scheduled_for) index, each
-- confirmed by one probe for its earliest scheduled_for and read at its head (lowest id), as
-- stuck-shards and doctor-capped-shards do.
WITH candidates AS (
    SELECT /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: ''::text */ AS cell,
           o.shard_scope, o.shard_identifier
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.scheduled_for > now()
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     GROUP BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
),
backing_off AS (
    SELECT k.cell, k.shard_scope, head.delay_seconds
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = k.cell
           AND /* END: control */o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) n
     CROSS JOIN LATERAL (
        SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS delay_seconds
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = k.cell
           AND /* END: control */o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.id
         LIMIT 1
     ) head
     WHERE n.next_attempt > now()
)
SELECT b.cell, b.shard_scope, count(*) AS stuck,
       count(*) FILTER (WHERE b.delay_seconds >= @cap::int) AS at_cap
  FROM backing_off b
 GROUP BY 1, 2
 ORDER BY 1, 2;
