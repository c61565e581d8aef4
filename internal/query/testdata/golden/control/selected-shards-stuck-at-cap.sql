-- outboxctl: selected-shards
-- The shards of sentry_controloutbox (control silo) selected: stuck, at the 3600 s backoff cap, scope ORGANIZATION_SCOPE, in key order.
-- head_category, last_delay_seconds (the backoff step), last_attempt and oldest_message come from
-- the shard's lowest-id row, which Sentry locks; next_attempt is its earliest scheduled_for.
WITH candidates AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.scheduled_for > now()
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
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
   AND head.last_delay_seconds >= 3600  -- Sentry's 1 h backoff cap
 ORDER BY k.region_name, k.shard_scope, k.shard_identifier;
