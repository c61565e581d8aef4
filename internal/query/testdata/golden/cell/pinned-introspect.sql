-- outboxctl: introspect
-- Which of outboxctl's tables exist, and the columns it adapts to, with their types
-- (payload: jsonb since Aug 2025, text before; option value: jsonb or text; the cell column),
-- and each table's indexes.
SELECT t.n AS table_index, t.name AS table_name,
       to_regclass(t.name) IS NOT NULL AS present,
       a.attname::text AS column_name,
       format_type(a.atttypid, a.atttypmod) AS column_type,
       COALESCE(ix.names, '{}'::text[]) AS index_names
  FROM unnest(ARRAY['sentry_regionoutbox', 'sentry_controloutbox']::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN LATERAL (SELECT array_agg(c.relname::text ORDER BY c.relname) AS names
                       FROM pg_index i
                       JOIN pg_class c ON c.oid = i.indexrelid
                      WHERE i.indrelid = to_regclass(t.name)) AS ix ON true
  LEFT JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
                          AND a.attname = ANY (ARRAY['id', 'shard_scope', 'shard_identifier', 'category', 'object_identifier', 'scheduled_from', 'scheduled_for', 'payload', 'region_name', 'cell_name', 'value']::text[])
                          AND NOT a.attisdropped
 ORDER BY t.n, a.attname;

-- outboxctl: option-values
-- Options from sentry_option. Values are JSON (jsonb, or text since 2023) or, when last
-- written before March 2023, a base64 pickle: outboxctl decodes all three.
SELECT o.key, o.value::text AS value, o.last_updated, o.last_updated_by
  FROM sentry_option o
 WHERE o.key = ANY (ARRAY['a', 'b']::text[])
 ORDER BY o.key;
