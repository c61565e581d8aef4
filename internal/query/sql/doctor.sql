-- The statements of outboxctl doctor. Each reads either the catalog and the statistics views
-- (cheap, no table privilege needed) or the outbox table through the indexes Sentry has
-- (reference §1.4), with bounded LIMITs: none reads the heap beyond a few rows per shard.
-- The next-* statements at the end are the next steps of its findings, for a DBA to run by
-- hand once they have looked: each printed on one line (query.Suggestion) with a remark.

-- name: doctor-server
-- Primary or standby and its replay lag, the autovacuum settings, whether this role sees
-- other sessions' state, and the age of the oldest running transaction.
SELECT pg_is_in_recovery() AS in_recovery,
       CASE WHEN pg_is_in_recovery()
            THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8
       END AS replay_lag_seconds,
       CASE WHEN pg_is_in_recovery()
            THEN pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint
       END AS replay_lag_bytes,
       current_setting('autovacuum') = 'on' AS autovacuum,
       current_setting('autovacuum_vacuum_threshold')::bigint AS vacuum_threshold,
       current_setting('autovacuum_vacuum_scale_factor')::float8 AS vacuum_scale_factor,
       current_setting('max_prepared_transactions')::int AS max_prepared_transactions,
       current_user::text AS role,
       pg_has_role('pg_read_all_stats', 'USAGE') AS sees_all_sessions,
       age(pg_snapshot_xmin(pg_current_snapshot())::text::xid)::bigint AS oldest_running_xid_age;

-- name: doctor-tables
-- Vacuum state of the outbox tables (@tables: their qualified names) from the statistics
-- functions and the catalog. The pg_stat_get_* functions pg_stat_all_tables is made of,
-- called for the two tables only: the view groups every relation of the database before
-- the join (its idx_scan sums pg_index), so it costs what the catalog holds, and planning
-- it on a fresh connection is several ms more (#27).
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
  FROM unnest(@tables::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
 ORDER BY t.n;

-- name: doctor-indexes
-- The indexes of the outbox tables by column set, so drift from Sentry's three indexes is
-- seen by columns, whatever the index names.
SELECT c.relname::text AS table_name,
       ic.relname::text AS index_name,
       ARRAY(SELECT coalesce(a.attname::text, '(expression)')
               FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
               LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS columns,
       i.indisvalid AS valid
  FROM unnest(@tables::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
  JOIN pg_index i ON i.indrelid = c.oid
  JOIN pg_class ic ON ic.oid = i.indexrelid
 ORDER BY t.n, ic.relname;

-- name: doctor-xmin-sessions
-- Sessions holding back the xmin horizon, oldest first (a transaction id or a snapshot).
SELECT a.pid, a.usename::text AS usename, a.application_name, a.backend_type, a.state,
       a.backend_xid::text AS backend_xid, a.backend_xmin::text AS backend_xmin,
       greatest(age(a.backend_xid), age(a.backend_xmin))::bigint AS xmin_age_xids,
       extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_seconds,
       extract(epoch FROM now() - a.state_change)::float8 AS state_age_seconds,
       left(a.query, 200) AS query
  FROM pg_stat_activity a
 WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
   AND a.pid <> pg_backend_pid()
 ORDER BY greatest(age(a.backend_xid), age(a.backend_xmin)) DESC, a.pid
 LIMIT @limit;

-- name: doctor-prepared-xacts
-- Prepared transactions (two-phase commit), oldest first.
SELECT p.gid, p.owner::text AS owner, p.database::text AS database,
       p.transaction::text AS xid, age(p.transaction)::bigint AS xmin_age_xids,
       p.prepared,
       extract(epoch FROM now() - p.prepared)::float8 AS age_seconds
  FROM pg_prepared_xacts p
 ORDER BY age(p.transaction) DESC, p.gid
 LIMIT @limit;

-- name: doctor-replication-slots
-- Replication slots with the xmin they hold and the WAL they keep.
SELECT s.slot_name::text AS slot_name, s.slot_type, s.active, s.active_pid,
       s.xmin::text AS xmin, age(s.xmin)::bigint AS xmin_age_xids,
       s.catalog_xmin::text AS catalog_xmin, age(s.catalog_xmin)::bigint AS catalog_xmin_age_xids,
       s.restart_lsn::text AS restart_lsn,
       pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
                       s.restart_lsn)::bigint AS retained_wal_bytes
  FROM pg_replication_slots s
 ORDER BY greatest(age(s.xmin), age(s.catalog_xmin)) DESC NULLS LAST, s.slot_name;

-- name: doctor-lock-timeout
-- A short statement timeout (@timeout, in milliseconds) for the rest of the transaction,
-- before doctor-lock-waits: pg_blocking_pids takes the lock manager's partition locks.
SELECT set_config('statement_timeout', @timeout, true) AS statement_timeout;

-- name: doctor-lock-waits
-- Sessions waiting on locks of the outbox tables (@tables), who blocks them, and, when the
-- lock is on a row, the row's shard (looked up by ctid). The region holds one
-- doctor-lock-row per outbox, joined by UNION ALL.
WITH outbox AS (
    SELECT c.oid, c.relname::text AS table_name
      FROM unnest(@tables::text[]) AS t(name)
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
     LIMIT @limit
)
SELECT w.pid, a.application_name, o.table_name, w.locktype, w.mode,
       pg_blocking_pids(w.pid) AS blocked_by,
       extract(epoch FROM now() - a.query_start)::float8 AS waiting_seconds,
       lr.cell, lr.shard_scope, lr.shard_identifier, lr.id AS row_id
  FROM waits w
  JOIN outbox o ON o.oid = w.relid
  LEFT JOIN pg_stat_activity a ON a.pid = w.pid
  LEFT JOIN LATERAL (
/* TEMPLATE_BEGIN: row_lookups */    SELECT r.region_name::text AS cell, r.shard_scope, r.shard_identifier, r.id
      FROM sentry_controloutbox r
     WHERE w.relid = to_regclass(@t)
       AND r.ctid = format('(%s,%s)', w.page, w.tuple)::tid/* TEMPLATE_END: row_lookups */
  ) lr ON w.page IS NOT NULL
 ORDER BY w.pid;

-- name: doctor-lock-row
-- Part of doctor-lock-waits (not a statement of its own: w is the waiter): the locked row
-- of one outbox, by ctid. Every branch but the first is a UNION ALL.
    /* EITHER: first */SELECT/* OR: UNION ALL
    SELECT */ /* EITHER: control */r./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell, r.shard_scope, r.shard_identifier, r.id
      FROM /* TEMPLATE: table */sentry_controloutbox r
     WHERE w.relid = to_regclass(@t)
       AND r.ctid = format('(%s,%s)', w.page, w.tuple)::tid

-- name: doctor-unclaimed-shards
-- Due shards among the shards of the oldest @sample rows, longest unclaimed first: each
-- confirmed due by one probe of the (…, scheduled_for) index and read at its head.
WITH oldest AS (
    SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
     ORDER BY o.id
     LIMIT @sample
),
shards AS (
    SELECT DISTINCT * FROM oldest
)
SELECT /* IF: control */s./* TEMPLATE: cell_column */region_name, /* END: control */s.shard_scope, s.shard_identifier, n.next_attempt,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_claim, head.date_added AS head_added,
       extract(epoch FROM now() - head.scheduled_from)::float8 AS unclaimed_seconds,
       count(*) OVER () AS due_shards
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
       AND /* END: control */o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
       AND /* END: control */o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 WHERE n.next_attempt <= now()
 ORDER BY head.scheduled_from, /* IF: control */s./* TEMPLATE: cell_column */region_name, /* END: control */s.shard_scope, s.shard_identifier
 LIMIT @limit;

-- name: doctor-capped-shards
-- Shards in backoff whose head row's delay reached the cap (@cap seconds): the first @limit
-- in key order, as the selectors (--stuck --at-cap) take them, listed oldest head first.
-- The work is bounded by the shards returned, not by the shards in backoff (13,000 on a bad
-- day): a walk of the (…, scheduled_for) index steps from one shard holding a future row
-- to the next (one probe per such shard, not one index entry per row: a 2M-row shard in
-- backoff is one step), confirms each in backoff by one probe for its earliest
-- scheduled_for, reads its head (lowest id) through the (…, id) index, and carries the
-- count of shards found at the cap: it stops at the @limit-th. Only the shards returned
-- are counted (their rows scheduled in the future: in a confirmed shard every row), each
-- up to @depth_cap rows: a depth of the cap means at least that many (depth_at_least), so
-- a 2M-row shard at the cap costs 10,000 index entries, not 2M; capped_shards is how many
-- are returned.
WITH RECURSIVE walk AS (
    SELECT f.*, p.*, p.at_cap::int AS found
      FROM (SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
              FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE o.scheduled_for > now()
               /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
             ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
             LIMIT 1) f
     CROSS JOIN LATERAL (
        SELECT n.next_attempt, head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
               head.scheduled_from AS last_attempt, head.date_added AS head_added,
               extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
               head.xmax AS head_xmax,
               n.next_attempt > now() AND head.scheduled_for - head.scheduled_from >= @cap::int * interval '1 second' AS at_cap
          FROM (SELECT o.scheduled_for AS next_attempt
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = f./* TEMPLATE: cell_column */region_name
                   AND /* END: control */o.shard_scope = f.shard_scope
                   AND o.shard_identifier = f.shard_identifier
                 ORDER BY o.scheduled_for
                 LIMIT 1) n,
               (SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = f./* TEMPLATE: cell_column */region_name
                   AND /* END: control */o.shard_scope = f.shard_scope
                   AND o.shard_identifier = f.shard_identifier
                 ORDER BY o.id
                 LIMIT 1) head
     ) p
    UNION ALL
    -- The next shard holding a future row, read as the first was; none once the limit
    -- is found at the cap.
    SELECT nx.*, p.*, w.found + p.at_cap::int
      FROM walk w
     CROSS JOIN LATERAL (
        SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE (/* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier)
               > (/* IF: control */w./* TEMPLATE: cell_column */region_name, /* END: control */w.shard_scope, w.shard_identifier)
           AND o.scheduled_for > now()
           /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
         ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
         LIMIT 1
     ) nx
     CROSS JOIN LATERAL (
        SELECT n.next_attempt, head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
               head.scheduled_from AS last_attempt, head.date_added AS head_added,
               extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
               head.xmax AS head_xmax,
               n.next_attempt > now() AND head.scheduled_for - head.scheduled_from >= @cap::int * interval '1 second' AS at_cap
          FROM (SELECT o.scheduled_for AS next_attempt
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = nx./* TEMPLATE: cell_column */region_name
                   AND /* END: control */o.shard_scope = nx.shard_scope
                   AND o.shard_identifier = nx.shard_identifier
                 ORDER BY o.scheduled_for
                 LIMIT 1) n,
               (SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
                  FROM /* TEMPLATE: table */sentry_controloutbox o
                 WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = nx./* TEMPLATE: cell_column */region_name
                   AND /* END: control */o.shard_scope = nx.shard_scope
                   AND o.shard_identifier = nx.shard_identifier
                 ORDER BY o.id
                 LIMIT 1) head
     ) p
     WHERE w.found < @limit
),
capped AS (
    SELECT * FROM walk k WHERE k.at_cap
)
SELECT /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.shard_scope, h.shard_identifier, d.depth,
       d.depth >= @depth_cap AS depth_at_least, h.next_attempt,
       h.head_id, h.head_category, h.head_object, h.last_attempt, h.head_added,
       h.last_delay_seconds, count(*) OVER () AS capped_shards, lk.head_locked,
       g.group_rows, gn.group_newest_id, gn.group_newest_added
  FROM capped h
/* TEMPLATE_BEGIN: head_group */ CROSS JOIN LATERAL (SELECT false AS head_locked) lk
 CROSS JOIN LATERAL (SELECT 1::bigint AS group_rows) g
 CROSS JOIN LATERAL (SELECT h.head_id AS group_newest_id, h.head_added AS group_newest_added) gn
 CROSS JOIN LATERAL (SELECT 1::bigint AS depth) d/* TEMPLATE_END: head_group */
 ORDER BY h.head_added, /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.shard_scope, h.shard_identifier;

-- name: made-due-heads
-- The shards outboxctl made due (its ledger: @scopes/@ids, in the control silo with their
-- @cells), each read at its head now: the head row, its schedule (scheduled_from is the
-- last claim, scheduled_for - scheduled_from the backoff step it set) and its coalesce
-- group's size (up to @group_cap) and newest row. A shard that no longer holds rows is not
-- returned: its rows were delivered (or removed).
WITH made_due AS (
    SELECT /* IF: control */m.cell, /* END: control */m.shard_scope, m.shard_identifier
      FROM unnest(/* IF: control */@cells::text[], /* END: control */@scopes::int[], @ids::bigint[]) AS m(/* IF: control */cell, /* END: control */shard_scope, shard_identifier)
),
heads AS (
    SELECT /* IF: control */m.cell AS /* TEMPLATE: cell_column */region_name, /* END: control */m.shard_scope, m.shard_identifier,
           head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
           head.scheduled_from AS last_attempt, head.scheduled_for AS next_attempt, head.date_added AS head_added,
           extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
           head.xmax AS head_xmax
      FROM made_due m
     CROSS JOIN LATERAL (
        SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
          FROM /* TEMPLATE: table */sentry_controloutbox o
         WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = m.cell
           AND /* END: control */o.shard_scope = m.shard_scope
           AND o.shard_identifier = m.shard_identifier
         ORDER BY o.id
         LIMIT 1
     ) head
)
SELECT /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.shard_scope, h.shard_identifier,
       h.head_id, h.head_category, h.head_object, h.last_attempt, h.next_attempt, h.head_added,
       h.last_delay_seconds, lk.head_locked, d.depth, g.group_rows, gn.group_newest_id, gn.group_newest_added
  FROM heads h
/* TEMPLATE_BEGIN: head_group */ CROSS JOIN LATERAL (SELECT false AS head_locked) lk
 CROSS JOIN LATERAL (SELECT 1::bigint AS group_rows) g
 CROSS JOIN LATERAL (SELECT h.head_id AS group_newest_id, h.head_added AS group_newest_added) gn
 CROSS JOIN LATERAL (SELECT 1::bigint AS depth) d/* TEMPLATE_END: head_group */
 ORDER BY /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.shard_scope, h.shard_identifier;

-- name: head-group
-- Part of doctor-capped-shards and made-due-heads (not a statement of its own: h is a shard
-- read at its head, with head_category, head_object and head_xmax; their region holds a
-- stand-in). Whether the head row is held by a transaction still in progress (its xmax,
-- widened to the snapshot's epoch, not yet visible: a drain delivering it right now, or a
-- session holding its lock; either way no attempt has failed on it yet); the head's
-- coalesce group (what Sentry delivers once, its newest row's payload, then deletes 50
-- rows at a time in the same transaction): its rows up to @group_cap (a group that large
-- cannot be finished inside the drain task's deadline: a hot shard, not poison) and its
-- newest row (the one that failed, unless written after the last attempt); and the shard's
-- rows up to @depth_cap (in a shard in backoff every row is scheduled in the future).
 CROSS JOIN LATERAL (
    SELECT (h.head_xmax::text::bigint <> 0 AND NOT pg_visible_in_snapshot(
           ((pg_snapshot_xmax(pg_current_snapshot())::text::bigint >> 32 << 32) + h.head_xmax::text::bigint
            - CASE WHEN h.head_xmax::text::bigint > (pg_snapshot_xmax(pg_current_snapshot())::text::bigint & 4294967295)
                   THEN 4294967296 ELSE 0 END)::text::xid8,
           pg_current_snapshot())) AS head_locked
 ) lk
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows
      FROM (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = h./* TEMPLATE: cell_column */region_name
               AND /* END: control */o.shard_scope = h.shard_scope
               AND o.shard_identifier = h.shard_identifier
               AND o.category = h.head_category
               AND o.object_identifier = h.head_object
             LIMIT @group_cap) x
 ) g
 CROSS JOIN LATERAL (
    SELECT o.id AS group_newest_id, o.date_added AS group_newest_added
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = h./* TEMPLATE: cell_column */region_name
       AND /* END: control */o.shard_scope = h.shard_scope
       AND o.shard_identifier = h.shard_identifier
       AND o.category = h.head_category
       AND o.object_identifier = h.head_object
     ORDER BY o.id DESC
     LIMIT 1
 ) gn
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = h./* TEMPLATE: cell_column */region_name
               AND /* END: control */o.shard_scope = h.shard_scope
               AND o.shard_identifier = h.shard_identifier
             LIMIT @depth_cap) x
 ) d

-- name: database-identity
-- Which database this is, the same on its replicas (the cluster's system identifier) and
-- whatever host or role reached it: outboxctl's ledger of shards it made due is evidence
-- only for the database it names.
SELECT (SELECT system_identifier FROM pg_control_system())::text || '/' || current_database() AS identity,
       now() AS now;

-- name: rows-present
-- Which of @ids are still rows of the table: a coalesce group's newest row that is gone
-- was delivered (compact and Sentry's kill-switch trimming always keep it).
SELECT o.id
  FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
 ORDER BY o.id;

-- name: doctor-disabled-shards
-- The kill-switched shards (@ids of @scope) that still hold rows: depth up to @depth_cap,
-- the head row, and whether trimming has stalled (the head is the newest of its group). In
-- the control silo the cells holding each id are found first; in the cell silo each id is
-- one shard.
WITH shards AS (
    /* EITHER: control */SELECT DISTINCT o./* TEMPLATE: cell_column */region_name, o.shard_scope, o.shard_identifier
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = ANY (@ids::bigint[])/* OR: SELECT @scope::int AS shard_scope, i.id AS shard_identifier
      FROM unnest(@ids::bigint[]) AS i(id) */
)
SELECT /* IF: control */s./* TEMPLATE: cell_column */region_name, /* END: control */s.shard_scope, s.shard_identifier, d.depth,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_visit, head.date_added AS head_added,
       NOT EXISTS (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
                    WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
                      AND /* END: control */o.shard_scope = s.shard_scope
                      AND o.shard_identifier = s.shard_identifier
                      AND o.category = head.category
                      AND o.object_identifier = head.object_identifier
                      AND o.id > head.id) AS trimming_stalled
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM /* TEMPLATE: table */sentry_controloutbox o
     WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
       AND /* END: control */o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o
             WHERE /* IF: control */o./* TEMPLATE: cell_column */region_name = s./* TEMPLATE: cell_column */region_name
               AND /* END: control */o.shard_scope = s.shard_scope
               AND o.shard_identifier = s.shard_identifier
             LIMIT @depth_cap) x
 ) d
 ORDER BY d.depth DESC, /* IF: control */s./* TEMPLATE: cell_column */region_name, /* END: control */s.shard_scope, s.shard_identifier;

-- name: next-vacuum
-- A table whose dead tuples autovacuum has not removed.
VACUUM (VERBOSE) /* TEMPLATE: table */sentry_regionoutbox;

-- name: next-reset-autovacuum
-- A table with autovacuum_enabled = false.
ALTER TABLE /* TEMPLATE: table */sentry_regionoutbox RESET (autovacuum_enabled);

-- name: next-enable-autovacuum
ALTER SYSTEM SET autovacuum = on;

-- name: next-reload-conf
SELECT pg_reload_conf();

-- name: next-terminate-backend
-- A session holding the xmin horizon back, or blocking a waiter: its transaction rolls back.
SELECT pg_terminate_backend(@pid);

-- name: next-rollback-prepared
-- An orphaned prepared transaction (@gid), in its own database.
ROLLBACK PREPARED @gid;

-- name: next-drop-replication-slot
SELECT pg_drop_replication_slot(@slot);
