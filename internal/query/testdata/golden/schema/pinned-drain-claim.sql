-- outboxctl: drain-claim
-- Apply the backoff to every row of the shard before processing it; return the schedules it replaced.
WITH old AS MATERIALIZED (
    SELECT o.id, o.scheduled_from, o.scheduled_for
      FROM sentry.sentry_controloutbox o
     WHERE o.region_name = 'us'
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
),
pushed AS (
    UPDATE sentry.sentry_controloutbox o
       SET scheduled_for = now() + least(greatest('2026-03-04 05:07:07Z'::timestamptz::timestamptz - '2026-03-04 05:06:07Z'::timestamptz::timestamptz, interval '1 second') * 2, interval '1 hour'),
           scheduled_from = now()
     WHERE o.region_name = 'us'
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
    RETURNING o.scheduled_from AS claimed_from, o.scheduled_for AS claimed_for
),
claimed AS (
    SELECT DISTINCT p.claimed_from, p.claimed_for
      FROM pushed p
)
SELECT old.scheduled_from, old.scheduled_for, c.claimed_from, c.claimed_for, array_agg(old.id) AS ids
  FROM old
 CROSS JOIN claimed c
 GROUP BY old.scheduled_from, old.scheduled_for, c.claimed_from, c.claimed_for;
