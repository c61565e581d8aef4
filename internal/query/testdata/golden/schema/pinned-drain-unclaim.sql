-- outboxctl: drain-unclaim
-- Put the shard's schedule back as it was before the claim.
UPDATE sentry.sentry_controloutbox o
   SET scheduled_from = timestamptz 'epoch' + g.from_us * interval '1 microsecond',
       scheduled_for = timestamptz 'epoch' + g.for_us * interval '1 microsecond'
  FROM unnest(ARRAY[1, 2]::bigint[], ARRAY[10, 20]::bigint[], ARRAY[30, 40]::bigint[]) AS g(id, from_us, for_us)
 WHERE o.region_name = 'us'
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.id = g.id
   AND o.scheduled_from = '2026-03-04 05:06:07Z'::timestamptz  -- what the claim wrote
   AND o.scheduled_for = '2026-03-04 06:06:07Z'::timestamptz;
