-- outboxctl: top-shards
-- Deepest shards of sentry_controloutbox (control silo), rows of ORGANIZATION_UPDATE per shard.
-- depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries
-- actually left (Sentry delivers only the newest row of each group); next_attempt = earliest
-- scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come
-- from the lowest-id row, which Sentry locks and derives the next backoff step from; its
-- date_added is the shard's oldest message. Only the top rows pay for these columns;
-- coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).
-- total_shards = the shards matched, counted.
WITH per_shard AS (
    -- Each shard's depth: the guide's template without its sort (both forms read it; the
    -- planner folds it into the statement, the plan is the same as written out).
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.category = 2  -- ORGANIZATION_UPDATE
       AND (o.region_name::text, o.shard_scope, o.shard_identifier) IN (SELECT s.cell, s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
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
 WHERE head.category = 3  -- ORGANIZATION_MEMBER_UPDATE
 ORDER BY k.region_name, k.shard_scope, k.shard_identifier
           ) s)
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
),
top AS (
    -- total_shards: how many shards matched before the LIMIT (the footer's "of N"), unless
    -- estimated.
    SELECT d.region_name, d.shard_scope, d.shard_identifier, d.depth, count(*) OVER () AS total_shards
      FROM per_shard d
     ORDER BY d.depth DESC, d.region_name, d.shard_scope, d.shard_identifier
     LIMIT 20
)
SELECT top.region_name, top.shard_scope, top.shard_identifier, top.depth,
       CASE WHEN top.depth <= 2000  -- a shard of at most this many rows is read in one pass, a deeper one probed
       THEN (SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM sentry_controloutbox o
                 WHERE o.region_name = top.region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
                   AND o.category = 2  -- ORGANIZATION_UPDATE
                 ORDER BY o.category, o.object_identifier
                 LIMIT 100) g)  -- count at most this many groups
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM sentry_controloutbox o
            WHERE o.region_name = top.region_name
              AND o.shard_scope = top.shard_scope
              AND o.shard_identifier = top.shard_identifier
              AND o.category = 2  -- ORGANIZATION_UPDATE
            ORDER BY o.category, o.object_identifier
            LIMIT 1)
          UNION ALL
          SELECT nx.category, nx.object_identifier, g.n + 1
            FROM g
           CROSS JOIN LATERAL (
              SELECT o.category, o.object_identifier
                FROM sentry_controloutbox o
               WHERE o.region_name = top.region_name
                 AND o.shard_scope = top.shard_scope
                 AND o.shard_identifier = top.shard_identifier
                 AND (o.category, o.object_identifier) > (g.category, g.object_identifier)
                 AND o.category = 2  -- ORGANIZATION_UPDATE
               ORDER BY o.category, o.object_identifier
               LIMIT 1
           ) nx
           WHERE g.n < 100)  -- count at most this many groups
        SELECT count(*) FROM g) END AS coalesce_groups,
       CASE WHEN top.depth <= 2000  -- a shard of at most this many rows is read in one pass, a deeper one probed
       THEN ARRAY(SELECT DISTINCT o.category
                    FROM sentry_controloutbox o
                   WHERE o.region_name = top.region_name
                     AND o.shard_scope = top.shard_scope
                     AND o.shard_identifier = top.shard_identifier
                     AND o.category = 2  -- ORGANIZATION_UPDATE
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM sentry_controloutbox o
                 WHERE o.region_name = top.region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
                   AND o.category = 2  -- ORGANIZATION_UPDATE
                 ORDER BY o.category
                 LIMIT 1)
               UNION ALL
               SELECT nx.category
                 FROM c
                CROSS JOIN LATERAL (
                   SELECT o.category
                     FROM sentry_controloutbox o
                    WHERE o.region_name = top.region_name
                      AND o.shard_scope = top.shard_scope
                      AND o.shard_identifier = top.shard_identifier
                      AND o.category > c.category
                      AND o.category = 2  -- ORGANIZATION_UPDATE
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       n.next_attempt, n.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, head.oldest_message,
       top.total_shards, true AS total_exact
  FROM top
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_controloutbox o
     WHERE o.region_name = top.region_name
       AND o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT CASE WHEN o.scheduled_for >= o.scheduled_from THEN extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 END AS last_delay_seconds, -- NULL: never attempted
           o.scheduled_from AS last_attempt,
           o.date_added AS oldest_message
      FROM sentry_controloutbox o
     WHERE o.region_name = top.region_name
       AND o.shard_scope = top.shard_scope
       AND o.shard_identifier = top.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 ORDER BY top.depth DESC, top.region_name, top.shard_scope, top.shard_identifier;
