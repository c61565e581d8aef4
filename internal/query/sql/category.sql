-- How many rows of one category are pending, per scope (inspect category). No index leads
-- with category: both read the whole table, bounded by the statement timeout.

-- name: category-depth
-- pending, next_attempt and oldest_message are one parallel pass and a plain aggregate that
-- also keeps the lowest and highest scope; only when they differ (rows of an older scope
-- mapping) is the category read a second time, grouped by scope. shards and objects are
-- counted over the first @distinct_cap rows of the category: exact when distinct_exact.
WITH whole AS (
    SELECT min(o.shard_scope) AS lo, max(o.shard_scope) AS hi, count(*) AS pending, min(o.scheduled_for) AS next_attempt, min(o.date_added) AS oldest_message
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE o.category = @category
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
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
              FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE o.category = @category
               /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
             GROUP BY o.shard_scope) END)
           AS s(shard_scope integer, pending bigint, next_attempt timestamptz, oldest_message timestamptz)
),
first_rows AS (
    SELECT f.shard_scope, count(*) AS distinct_rows,
           count(DISTINCT /* IF: control */(f./* TEMPLATE: cell_column */region_name, /* END: control */f.shard_identifier/* IF: control */)/* END: control */) AS shards,
           count(DISTINCT f.object_identifier) AS objects
      FROM (SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.object_identifier
              FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE o.category = @category
               /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
             LIMIT @distinct_cap) f
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

-- name: category-depth-exact
-- category-depth with exact distinct counts: two sorts of every row of the category, not
-- parallel.
SELECT o.shard_scope, count(*) AS pending,
       count(DISTINCT /* IF: control */(o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_identifier/* IF: control */)/* END: control */) AS shards,
       count(DISTINCT o.object_identifier) AS objects,
       min(o.scheduled_for) AS next_attempt,
       min(o.date_added) AS oldest_message,
       count(*) AS distinct_rows, true AS distinct_exact
  FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.category = @category
   /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
 GROUP BY o.shard_scope
 ORDER BY pending DESC, o.shard_scope;

-- name: category-estimate
-- The category's pending rows from the planner's statistics, without reading the table:
-- its frequency among pg_stats' most common categories times @total (the planner's estimate
-- of the table's rows); NULL when the category is too rare to be among them. The rest is
-- unknown without a pass. @table is the table's name as written in SQL.
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
SELECT NULL::integer AS shard_scope,
       (SELECT round(@total::bigint * mcv.freq)::bigint FROM mcv WHERE mcv.category = @category) AS pending,
       NULL::bigint AS shards, NULL::bigint AS objects,
       NULL::timestamptz AS next_attempt, NULL::timestamptz AS oldest_message,
       true AS estimated, @analyzed_at::timestamptz AS statistics_analyzed_at;
