-- outboxctl: shard-state
-- Backoff state of shard ORGANIZATION_SCOPE/1 in sentry_regionoutbox (cell silo).
-- head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay
-- from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits
-- until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).
-- depth is given: shard-categories counted the shard in the same snapshot.
SELECT h.shard_scope, h.shard_identifier,
       d.depth, d.next_attempt, d.next_attempt <= now() AS due,
       h.id AS head_id, h.category AS head_category, h.object_identifier AS head_object,
       h.scheduled_from AS last_attempt,
       -- NULL for a row never attempted: Sentry writes it with scheduled_for (THE_PAST) before
       -- scheduled_from, which is no backoff step.
       CASE WHEN h.scheduled_for >= h.scheduled_from THEN extract(epoch FROM h.scheduled_for - h.scheduled_from)::float8 END AS last_delay_seconds,
       now() AS observed_at
  FROM (
    SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
     ORDER BY o.id
     LIMIT 1
  ) h
 CROSS JOIN LATERAL (
    SELECT 3::bigint AS depth,  -- rows of the shard: the sum of shard-categories' depth
           (SELECT x.scheduled_for FROM sentry_regionoutbox x
             WHERE x.shard_scope = h.shard_scope
               AND x.shard_identifier = h.shard_identifier
             ORDER BY x.scheduled_for
             LIMIT 1) AS next_attempt
 ) d
 ORDER BY h.id;
