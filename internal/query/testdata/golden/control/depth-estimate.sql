-- outboxctl: depth-estimate
-- Estimated depth of sentry_controloutbox (control silo) from the planner's statistics (no table read):
-- as fresh as the last ANALYZE; only categories common enough to be in pg_stats are listed;
-- the whole table, whatever --cell says. depth is NULL when the table was never analyzed.
WITH rel AS (
    SELECT c.relname, n.nspname,
           CASE WHEN c.reltuples < 0 THEN NULL
                WHEN c.relpages = 0 THEN c.reltuples
                ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
           END AS total
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
SELECT NULL AS category, round(rel.total)::bigint AS depth, true AS estimated FROM rel
UNION ALL
SELECT mcv.category, round(rel.total * mcv.freq)::bigint, true FROM rel, mcv
 ORDER BY category NULLS FIRST;
