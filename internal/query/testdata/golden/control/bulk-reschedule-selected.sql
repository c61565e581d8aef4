-- outboxctl: bulk-reschedule
-- Make the selected shards of sentry_controloutbox (control silo) due now with a fresh backoff: rows get
-- scheduled_for = THE_PAST (2016-08-01), as a new row has. A shard whose head row a drainer
-- holds is skipped (SKIP LOCKED, being_drained); outboxctl runs this one batch of shards per transaction.
/* outboxctl reschedule: INC-9 */ WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.scheduled_for > now()
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
)
SELECT k.region_name::text AS cell, k.shard_scope, k.shard_identifier, k.depth,
       head.id AS head_id, head.category AS head_category, head.last_delay_seconds, head.last_attempt, head.oldest_message, n.next_attempt
  FROM candidates k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt, o.date_added AS oldest_message
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 WHERE n.next_attempt > now()
   AND head.last_delay_seconds >= 3600  -- Sentry's 1 h backoff cap
 ORDER BY k.region_name, k.shard_scope, k.shard_identifier
    ) s
),
heads AS (
    SELECT b.shard_scope, b.shard_identifier, h.id AS head_id, l.id AS locked_id
      FROM batch b
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM sentry_controloutbox o
         WHERE o.shard_scope = b.shard_scope
           AND o.shard_identifier = b.shard_identifier
         ORDER BY o.id
         LIMIT 1
      ) h ON true
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM sentry_controloutbox o
         WHERE o.id = h.id
           FOR UPDATE SKIP LOCKED
      ) l ON true
),
rescheduled AS (
    UPDATE sentry_controloutbox o
       SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
           scheduled_from = now()
      FROM heads k
     WHERE k.locked_id IS NOT NULL
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
    RETURNING o.shard_scope, o.shard_identifier
),
counted AS (
    SELECT r.shard_scope, r.shard_identifier, count(*) AS rows
      FROM rescheduled r
     GROUP BY r.shard_scope, r.shard_identifier
)
SELECT k.shard_scope, k.shard_identifier, k.head_id IS NULL AS empty,
       k.head_id IS NOT NULL AND k.locked_id IS NULL AS being_drained, coalesce(c.rows, 0) AS rows
  FROM heads k
  LEFT JOIN counted c ON c.shard_scope = k.shard_scope AND c.shard_identifier = k.shard_identifier
 ORDER BY k.shard_scope, k.shard_identifier;
