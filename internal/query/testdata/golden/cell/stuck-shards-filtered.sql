-- outboxctl: stuck-shards
-- Shards of sentry_regionoutbox (cell silo) in backoff: every row is scheduled in the future, so
-- Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.
-- last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles
-- it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).
-- last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be
-- draining right now: Sentry pushes the schedule forward before it processes.
WITH RECURSIVE shard_keys AS (
    (SELECT o.shard_scope, o.shard_identifier
       FROM sentry_regionoutbox o
      WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
      ORDER BY o.shard_scope, o.shard_identifier
      LIMIT 1)
    UNION ALL
    SELECT nxt.shard_scope, nxt.shard_identifier
      FROM shard_keys k
     CROSS JOIN LATERAL (
        SELECT o.shard_scope, o.shard_identifier
          FROM sentry_regionoutbox o
         WHERE (o.shard_scope, o.shard_identifier) > (k.shard_scope, k.shard_identifier)
           AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
         ORDER BY o.shard_scope, o.shard_identifier
         LIMIT 1
     ) nxt
),
backing_off AS (
    SELECT k.shard_scope, k.shard_identifier, h.next_attempt
      FROM shard_keys k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM sentry_regionoutbox o
         WHERE o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
       AND EXISTS (SELECT 1 FROM sentry_regionoutbox o
                    WHERE o.shard_scope = k.shard_scope
                      AND o.shard_identifier = k.shard_identifier
                      AND o.category = 3)  -- ORGANIZATION_MEMBER_UPDATE
)
SELECT k.shard_scope, k.shard_identifier, s.depth, s.coalesce_groups, s.categories,
       k.next_attempt, head.last_delay_seconds, head.last_attempt,
       s.oldest_message, s.newest_message
  FROM backing_off k
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth,
           count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
           array_agg(DISTINCT o.category ORDER BY o.category) AS categories,
           min(o.date_added) AS oldest_message,
           max(o.date_added) AS newest_message
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
 ) s
 CROSS JOIN LATERAL (
    SELECT extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY s.depth DESC, k.shard_scope, k.shard_identifier
 LIMIT 10;
