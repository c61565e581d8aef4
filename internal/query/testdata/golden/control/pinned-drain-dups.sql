-- outboxctl: drain-duplicates
-- Up to 50 ids of the coalesce group (Sentry: no ORDER BY).
SELECT o.id
  FROM sentry_controloutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = 3
   AND o.object_identifier = 11
 LIMIT 50;
