-- outboxctl: doctor-tables
-- Vacuum state of the outbox tables. Autovacuum vacuums a table once n_dead_tup exceeds
-- autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × reltuples (reloptions override
-- the server settings); reltuples = -1 means never analysed.
SELECT c.relname::text AS table_name,
       s.n_live_tup, s.n_dead_tup,
       c.reltuples::float8 AS reltuples,
       s.last_vacuum, s.last_autovacuum, s.autovacuum_count,
       coalesce(c.reloptions, '{}')::text[] AS reloptions,
       pg_relation_size(c.oid) AS heap_bytes,
       pg_indexes_size(c.oid) AS index_bytes
  FROM unnest(ARRAY['sentry_regionoutbox', 'sentry_controloutbox']::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
  LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
 ORDER BY t.n;
