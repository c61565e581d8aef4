-- backfill status: the replication cursors of a watermark table (Sentry since September
-- 2026) against the bounds of the tables they walk. The tables are templates: the target's
-- schema and the watermark table's name decide them.

-- name: backfill-watermarks
-- The cursors of @tables: low_bound is the lowest id not yet replicated.
SELECT w.table_name::text AS table_name, w.low_bound, w.version, w.date_updated
  FROM /* TEMPLATE: table */hybridcloud_celloutboxbackfillwatermark w
 WHERE w.table_name = ANY (@tables::text[])
 ORDER BY w.table_name;

-- name: backfill-table-bounds
-- Id bounds (two probes of the primary key) and the planner's row estimate of each
-- replicated table: one backfill-table-bound part per table.
/* TEMPLATE_BEGIN: tables */SELECT 'sentry_organization' AS table_name,
       (SELECT min(id) FROM sentry_organization) AS min_id,
       (SELECT max(id) FROM sentry_organization) AS max_id,
       (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass('sentry_organization')) AS rows_estimate/* TEMPLATE_END: tables */;

-- name: backfill-table-bound
-- Part of backfill-table-bounds: one table (@t, its qualified name @r). Every branch but the
-- first is a UNION ALL.
/* EITHER: first */SELECT/* OR: UNION ALL
SELECT */ @t AS table_name,
       (SELECT min(id) FROM /* TEMPLATE: table */sentry_organization) AS min_id,
       (SELECT max(id) FROM /* TEMPLATE: table */sentry_organization) AS max_id,
       (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass(@r)) AS rows_estimate

-- name: backfill-rows-below
-- The rows a cursor has passed, counted exactly (an index-only scan of the primary key).
SELECT count(*) AS rows_done
  FROM /* TEMPLATE: table */sentry_organization t
 WHERE t.id < @low;

-- name: backfill-cursor-tables
-- Every table with a cursor in the watermark table.
SELECT w.table_name::text AS table_name
  FROM /* TEMPLATE: table */hybridcloud_celloutboxbackfillwatermark w
 ORDER BY w.table_name;

-- name: backfill-table-readable
-- Whether @r can be read here, for backfill status --print-sql's psql script (its \gset
-- keeps the answer for the \if after it): the table exists and, for the bounds, has an
-- id column; missing says why not.
SELECT to_regclass(@r) IS NOT NULL/* IF: id */
       AND EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = to_regclass(@r) AND a.attname = 'id' AND a.attnum > 0 AND NOT a.attisdropped)/* END: id */ AS readable,
       @r AS name,
       CASE WHEN to_regclass(@r) IS NULL THEN 'no such table' ELSE 'no id column' END AS missing;
