-- outboxctl: top-shards
-- Deepest shards of sentry_controloutbox (control silo), rows per shard.
-- depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries
-- actually left (Sentry delivers only the newest row of each group); next_attempt = earliest
-- scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come
-- from the lowest-id row, which Sentry locks and derives the next backoff step from; its
-- date_added is the shard's oldest message. Only the top rows pay for these columns;
-- coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).
-- total_shards is the planner's estimate (total_exact false) unless fewer than the limit matched; --exact counts them.
WITH per_shard AS (
    -- Each shard's depth: the guide's template without its sort (both forms read it; the
    -- planner folds it into the statement, the plan is the same as written out).
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
    HAVING count(*) >= 40  -- at least --limit shards are this deep (top-shards-floor)
),
shard_estimate AS (
    -- The planner's estimate of the shards, from its statistics (no row read): the product
    -- of the distinct values pg_stats has for the shard key's columns a filter leaves open
    -- (@key_columns), at most the table's rows, as the planner estimates a GROUP BY of them.
    SELECT least(c.reltuples, exp(sum(ln(greatest(CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * c.reltuples ELSE s.n_distinct END, 1)))))::bigint AS shards
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
     WHERE c.oid = to_regclass('sentry_controloutbox')
       AND s.attname = ANY (ARRAY['region_name', 'shard_scope', 'shard_identifier']::text[])  -- the shard key's columns no filter fixes
     GROUP BY c.reltuples
),
top AS (
    -- total_shards: how many shards matched before the LIMIT (the footer's "of N"), unless
    -- estimated.
    SELECT d.region_name, d.shard_scope, d.shard_identifier, d.depth
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
                 ORDER BY o.category, o.object_identifier
                 LIMIT 100) g)  -- count at most this many groups
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM sentry_controloutbox o
            WHERE o.region_name = top.region_name
              AND o.shard_scope = top.shard_scope
              AND o.shard_identifier = top.shard_identifier
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
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM sentry_controloutbox o
                 WHERE o.region_name = top.region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
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
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       n.next_attempt, n.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, head.oldest_message,
       CASE WHEN count(*) OVER () < 20 THEN count(*) OVER ()
            ELSE greatest(count(*) OVER (), (SELECT e.shards FROM shard_estimate e)) END AS total_shards,
       count(*) OVER () < 20 AS total_exact
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

-- outboxctl: top-shards
-- Deepest shards of sentry_controloutbox (control silo), rows per shard.
-- depth = rows waiting; coalesce_groups = distinct (category, object_identifier), the deliveries
-- actually left (Sentry delivers only the newest row of each group); next_attempt = earliest
-- scheduled_for, the shard is due when it is in the past; last_delay_seconds and last_attempt come
-- from the lowest-id row, which Sentry locks and derives the next backoff step from; its
-- date_added is the shard's oldest message. Only the top rows pay for these columns;
-- coalesce_groups is counted up to 100 (100 means at least; outboxctl shards --exact counts all).
-- total_shards is the planner's estimate (total_exact false) unless fewer than the limit matched; --exact counts them.
WITH per_shard AS (
    -- Each shard's depth: the guide's template without its sort (both forms read it; the
    -- planner folds it into the statement, the plan is the same as written out).
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.shard_scope = 1  -- USER_SCOPE
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
    HAVING count(*) >= 3  -- at least --limit shards are this deep (top-shards-floor)
),
shard_estimate AS (
    -- The planner's estimate of the shards, from its statistics (no row read): the product
    -- of the distinct values pg_stats has for the shard key's columns a filter leaves open
    -- (@key_columns), at most the table's rows, as the planner estimates a GROUP BY of them.
    SELECT least(c.reltuples, exp(sum(ln(greatest(CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * c.reltuples ELSE s.n_distinct END, 1)))))::bigint AS shards
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
     WHERE c.oid = to_regclass('sentry_controloutbox')
       AND s.attname = ANY (ARRAY['region_name', 'shard_identifier']::text[])  -- the shard key's columns no filter fixes
     GROUP BY c.reltuples
),
top AS (
    -- total_shards: how many shards matched before the LIMIT (the footer's "of N"), unless
    -- estimated.
    SELECT d.region_name, d.shard_scope, d.shard_identifier, d.depth
      FROM per_shard d
     ORDER BY d.depth DESC, d.region_name, d.shard_scope, d.shard_identifier
     LIMIT 5
)
SELECT top.region_name, top.shard_scope, top.shard_identifier, top.depth,
       CASE WHEN top.depth <= 2000  -- a shard of at most this many rows is read in one pass, a deeper one probed
       THEN (SELECT count(*) FROM (
                SELECT DISTINCT o.category, o.object_identifier
                  FROM sentry_controloutbox o
                 WHERE o.region_name = top.region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
                 ORDER BY o.category, o.object_identifier
                 LIMIT 100) g)  -- count at most this many groups
       ELSE (WITH RECURSIVE g AS (
          (SELECT o.category, o.object_identifier, 1 AS n
             FROM sentry_controloutbox o
            WHERE o.region_name = top.region_name
              AND o.shard_scope = top.shard_scope
              AND o.shard_identifier = top.shard_identifier
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
                   ORDER BY o.category)
       ELSE ARRAY(WITH RECURSIVE c AS (
               (SELECT o.category
                  FROM sentry_controloutbox o
                 WHERE o.region_name = top.region_name
                   AND o.shard_scope = top.shard_scope
                   AND o.shard_identifier = top.shard_identifier
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
                    ORDER BY o.category
                    LIMIT 1
                ) nx)
             SELECT c.category FROM c) END AS categories,
       n.next_attempt, n.next_attempt <= now() AS due,
       head.last_delay_seconds, head.last_attempt, head.oldest_message,
       CASE WHEN count(*) OVER () < 5 THEN count(*) OVER ()
            ELSE greatest(count(*) OVER (), (SELECT e.shards FROM shard_estimate e)) END AS total_shards,
       count(*) OVER () < 5 AS total_exact
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
