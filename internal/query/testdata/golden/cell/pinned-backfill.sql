-- outboxctl: backfill-watermarks
-- Backfill cursors in sentry_backfill_watermark: low_bound is the lowest id not yet
-- replicated, version the replication version being walked (coded version + 1 once complete).
SELECT w.table_name::text AS table_name, w.low_bound, w.version, w.date_updated
  FROM sentry_backfill_watermark w
 WHERE w.table_name = ANY (ARRAY['a', 'b']::text[])
 ORDER BY w.table_name;

-- outboxctl: backfill-table-bounds
-- Id bounds and the planner's row estimate (pg_class.reltuples) of each replicated table:
-- progress is (low_bound - min_id) / (max_id - min_id + 1) of the id span, an estimate.
SELECT 'sentry_a' AS table_name,
       (SELECT min(id) FROM sentry_a) AS min_id,
       (SELECT max(id) FROM sentry_a) AS max_id,
       (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass('sentry_a')) AS rows_estimate
UNION ALL
SELECT 'sentry_b' AS table_name,
       (SELECT min(id) FROM sentry_b) AS min_id,
       (SELECT max(id) FROM sentry_b) AS max_id,
       (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass('sentry_b')) AS rows_estimate;

-- outboxctl: backfill-rows-below
-- Rows of sentry_a below the backfill cursor (exact count).
SELECT count(*) AS rows_done
  FROM sentry_a t
 WHERE t.id < 10;

-- outboxctl: backfill-cursor-tables
-- Every table with a backfill cursor in sentry_backfill_watermark.
SELECT w.table_name::text AS table_name
  FROM sentry_backfill_watermark w
 ORDER BY w.table_name;

-- outboxctl: backfill-watermarks
-- Backfill cursors in w: low_bound is the lowest id not yet
-- replicated, version the replication version being walked (coded version + 1 once complete).
SELECT w.table_name::text AS table_name, w.low_bound, w.version, w.date_updated
  FROM w w
 WHERE w.table_name = ANY (ARRAY['a']::text[])
 ORDER BY w.table_name;
