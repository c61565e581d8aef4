-- The depth of an outbox table: outboxctl depth (counted) and depth --estimate (from the
-- planner's statistics).

-- name: depth
-- Total depth and depth per category; the first row (category NULL) is the total. The
-- per-category counts are one plain GROUP BY, which PostgreSQL runs as a parallel scan (a
-- ROLLUP is never parallel); the total is their sum.
WITH per_category AS MATERIALIZED (
    SELECT o.category, count(*) AS depth
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     GROUP BY o.category
)
SELECT NULL AS category, coalesce(sum(c.depth), 0)::bigint AS depth FROM per_category c
UNION ALL
SELECT c.category, c.depth FROM per_category c
 ORDER BY category NULLS FIRST;

-- name: depth-estimate
-- The depth from pg_class.reltuples scaled to the table's current size (as the planner does)
-- and pg_stats' most common categories; @table is the table's name as written in SQL.
WITH rel AS (
    SELECT c.relname, n.nspname,
           CASE WHEN c.reltuples < 0 THEN NULL
                WHEN c.relpages = 0 THEN c.reltuples
                ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
           END AS total
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass(@table)
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

-- name: depth-total
-- The total alone, counted: Sentry's get_total_outbox_count (one parallel index-only or
-- sequential pass, no grouping).
SELECT count(*)::bigint AS depth
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */;

-- name: depth-split
-- The depth per category from pg_stats' most common categories times @total (the total
-- counted, or the planner's estimate of it): the first row is @total itself, estimated as
-- @total_estimated says. @table is the table's name as written in SQL; @analyzed_at is when
-- the statistics were taken, on every estimated row.
WITH rel AS (
    SELECT c.relname, n.nspname
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = to_regclass(@table)
),
mcv AS (
    SELECT v.category, v.freq
      FROM pg_stats s
     CROSS JOIN LATERAL unnest(s.most_common_vals::text::int[], s.most_common_freqs) AS v(category, freq)
     WHERE s.schemaname = (SELECT rel.nspname FROM rel)
       AND s.tablename = (SELECT rel.relname FROM rel)
       AND s.attname = 'category'
)
SELECT NULL::integer AS category, @total::bigint AS depth, @total_estimated::boolean AS estimated,
       CASE WHEN @total_estimated::boolean THEN @analyzed_at::timestamptz END AS statistics_analyzed_at
UNION ALL
SELECT mcv.category, round(@total::bigint * mcv.freq)::bigint, true, @analyzed_at::timestamptz FROM mcv
 ORDER BY category NULLS FIRST;
