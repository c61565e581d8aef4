-- outboxctl: bulk-skip-rows
-- The rows skip --category ORGANIZATION_UPDATE archives, then deletes: in every coalesce group of the
-- category with a matching row, every row up to the group's highest matching id.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     GROUP BY o.shard_scope, o.shard_identifier
)
SELECT NULL::text AS cell, k.shard_scope, k.shard_identifier, k.depth,
       head.id AS head_id, head.category AS head_category, head.last_delay_seconds, head.last_attempt, head.oldest_message, n.next_attempt
  FROM candidates k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt, o.date_added AS oldest_message
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 WHERE EXISTS (SELECT 1 FROM sentry_regionoutbox o
                WHERE o.shard_scope = k.shard_scope
                  AND o.shard_identifier = k.shard_identifier
                  AND o.category = 2  -- ORGANIZATION_UPDATE
               )
 ORDER BY k.shard_scope, k.shard_identifier
    ) s
),
groups AS (
    SELECT o.shard_scope, o.shard_identifier, o.object_identifier, max(o.id) AS up_to
      FROM batch b
      JOIN sentry_regionoutbox o
        ON o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     WHERE o.category = 2  -- ORGANIZATION_UPDATE
     GROUP BY o.shard_scope, o.shard_identifier, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM groups g
  JOIN sentry_regionoutbox o
    ON o.shard_scope = g.shard_scope
   AND o.shard_identifier = g.shard_identifier
   AND o.category = 2  -- ORGANIZATION_UPDATE
   AND o.object_identifier = g.object_identifier
   AND o.id <= g.up_to
 ORDER BY o.id;
