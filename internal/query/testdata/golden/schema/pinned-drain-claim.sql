-- outboxctl: drain-claim
-- Apply the backoff to every row of the shard before processing it; return the schedules it replaced.
WITH next AS (
    SELECT now() AS claimed_from,
           now() + least(greatest('2026-03-04 05:07:07Z'::timestamptz::timestamptz - '2026-03-04 05:06:07Z'::timestamptz::timestamptz, interval '1 second') * 2, interval '1 hour') AS claimed_for
),
pushed AS (
    UPDATE sentry.sentry_controloutbox o
       SET scheduled_for = now() + least(greatest('2026-03-04 05:07:07Z'::timestamptz::timestamptz - '2026-03-04 05:06:07Z'::timestamptz::timestamptz, interval '1 second') * 2, interval '1 hour'),
           scheduled_from = now()
     WHERE o.region_name = 'us'
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
)
SELECT old.scheduled_for, n.claimed_from, n.claimed_for, array_agg(old.id) AS ids,
       min(old.scheduled_from) AS scheduled_from, -- the rows' one scheduled_from, when they share it
       CASE WHEN min(old.scheduled_from) IS DISTINCT FROM max(old.scheduled_from) OR count(old.scheduled_from) < count(*)
            THEN array_agg(old.scheduled_from) END AS froms
  FROM sentry.sentry_controloutbox old
 CROSS JOIN next n
 WHERE old.region_name = 'us'
   AND old.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND old.shard_identifier = 7
 GROUP BY old.scheduled_for, n.claimed_from, n.claimed_for;
