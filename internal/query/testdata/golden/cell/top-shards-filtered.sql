-- outboxctl: top-shards
-- Deepest shards of sentry_regionoutbox (cell silo), rows of ORGANIZATION_UPDATE per shard.
-- depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries
-- actually left (Sentry delivers only the newest row of each group); next_attempt = earliest
-- scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come
-- from the lowest-id row, which Sentry locks and derives the next backoff step from.
WITH top AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.category = 2  -- ORGANIZATION_UPDATE
     GROUP BY o.shard_scope, o.shard_identifier
    HAVING count(*) >= 2
     ORDER BY depth DESC, o.shard_scope, o.shard_identifier
     LIMIT 5
)
SELECT top.shard_scope, top.shard_identifier, top.depth,
       s.coalesce_groups, s.categories, s.next_attempt, s.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, s.oldest_message
  FROM top
 CROSS JOIN LATERAL (
    SELECT count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
           array_agg(DISTINCT o.category ORDER BY o.category) AS categories,
           min(o.scheduled_for) AS next_attempt,
           min(o.date_added) AS oldest_message
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
       AND o.category = 2  -- ORGANIZATION_UPDATE
 ) s
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY top.depth DESC, top.shard_scope, top.shard_identifier;
