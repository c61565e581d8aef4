-- outboxctl: shard-state
-- Backoff state of shard ORGANIZATION_SCOPE/1 in sentry_regionoutbox (cell silo).
-- head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay
-- from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits
-- until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).
SELECT o.shard_scope, o.shard_identifier,
       count(*) OVER w AS depth,
       min(o.scheduled_for) OVER w AS next_attempt,
       min(o.scheduled_for) OVER w <= now() AS due,
       o.id AS head_id, o.category AS head_category, o.object_identifier AS head_object,
       o.scheduled_from AS last_attempt,
       extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
       now() AS observed_at
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1
WINDOW w AS (PARTITION BY o.shard_scope, o.shard_identifier)
 ORDER BY o.id
 LIMIT 1;

-- outboxctl: shard-categories
-- Per-category depth of shard ORGANIZATION_SCOPE/1 in sentry_regionoutbox (cell silo).
-- coalesce_groups = distinct objects: the deliveries left for that category.
SELECT o.category, count(*) AS depth,
       count(DISTINCT o.object_identifier) AS coalesce_groups,
       min(o.date_added) AS oldest_message, max(o.date_added) AS newest_message
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1
 GROUP BY o.category
 ORDER BY depth DESC, o.category;

-- outboxctl: shard-messages
-- Messages of shard ORGANIZATION_SCOPE/1 in sentry_regionoutbox (cell silo), newest first.
-- group_rows = rows sharing (category, object_identifier), counted up to 100 (100 means at least).
-- delivers = true marks the newest row of its group, the one Sentry delivers (its payload wins);
-- the others are superseded.
SELECT p.id, p.category, p.object_identifier,
       (SELECT count(*) FROM (
          SELECT 1 FROM sentry_regionoutbox x
           WHERE x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
          LIMIT 100) g) AS group_rows,  -- count at most this many
       NOT EXISTS (
          SELECT 1 FROM (
             SELECT x.category, x.object_identifier FROM sentry_regionoutbox x
              WHERE x.shard_scope = p.shard_scope
                AND x.shard_identifier = p.shard_identifier
                AND x.id > p.id
             OFFSET 0) newer
           WHERE newer.category = p.category
             AND newer.object_identifier = p.object_identifier) AS delivers,
       p.payload::text AS payload,
       p.scheduled_from, p.scheduled_for, p.date_added
  FROM (
    SELECT o.*
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
     ORDER BY o.id DESC
     LIMIT 50
  ) p
 ORDER BY p.id DESC;
