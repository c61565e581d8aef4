-- outboxctl: selected-shards
-- The shards of sentry_regionoutbox (cell silo) selected: scope ORGANIZATION_SCOPE, holding ORGANIZATION_MEMBER_UPDATE, head row ORGANIZATION_MEMBER_UPDATE, a row added at or after 2026-01-02T03:04:05Z, a row added before 2026-01-03T00:00:00Z, at least 2 rows, one of 2 listed shards, the first 10, in key order.
-- head_category, last_delay_seconds (the backoff step), last_attempt and oldest_message come from
-- the shard's lowest-id row, which Sentry locks; next_attempt is its earliest scheduled_for.
WITH candidates AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND (o.shard_scope, o.shard_identifier) IN (SELECT l.shard_scope, l.shard_identifier FROM unnest(ARRAY[0, 0]::integer[], ARRAY[2, 1]::bigint[]) AS l (shard_scope, shard_identifier))  -- --shards-from
       AND (o.shard_scope, o.shard_identifier) > (0::integer, 1::bigint)  -- the last shard of the previous page
     GROUP BY o.shard_scope, o.shard_identifier
    HAVING count(*) >= 2
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
 WHERE head.category = 3  -- ORGANIZATION_MEMBER_UPDATE
   AND EXISTS (SELECT 1 FROM sentry_regionoutbox o
                WHERE o.shard_scope = k.shard_scope
                  AND o.shard_identifier = k.shard_identifier
                  AND o.category = 3  -- ORGANIZATION_MEMBER_UPDATE
                  AND o.date_added >= '2026-01-02 03:04:05Z'::timestamptz
                  AND o.date_added < '2026-01-03 00:00:00Z'::timestamptz
               )
 ORDER BY k.shard_scope, k.shard_identifier
 LIMIT 10;
