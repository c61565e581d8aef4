-- outboxctl: depth-split
-- Depth per category of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' from the planner's statistics (pg_stats' most
-- common categories) times the total (counted): every category's row is an estimate.
WITH rel AS (
    SELECT c.relname, n.nspname
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass('sentry_controloutbox')
),
mcv AS (
    SELECT v.category, v.freq
      FROM pg_stats s
     CROSS JOIN LATERAL unnest(s.most_common_vals::text::int[], s.most_common_freqs) AS v(category, freq)
     WHERE s.schemaname = (SELECT rel.nspname FROM rel)
       AND s.tablename = (SELECT rel.relname FROM rel)
       AND s.attname = 'category'
)
SELECT NULL::integer AS category, 2000000::bigint AS depth, FALSE::boolean AS estimated,  -- the total, counted
       CASE WHEN FALSE::boolean THEN '2026-12-01 12:00:00Z'::timestamptz::timestamptz END AS statistics_analyzed_at  -- when the statistics were taken
UNION ALL
SELECT mcv.category, round(2000000::bigint * mcv.freq)::bigint, true, '2026-12-01 12:00:00Z'::timestamptz::timestamptz FROM mcv  -- the total, counted, when the statistics were taken
 ORDER BY category NULLS FIRST;

-- outboxctl: depth-split
-- Depth per category of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' from the planner's statistics (pg_stats' most
-- common categories) times the total (the planner's estimate): every category's row is an estimate.
WITH rel AS (
    SELECT c.relname, n.nspname
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass('sentry_controloutbox')
),
mcv AS (
    SELECT v.category, v.freq
      FROM pg_stats s
     CROSS JOIN LATERAL unnest(s.most_common_vals::text::int[], s.most_common_freqs) AS v(category, freq)
     WHERE s.schemaname = (SELECT rel.nspname FROM rel)
       AND s.tablename = (SELECT rel.relname FROM rel)
       AND s.attname = 'category'
)
SELECT NULL::integer AS category, 2000000::bigint AS depth, TRUE::boolean AS estimated,  -- the total, the planner's estimate
       CASE WHEN TRUE::boolean THEN NULL::timestamptz END AS statistics_analyzed_at  -- when the statistics were taken
UNION ALL
SELECT mcv.category, round(2000000::bigint * mcv.freq)::bigint, true, NULL::timestamptz FROM mcv  -- the total, the planner's estimate, when the statistics were taken
 ORDER BY category NULLS FIRST;
