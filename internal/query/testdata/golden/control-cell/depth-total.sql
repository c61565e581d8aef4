-- outboxctl: table-statistics
-- What the planner knows of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' without reading it: its estimated rows,
-- the rows modified since the last ANALYZE, and when that was.
SELECT CASE WHEN c.reltuples < 0 THEN NULL
            WHEN c.relpages = 0 THEN c.reltuples
            ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
       END::bigint AS estimated_rows,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint AS pages,
       pg_stat_get_mod_since_analyze(c.oid) AS modified_since_analyze,
       greatest(pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid)) AS analyzed_at
  FROM pg_class c
 WHERE c.oid = to_regclass('sentry_controloutbox');

-- outboxctl: depth-total
-- Total depth of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --', counted (Sentry's get_total_outbox_count).
SELECT count(*)::bigint AS depth
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --';
