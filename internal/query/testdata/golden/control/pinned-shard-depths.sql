-- outboxctl: shard-depths
-- What waits in the listed ORGANIZATION_SCOPE shards of sentry_controloutbox (control silo).
SELECT o.region_name, o.shard_identifier, count(*) AS depth,
       count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
       min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
  FROM sentry_controloutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = ANY (ARRAY[1, 2]::bigint[])
 GROUP BY o.region_name, o.shard_identifier
 ORDER BY o.region_name, o.shard_identifier;
