-- outboxctl: bulk-reschedule
-- Make due now the shards whose head row was just removed (their backoff was earned by it): rows that
-- do not carry THE_PAST (2016-08-01) get it. A shard whose new head a drainer holds is skipped.
/* outboxctl skip */ WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
SELECT b.shard_scope, b.shard_identifier
  FROM unnest(ARRAY[0, 0]::integer[], ARRAY[1, 2]::bigint[]) AS b (shard_scope, shard_identifier)
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
       AND o.scheduled_for <> '2016-08-01 00:00:00+00'::timestamptz
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
