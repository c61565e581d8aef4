-- outboxctl: category-depth
-- Pending rows of category ORGANIZATION_UPDATE (2) in sentry_controloutbox (control silo), per scope.
-- shards = shards holding the category; objects = distinct objects (deliveries left, at most).
-- shards and objects are counted over the first 1000 rows of the category (distinct_rows of
-- them in the scope): exact when distinct_exact, at least that many otherwise. pending and the
-- ages read the whole table (no index leads with category), in parallel like a bare count(*);
-- only a category with rows in more than one scope (an older mapping) is read twice.
WITH whole AS (
    SELECT min(o.shard_scope) AS lo, max(o.shard_scope) AS hi, count(*) AS pending, min(o.scheduled_for) AS next_attempt, min(o.date_added) AS oldest_message
      FROM sentry_controloutbox o
     WHERE o.category = 2  -- ORGANIZATION_UPDATE
),
per_scope AS (
    -- One scope (nearly always): the pass above is its line.
    SELECT w.lo AS shard_scope, w.pending, w.next_attempt, w.oldest_message
      FROM whole w
     WHERE w.lo = w.hi
    UNION ALL
    -- Rows in more than one scope: a second pass, grouped. It is an InitPlan, which runs
    -- (in parallel) only when the CASE asks for it: otherwise it never starts, workers and all.
    SELECT s.shard_scope, s.pending, s.next_attempt, s.oldest_message
      FROM whole w
     CROSS JOIN LATERAL unnest(CASE WHEN w.lo <> w.hi THEN ARRAY(
            SELECT ROW(o.shard_scope::integer, count(*), min(o.scheduled_for)::timestamptz, min(o.date_added)::timestamptz)
              FROM sentry_controloutbox o
             WHERE o.category = 2  -- ORGANIZATION_UPDATE
             GROUP BY o.shard_scope) END)
           AS s(shard_scope integer, pending bigint, next_attempt timestamptz, oldest_message timestamptz)
),
first_rows AS (
    SELECT f.shard_scope, count(*) AS distinct_rows,
           count(DISTINCT (f.region_name, f.shard_identifier)) AS shards,
           count(DISTINCT f.object_identifier) AS objects
      FROM (SELECT o.region_name, o.shard_scope, o.shard_identifier, o.object_identifier
              FROM sentry_controloutbox o
             WHERE o.category = 2  -- ORGANIZATION_UPDATE
             LIMIT 1000) f  -- count distinct shards and objects over at most this many rows
     GROUP BY f.shard_scope
)
SELECT p.shard_scope, p.pending,
       coalesce(d.shards, 0) AS shards, coalesce(d.objects, 0) AS objects,
       p.next_attempt, p.oldest_message,
       coalesce(d.distinct_rows, 0) AS distinct_rows,
       coalesce(d.distinct_rows, 0) = p.pending AS distinct_exact
  FROM per_scope p
  LEFT JOIN first_rows d ON d.shard_scope = p.shard_scope
 ORDER BY p.pending DESC, p.shard_scope;
