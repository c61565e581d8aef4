-- outboxctl: exporter-shard-states
-- Shards of sentry_controloutbox (control silo) in backoff, and at Sentry's 1 h backoff cap, per cell and scope.
WITH candidates AS (
    SELECT o.region_name::text AS cell,
           o.shard_scope, o.shard_identifier
      FROM sentry_controloutbox o
     WHERE o.scheduled_for > now()
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
),
backing_off AS (
    SELECT k.cell, k.shard_scope, head.delay_seconds
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM sentry_controloutbox o
         WHERE o.region_name = k.cell
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) n
     CROSS JOIN LATERAL (
        SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS delay_seconds
          FROM sentry_controloutbox o
         WHERE o.region_name = k.cell
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.id
         LIMIT 1
     ) head
     WHERE n.next_attempt > now()
)
SELECT b.cell, b.shard_scope, count(*) AS stuck,
       count(*) FILTER (WHERE b.delay_seconds >= 3600::int) AS at_cap  -- seconds: Sentry's backoff cap
  FROM backing_off b
 GROUP BY 1, 2
 ORDER BY 1, 2;
