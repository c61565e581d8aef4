-- What the planner knows of an outbox table, read without reading the table: what outboxctl
-- decides a whole-table pass by (its budget under --statement-timeout) and how fresh the
-- statistics an estimate would come from are.

-- name: table-statistics
-- The table's rows as the planner estimates them (pg_class.reltuples scaled to the table's
-- current size, as the planner does; NULL when the table was never analyzed), its pages,
-- the rows inserted, updated or deleted since the last ANALYZE, and when that ANALYZE was
-- (a manual one or autovacuum's). @table is the table's name as written in SQL.
SELECT CASE WHEN c.reltuples < 0 THEN NULL
            WHEN c.relpages = 0 THEN c.reltuples
            ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
       END::bigint AS estimated_rows,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::bigint AS pages,
       pg_stat_get_mod_since_analyze(c.oid) AS modified_since_analyze,
       greatest(pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid)) AS analyzed_at
  FROM pg_class c
 WHERE c.oid = to_regclass(@table);
