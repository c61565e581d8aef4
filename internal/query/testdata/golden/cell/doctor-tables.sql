-- outboxctl: doctor-tables
-- Vacuum state of the outbox tables. Autovacuum vacuums a table once n_dead_tup exceeds
-- autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × reltuples (reloptions override
-- the server settings); reltuples = -1 means never analysed.
SELECT c.relname::text AS table_name,
       pg_stat_get_live_tuples(c.oid) AS n_live_tup,
       pg_stat_get_dead_tuples(c.oid) AS n_dead_tup,
       c.reltuples::float8 AS reltuples,
       pg_stat_get_last_vacuum_time(c.oid) AS last_vacuum,
       pg_stat_get_last_autovacuum_time(c.oid) AS last_autovacuum,
       pg_stat_get_autovacuum_count(c.oid) AS autovacuum_count,
       coalesce(c.reloptions, '{}')::text[] AS reloptions,
       pg_relation_size(c.oid) AS heap_bytes,
       pg_indexes_size(c.oid) AS index_bytes
  FROM unnest(ARRAY['sentry_regionoutbox', 'sentry_controloutbox']::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
 ORDER BY t.n;
