-- outboxctl: stuck-shards
-- Shards of sentry_regionoutbox (cell silo) in backoff: every row is scheduled in the future, so
-- Sentry's scheduler (scheduled_for <= now()) skips them until next_attempt.
-- last_delay_seconds = the current backoff step, from the shard's lowest-id row (Sentry doubles
-- it from 2 s up to the 3600 s cap on every failed attempt; at 3600 suspect a poison message).
-- last_attempt = when Sentry last claimed the shard. A shard claimed seconds ago may simply be
-- draining right now: Sentry pushes the schedule forward before it processes.
-- oldest_message = date_added of the lowest-id row (ids and date_added both grow with time).
-- coalesce_groups is counted up to 100 (100 means at least; --exact counts all).
WITH candidates AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     WHERE o.scheduled_for > now()
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND (o.shard_scope, o.shard_identifier) IN (SELECT s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND (o.shard_scope, o.shard_identifier) IN (SELECT l.shard_scope, l.shard_identifier FROM unnest(ARRAY[0]::integer[], ARRAY[2]::bigint[]) AS l (shard_scope, shard_identifier))  -- --shards-from
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
 WHERE head.last_delay_seconds >= 3600  -- Sentry's 1 h backoff cap
 ORDER BY k.shard_scope, k.shard_identifier
           ) s)
     GROUP BY o.shard_scope, o.shard_identifier
),
backing_off AS (
    SELECT k.shard_scope, k.shard_identifier, k.depth, h.next_attempt
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM sentry_regionoutbox o
         WHERE o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
),
ranked AS (
    -- total_shards: how many shards are backing off before the LIMIT (the footer's "of N").
    SELECT k.*, count(*) OVER () AS total_shards
      FROM backing_off k
     ORDER BY k.depth DESC, k.shard_scope, k.shard_identifier
     LIMIT 20
)
SELECT k.shard_scope, k.shard_identifier, k.depth,
       CASE WHEN k.depth <= 2000  -- a shard of at most this many rows is read in one pass, a deeper one probed
       THEN (SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = k.shard_scope
                   AND o.shard_identifier = k.shard_identifier
                 ORDER BY o.category, o.object_identifier
                 LIMIT 100) g)  -- count at most this many groups
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM sentry_regionoutbox o
            WHERE o.shard_scope = k.shard_scope
              AND o.shard_identifier = k.shard_identifier
            ORDER BY o.category, o.object_identifier
            LIMIT 1)
          UNION ALL
          SELECT nx.category, nx.object_identifier, g.n + 1
            FROM g
           CROSS JOIN LATERAL (
              SELECT o.category, o.object_identifier
                FROM sentry_regionoutbox o
               WHERE o.shard_scope = k.shard_scope
                 AND o.shard_identifier = k.shard_identifier
                 AND (o.category, o.object_identifier) > (g.category, g.object_identifier)
               ORDER BY o.category, o.object_identifier
               LIMIT 1
           ) nx
           WHERE g.n < 100)  -- count at most this many groups
        SELECT count(*) FROM g) END AS coalesce_groups,
       CASE WHEN k.depth <= 2000  -- a shard of at most this many rows is read in one pass, a deeper one probed
       THEN ARRAY(SELECT DISTINCT o.category
                    FROM sentry_regionoutbox o
                   WHERE o.shard_scope = k.shard_scope
                     AND o.shard_identifier = k.shard_identifier
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = k.shard_scope
                   AND o.shard_identifier = k.shard_identifier
                 ORDER BY o.category
                 LIMIT 1)
               UNION ALL
               SELECT nx.category
                 FROM c
                CROSS JOIN LATERAL (
                   SELECT o.category
                     FROM sentry_regionoutbox o
                    WHERE o.shard_scope = k.shard_scope
                      AND o.shard_identifier = k.shard_identifier
                      AND o.category > c.category
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       k.next_attempt, head.last_delay_seconds, head.last_attempt,
       head.oldest_message, k.total_shards
  FROM ranked k
 CROSS JOIN LATERAL (
    SELECT CASE WHEN o.scheduled_for >= o.scheduled_from THEN extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 END AS last_delay_seconds, -- NULL: never attempted
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY k.depth DESC, k.shard_scope, k.shard_identifier;
