-- outboxctl: doctor-unclaimed-shards
-- Due shards among the shards of the oldest rows of sentry_regionoutbox (cell silo), longest unclaimed first.
-- last_claim = the head row's scheduled_from: when Sentry last claimed the shard (or wrote the
-- row, if it never did). Due and unclaimed for minutes: Sentry's drain tasks are not running or
-- not reaching this database. Claimed seconds ago: probably draining right now.
WITH oldest AS (
    SELECT o.shard_scope, o.shard_identifier
      FROM sentry_regionoutbox o
     ORDER BY o.id
     LIMIT 1000  -- oldest rows whose shards are checked
),
shards AS (
    SELECT DISTINCT * FROM oldest
)
SELECT s.shard_scope, s.shard_identifier, n.next_attempt,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_claim, head.date_added AS head_added,
       extract(epoch FROM now() - head.scheduled_from)::float8 AS unclaimed_seconds,
       count(*) OVER () AS due_shards
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 WHERE n.next_attempt <= now()
 ORDER BY head.scheduled_from, s.shard_scope, s.shard_identifier
 LIMIT 10;
