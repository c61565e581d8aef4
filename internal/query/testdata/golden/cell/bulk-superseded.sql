-- outboxctl: bulk-superseded
-- Rows compact deletes undelivered in the selected shards: each coalesce group's rows below its newest id.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
SELECT b.shard_scope, b.shard_identifier
  FROM unnest(ARRAY[0]::integer[], ARRAY[1]::bigint[]) AS b (shard_scope, shard_identifier)
    ) s
),
newest AS (
    SELECT o.shard_scope, o.shard_identifier, o.category, o.object_identifier, max(o.id) AS newest_id
      FROM batch b
      JOIN sentry_regionoutbox o
        ON o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     GROUP BY o.shard_scope, o.shard_identifier, o.category, o.object_identifier
    HAVING count(*) > 1
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM newest n
  JOIN sentry_regionoutbox o
    ON o.shard_scope = n.shard_scope
   AND o.shard_identifier = n.shard_identifier
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id
 ORDER BY o.id;
