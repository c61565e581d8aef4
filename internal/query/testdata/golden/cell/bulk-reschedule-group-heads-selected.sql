-- outboxctl: bulk-reschedule
-- Make the selected shards of sentry_regionoutbox (cell silo) due now with a fresh backoff: the lowest row of each coalesce group gets (--group-heads)
-- scheduled_for = THE_PAST (2016-08-01), as a new row has. A shard whose head row a drainer
-- holds is skipped (SKIP LOCKED, being_drained); outboxctl runs this one batch of shards per transaction.
/* outboxctl reschedule: INC-9 */ WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
WITH candidates AS (
    SELECT o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM sentry_regionoutbox o
     WHERE o.scheduled_for > now()
     GROUP BY o.shard_scope, o.shard_identifier
)
SELECT NULL::text AS cell, k.shard_scope, k.shard_identifier, k.depth,
       head.id AS head_id, head.category AS head_category, head.last_delay_seconds, head.last_attempt, head.oldest_message, n.next_attempt
  FROM candidates k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt, o.date_added AS oldest_message
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 WHERE n.next_attempt > now()
 ORDER BY k.shard_scope, k.shard_identifier
    ) s
),
heads AS (
    SELECT b.shard_scope, b.shard_identifier, h.id AS head_id, l.id AS locked_id
      FROM batch b
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM sentry_regionoutbox o
         WHERE o.shard_scope = b.shard_scope
           AND o.shard_identifier = b.shard_identifier
         ORDER BY o.id
         LIMIT 1
      ) h ON true
      LEFT JOIN LATERAL (
        SELECT o.id
          FROM sentry_regionoutbox o
         WHERE o.id = h.id
           FOR UPDATE SKIP LOCKED
      ) l ON true
),
group_heads AS MATERIALIZED (
    SELECT k.shard_scope, k.shard_identifier, k.locked_id, g.id
      FROM heads k
     CROSS JOIN LATERAL (
        SELECT min(o.id) AS id
          FROM sentry_regionoutbox o
         WHERE o.shard_scope = k.shard_scope
           AND o.shard_identifier = k.shard_identifier
         GROUP BY o.category, o.object_identifier
     ) g
     WHERE k.locked_id IS NOT NULL
),
rescheduled AS (
    UPDATE sentry_regionoutbox o
       SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
           scheduled_from = now()
      FROM group_heads k
     WHERE k.locked_id IS NOT NULL
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
       AND o.id = k.id
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
