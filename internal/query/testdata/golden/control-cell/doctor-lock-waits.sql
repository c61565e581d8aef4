-- outboxctl: doctor-lock-waits
-- Sessions waiting on locks of the outbox tables and the pids blocking them. A waiter on a row
-- (locktype transactionid or tuple) is a drain or a web request queued behind the shard's head
-- row: the cell, shard and row id say which. waiting_seconds is since the waiter's statement began.
WITH outbox AS (
    SELECT c.oid, c.relname::text AS table_name
      FROM unnest(ARRAY['sentry_controloutbox', 'sentry_regionoutbox']::text[]) AS t(name)
      JOIN pg_class c ON c.oid = to_regclass(t.name)
),
waits AS (
    SELECT DISTINCT ON (l.pid) l.pid, l.locktype, l.mode,
           coalesce(l.relation, tl.relation) AS relid,
           coalesce(l.page, tl.page) AS page, coalesce(l.tuple, tl.tuple) AS tuple
      FROM pg_locks l
      LEFT JOIN pg_locks tl ON tl.pid = l.pid AND tl.locktype = 'tuple' AND tl.granted
     WHERE NOT l.granted
       AND coalesce(l.relation, tl.relation) IN (SELECT o.oid FROM outbox o)
     ORDER BY l.pid
     LIMIT 50
)
SELECT w.pid, a.application_name, o.table_name, w.locktype, w.mode,
       pg_blocking_pids(w.pid) AS blocked_by,
       extract(epoch FROM now() - a.query_start)::float8 AS waiting_seconds,
       lr.cell, lr.shard_scope, lr.shard_identifier, lr.id AS row_id
  FROM waits w
  JOIN outbox o ON o.oid = w.relid
  LEFT JOIN pg_stat_activity a ON a.pid = w.pid
  LEFT JOIN LATERAL (
    SELECT r.region_name::text AS cell, r.shard_scope, r.shard_identifier, r.id
      FROM sentry_controloutbox r
     WHERE w.relid = to_regclass('sentry_controloutbox')
       AND r.ctid = format('(%s,%s)', w.page, w.tuple)::tid
    UNION ALL
    SELECT NULL::text AS cell, r.shard_scope, r.shard_identifier, r.id
      FROM sentry_regionoutbox r
     WHERE w.relid = to_regclass('sentry_regionoutbox')
       AND r.ctid = format('(%s,%s)', w.page, w.tuple)::tid
  ) lr ON w.page IS NOT NULL
 ORDER BY w.pid;
