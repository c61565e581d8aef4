-- outboxctl: doctor-indexes
-- Indexes of the outbox tables by column set. Sentry has three, each led by the shard key:
-- (…, category, object_identifier), (…, scheduled_for) and (…, id); the control table's lead with region_name.
SELECT c.relname::text AS table_name,
       ic.relname::text AS index_name,
       ARRAY(SELECT coalesce(a.attname::text, '(expression)')
               FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
               LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS columns,
       i.indisvalid AS valid
  FROM unnest(ARRAY['sentry_regionoutbox', 'sentry_controloutbox']::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
  JOIN pg_index i ON i.indrelid = c.oid
  JOIN pg_class ic ON ic.oid = i.indexrelid
 ORDER BY t.n, ic.relname;
