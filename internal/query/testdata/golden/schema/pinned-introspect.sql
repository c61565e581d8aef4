-- outboxctl: introspect
-- Which of outboxctl's tables exist, and the columns it adapts to, with their types
-- (payload: jsonb since Aug 2025, text before; option value: jsonb or text; the cell column).
SELECT t.n AS table_index, t.name AS table_name,
       to_regclass(t.name) IS NOT NULL AS present,
       a.attname::text AS column_name,
       format_type(a.atttypid, a.atttypmod) AS column_type
  FROM unnest(ARRAY['sentry.sentry_regionoutbox', 'sentry.sentry_controloutbox']::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
                          AND a.attname = ANY (ARRAY['id', 'shard_scope', 'shard_identifier', 'category', 'object_identifier', 'scheduled_from', 'scheduled_for', 'payload', 'region_name', 'cell_name', 'value']::text[])
                          AND NOT a.attisdropped
 ORDER BY t.n, a.attname;

-- outboxctl: option-values
-- Options from sentry.sentry_option. Values are JSON (jsonb, or text since 2023) or, when last
-- written before March 2023, a base64 pickle: outboxctl decodes all three.
SELECT o.key, o.value::text AS value, o.last_updated, o.last_updated_by
  FROM sentry.sentry_option o
 WHERE o.key = ANY (ARRAY['a', 'b']::text[])
 ORDER BY o.key;

-- outboxctl: introspect-indexes
-- The indexes of outboxctl's tables (Sentry dropped some over time).
SELECT t.n AS table_index,
       COALESCE(array_agg(c.relname::text ORDER BY c.relname) FILTER (WHERE c.relname IS NOT NULL), '{}'::text[]) AS index_names
  FROM unnest(ARRAY['sentry.sentry_regionoutbox', 'sentry.hybridcloud_webhookpayload']::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN pg_index i ON i.indrelid = to_regclass(t.name)
  LEFT JOIN pg_class c ON c.oid = i.indexrelid
 GROUP BY t.n
 ORDER BY t.n;

-- outboxctl: era-group-action-log-in-cell-outbox
-- Group action log rows in the cell outbox: how many, and how many added since 2026-09-15.
SELECT count(*) AS rows_total,
       count(*) FILTER (WHERE o.date_added >= '2026-09-15 00:00:00+00'::timestamptz) AS rows_since,  -- PR #124428: every group action log row in its own table
       min(o.date_added) AS oldest,
       max(o.date_added) AS newest
  FROM sentry.sentry_regionoutbox o
 WHERE o.shard_scope = 14  -- GROUP_SCOPE
   AND o.category = 49  -- GROUP_ACTION_LOG_EVENT
;

-- outboxctl: era-tombstone-watermarks
-- Tombstone (deletion) watermarks: how far each HybridCloudForeignKey column's cascade went, and the oldest tombstone it waits on.
SELECT w.table_name::text AS table_name, w.field_name::text AS field_name, w.low_bound, w.date_updated,
       top.max_id, next.id AS next_id, next.created_at AS next_created_at
  FROM sentry.sentry_celldeletionwatermark w
 CROSS JOIN (SELECT max(t.id) AS max_id FROM sentry.sentry_regiontombstone t) top
  LEFT JOIN LATERAL (SELECT t.id, t.created_at
                       FROM sentry.sentry_regiontombstone t
                      WHERE t.id > w.low_bound
                      ORDER BY t.id
                      LIMIT 1) next ON true
 WHERE w.prefix = 'tombstone'
 ORDER BY next.created_at NULLS LAST, w.table_name, w.field_name
 LIMIT 11;
