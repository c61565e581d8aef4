-- outboxctl: doctor-capped-shards
-- Shards of sentry_regionoutbox (cell silo) in backoff at Sentry's 1 h cap, oldest head message first:
-- the head row (lowest id) has failed about a dozen times in a row and blocks the whole shard.
WITH RECURSIVE walk AS (
    (SELECT o.shard_scope, o.shard_identifier
       FROM sentry_regionoutbox o
      WHERE o.scheduled_for > now()
      ORDER BY o.shard_scope, o.shard_identifier
      LIMIT 1)
    UNION ALL
    SELECT nx.shard_scope, nx.shard_identifier
      FROM walk w
     CROSS JOIN LATERAL (
        SELECT o.shard_scope, o.shard_identifier
          FROM sentry_regionoutbox o
         WHERE (o.shard_scope, o.shard_identifier)
               > (w.shard_scope, w.shard_identifier)
           AND o.scheduled_for > now()
         ORDER BY o.shard_scope, o.shard_identifier
         LIMIT 1
     ) nx
),
backing_off AS (
    SELECT k.*, h.next_attempt
      FROM walk k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM sentry_regionoutbox o
         WHERE o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
),
heads AS (
    -- Each shard's head id from the (…, id) index alone, no row read.
    SELECT k.*, (SELECT o.id
                   FROM sentry_regionoutbox o
                  WHERE o.shard_scope = k.shard_scope
                    AND o.shard_identifier = k.shard_identifier
                  ORDER BY o.id
                  LIMIT 1) AS head_id
      FROM backing_off k
),
capped AS (
    -- The heads read in id order (Sentry's: ids and date_added both grow with time, so
    -- the oldest heads first) until @limit are at the cap: only those and the heads below
    -- the cap before them are read, not every shard in backoff.
    SELECT k.*, head.category AS head_category, head.object_identifier AS head_object,
           head.scheduled_from AS last_attempt, head.date_added AS head_added,
           extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
           head.xmax AS head_xmax
      FROM (SELECT h.* FROM heads h ORDER BY h.head_id) k
      JOIN sentry_regionoutbox head ON head.id = k.head_id
     WHERE head.scheduled_for - head.scheduled_from >= 3600::int * interval '1 second'  -- seconds: Sentry's backoff cap
     ORDER BY k.head_id
     LIMIT 10
)
SELECT h.shard_scope, h.shard_identifier, d.depth,
       d.depth >= 10000 AS depth_at_least, h.next_attempt,  -- count at most this many rows of a shard
       h.head_id, h.head_category, h.head_object, h.last_attempt, h.head_added,
       h.last_delay_seconds, count(*) OVER () AS capped_shards, lk.head_locked,
       g.group_rows, gn.group_newest_id, gn.group_newest_added
  FROM capped h
 CROSS JOIN LATERAL (
    SELECT (h.head_xmax::text::bigint <> 0 AND NOT pg_visible_in_snapshot(
           ((pg_snapshot_xmax(pg_current_snapshot())::text::bigint >> 32 << 32) + h.head_xmax::text::bigint
            - CASE WHEN h.head_xmax::text::bigint > (pg_snapshot_xmax(pg_current_snapshot())::text::bigint & 4294967295)
                   THEN 4294967296 ELSE 0 END)::text::xid8,
           pg_current_snapshot())) AS head_locked
 ) lk
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows
      FROM (SELECT 1 FROM sentry_regionoutbox o
             WHERE o.shard_scope = h.shard_scope
               AND o.shard_identifier = h.shard_identifier
               AND o.category = h.head_category
               AND o.object_identifier = h.head_object
             LIMIT 1000) x  -- count a head group up to this many rows: a hot shard's
 ) g
 CROSS JOIN LATERAL (
    SELECT o.id AS group_newest_id, o.date_added AS group_newest_added
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = h.shard_scope
       AND o.shard_identifier = h.shard_identifier
       AND o.category = h.head_category
       AND o.object_identifier = h.head_object
     ORDER BY o.id DESC
     LIMIT 1
 ) gn
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM sentry_regionoutbox o
             WHERE o.shard_scope = h.shard_scope
               AND o.shard_identifier = h.shard_identifier
             LIMIT 10000) x  -- count at most this many rows of a shard
 ) d
 ORDER BY h.head_added, h.shard_scope, h.shard_identifier;
