-- outboxctl: reschedule
-- Make the shard due now with a fresh backoff, group heads only (--group-heads): the lowest row of
-- each coalesce group gets scheduled_for = THE_PAST (2016-08-01); Sentry's next claim starts from a 2 s delay.
/* outboxctl reschedule */ UPDATE sentry_regionoutbox o
   SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
       scheduled_from = now()
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1
   AND o.id IN (
       SELECT min(g.id)
         FROM sentry_regionoutbox g
        WHERE g.shard_scope = 0  -- ORGANIZATION_SCOPE
          AND g.shard_identifier = 1
        GROUP BY g.category, g.object_identifier
   );

-- outboxctl: settle-reschedule
-- Whether a reschedule whose COMMIT got no answer committed.
WITH locked AS (
    SELECT o.scheduled_for
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
       AND o.id IN (
           SELECT min(g.id)
             FROM sentry_regionoutbox g
            WHERE g.shard_scope = 0  -- ORGANIZATION_SCOPE
              AND g.shard_identifier = 1
            GROUP BY g.category, g.object_identifier
       )
       FOR SHARE
)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE scheduled_for <> '2016-08-01 00:00:00+00'::timestamptz) AS not_rescheduled
  FROM locked;
