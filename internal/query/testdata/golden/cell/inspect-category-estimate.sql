-- outboxctl: table-statistics
-- What the planner knows of sentry_regionoutbox (cell silo) without reading it: its estimated rows,
-- the rows modified since the last ANALYZE, and when that was.
SELECT CASE WHEN c.reltuples < 0 THEN NULL
            WHEN c.relpages = 0 THEN c.reltuples
            ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
       END::bigint AS estimated_rows,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint AS pages,
       pg_stat_get_mod_since_analyze(c.oid) AS modified_since_analyze,
       greatest(pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid)) AS analyzed_at
  FROM pg_class c
 WHERE c.oid = to_regclass('sentry_regionoutbox');

-- outboxctl: category-estimate
-- Estimated pending rows of category ORGANIZATION_UPDATE (2) in sentry_regionoutbox (cell silo) from the planner's statistics
-- (no table read): NULL when the category is too rare to be among pg_stats' most common values.
WITH rel AS (
    SELECT c.relname, n.nspname
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass('sentry_regionoutbox')
),
mcv AS (
    SELECT v.category, v.freq
      FROM pg_stats s
     CROSS JOIN LATERAL unnest(s.most_common_vals::text::int[], s.most_common_freqs) AS v(category, freq)
     WHERE s.schemaname = (SELECT rel.nspname FROM rel)
       AND s.tablename = (SELECT rel.relname FROM rel)
       AND s.attname = 'category'
)
SELECT NULL::integer AS shard_scope,
       (SELECT round(2000000::bigint * mcv.freq)::bigint FROM mcv WHERE mcv.category = 2) AS pending,  -- the planner's estimate of the table's rows, ORGANIZATION_UPDATE
       NULL::bigint AS shards, NULL::bigint AS objects,
       NULL::timestamptz AS next_attempt, NULL::timestamptz AS oldest_message,
       true AS estimated, '2026-12-01 12:00:00Z'::timestamptz::timestamptz AS statistics_analyzed_at  -- when the statistics were taken
;
