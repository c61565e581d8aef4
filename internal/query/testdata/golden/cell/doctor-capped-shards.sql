-- outboxctl: doctor-capped-shards
-- Shards of sentry_regionoutbox (cell silo) in backoff at Sentry's 1 h cap: the first 10 in key order (as
-- --stuck --at-cap selects them), oldest head message first. The head row (lowest id) has failed
-- about a dozen times in a row and blocks the whole shard.
WITH RECURSIVE walk AS (
    SELECT f.*, p.*, p.at_cap::int AS found
      FROM (SELECT o.shard_scope, o.shard_identifier
              FROM sentry_regionoutbox o
             WHERE o.scheduled_for > now()
             ORDER BY o.shard_scope, o.shard_identifier
             LIMIT 1) f
     CROSS JOIN LATERAL (
        SELECT n.next_attempt, head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
               head.scheduled_from AS last_attempt, head.date_added AS head_added,
               extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
               head.xmax AS head_xmax,
               n.next_attempt > now() AND head.scheduled_for - head.scheduled_from >= 3600::int * interval '1 second' AS at_cap  -- seconds: Sentry's backoff cap
          FROM (SELECT o.scheduled_for AS next_attempt
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = f.shard_scope
                   AND o.shard_identifier = f.shard_identifier
                 ORDER BY o.scheduled_for
                 LIMIT 1) n,
               (SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = f.shard_scope
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
        SELECT o.shard_scope, o.shard_identifier
          FROM sentry_regionoutbox o
         WHERE (o.shard_scope, o.shard_identifier)
               > (w.shard_scope, w.shard_identifier)
           AND o.scheduled_for > now()
         ORDER BY o.shard_scope, o.shard_identifier
         LIMIT 1
     ) nx
     CROSS JOIN LATERAL (
        SELECT n.next_attempt, head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
               head.scheduled_from AS last_attempt, head.date_added AS head_added,
               extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
               head.xmax AS head_xmax,
               n.next_attempt > now() AND head.scheduled_for - head.scheduled_from >= 3600::int * interval '1 second' AS at_cap  -- seconds: Sentry's backoff cap
          FROM (SELECT o.scheduled_for AS next_attempt
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = nx.shard_scope
                   AND o.shard_identifier = nx.shard_identifier
                 ORDER BY o.scheduled_for
                 LIMIT 1) n,
               (SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
                  FROM sentry_regionoutbox o
                 WHERE o.shard_scope = nx.shard_scope
                   AND o.shard_identifier = nx.shard_identifier
                 ORDER BY o.id
                 LIMIT 1) head
     ) p
     WHERE w.found < 10
),
capped AS (
    SELECT * FROM walk k WHERE k.at_cap
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
