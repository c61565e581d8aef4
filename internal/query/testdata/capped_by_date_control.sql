-- outboxctl: doctor-capped-shards
-- Shards of sentry_controloutbox (control silo) in backoff at Sentry's 1 h cap, oldest head message first:
-- the head row (lowest id) has failed about a dozen times in a row and blocks the whole shard.
WITH RECURSIVE walk AS (
    (SELECT o.region_name, o.shard_scope, o.shard_identifier
       FROM sentry_controloutbox o
      WHERE o.scheduled_for > now()
      ORDER BY o.region_name, o.shard_scope, o.shard_identifier
      LIMIT 1)
    UNION ALL
    SELECT nx.region_name, nx.shard_scope, nx.shard_identifier
      FROM walk w
     CROSS JOIN LATERAL (
        SELECT o.region_name, o.shard_scope, o.shard_identifier
          FROM sentry_controloutbox o
         WHERE (o.region_name, o.shard_scope, o.shard_identifier)
               > (w.region_name, w.shard_scope, w.shard_identifier)
           AND o.scheduled_for > now()
         ORDER BY o.region_name, o.shard_scope, o.shard_identifier
         LIMIT 1
     ) nx
),
backing_off AS (
    SELECT k.*, h.next_attempt
      FROM walk k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM sentry_controloutbox o
         WHERE o.region_name = k.region_name
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
),
capped AS (
    SELECT k.*, head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
           head.scheduled_from AS last_attempt, head.date_added AS head_added,
           extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
           count(*) OVER () AS capped_shards,
           -- The head row held by a transaction still in progress (its xmax, widened to the
           -- snapshot's epoch, not yet visible): a drain delivering it right now, or a
           -- session holding its lock. Either way no attempt has failed on it yet.
           (head.xmax::text::bigint <> 0 AND NOT pg_visible_in_snapshot(
           ((pg_snapshot_xmax(pg_current_snapshot())::text::bigint >> 32 << 32) + head.xmax::text::bigint
            - CASE WHEN head.xmax::text::bigint > (pg_snapshot_xmax(pg_current_snapshot())::text::bigint & 4294967295)
                   THEN 4294967296 ELSE 0 END)::text::xid8,
           pg_current_snapshot())) AS head_locked
      FROM backing_off k
     CROSS JOIN LATERAL (
        SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added, o.xmax
          FROM sentry_controloutbox o
         WHERE o.region_name = k.region_name
           AND o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         ORDER BY o.id
         LIMIT 1
     ) head
     WHERE head.scheduled_for - head.scheduled_from >= 3600::int * interval '1 second'  -- seconds: Sentry's backoff cap
     ORDER BY head.date_added, k.region_name, k.shard_scope, k.shard_identifier
     LIMIT 10
)
SELECT c.region_name, c.shard_scope, c.shard_identifier, d.depth,
       d.depth >= 10000 AS depth_at_least, c.next_attempt,  -- count at most this many rows of a shard
       c.head_id, c.head_category, c.head_object, c.last_attempt, c.head_added,
       c.last_delay_seconds, c.capped_shards, c.head_locked,
       g.group_rows, gn.group_newest_id, gn.group_newest_added
  FROM capped c
 -- The head's coalesce group (what Sentry delivers once, its newest row's payload, then
 -- deletes 50 rows at a time in the same transaction): its rows up to @group_cap (a group
 -- that large cannot be finished inside the drain task's deadline: a hot shard, not
 -- poison) and its newest row (the one that failed, unless written after the last attempt).
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows
      FROM (SELECT 1 FROM sentry_controloutbox o
             WHERE o.region_name = c.region_name
               AND o.shard_scope = c.shard_scope
               AND o.shard_identifier = c.shard_identifier
               AND o.category = c.head_category
               AND o.object_identifier = c.head_object
             LIMIT 1000) x  -- count a head group up to this many rows: a hot shard's
 ) g
 CROSS JOIN LATERAL (
    SELECT o.id AS group_newest_id, o.date_added AS group_newest_added
      FROM sentry_controloutbox o
     WHERE o.region_name = c.region_name
       AND o.shard_scope = c.shard_scope
       AND o.shard_identifier = c.shard_identifier
       AND o.category = c.head_category
       AND o.object_identifier = c.head_object
     ORDER BY o.id DESC
     LIMIT 1
 ) gn
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM sentry_controloutbox o
             WHERE o.region_name = c.region_name
               AND o.shard_scope = c.shard_scope
               AND o.shard_identifier = c.shard_identifier
               AND o.scheduled_for > now()
             LIMIT 10000) x  -- count at most this many rows of a shard
 ) d
 ORDER BY c.head_added, c.region_name, c.shard_scope, c.shard_identifier;
