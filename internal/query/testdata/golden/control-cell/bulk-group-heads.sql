-- outboxctl: bulk-count
-- The rows and coalesce groups the repair would archive and delete, per scope and category.
SELECT r.shard_scope, r.category, count(*) AS rows,
       count(DISTINCT (r.shard_identifier, r.object_identifier)) AS groups, count(DISTINCT r.shard_identifier) AS shards
  FROM (
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.scheduled_for > now()
       AND o.region_name = 'x''; DROP TABLE y; --'
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
)
SELECT k.region_name::text AS cell, k.shard_scope, k.shard_identifier, k.depth,
       head.id AS head_id, head.category AS head_category, head.last_delay_seconds, head.last_attempt, head.oldest_message, n.next_attempt
  FROM candidates k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt, o.date_added AS oldest_message
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 WHERE n.next_attempt > now()
 ORDER BY k.region_name, k.shard_scope, k.shard_identifier
    ) s
)
SELECT o.shard_scope, o.category, o.shard_identifier, o.object_identifier
  FROM batch b
  JOIN sentry_controloutbox o
    ON o.shard_scope = b.shard_scope
   AND o.shard_identifier = b.shard_identifier
 WHERE o.region_name = 'x''; DROP TABLE y; --'
 GROUP BY o.shard_scope, o.shard_identifier, o.category, o.object_identifier
  ) r
 GROUP BY r.shard_scope, r.category
 ORDER BY rows DESC, r.shard_scope, r.category;
