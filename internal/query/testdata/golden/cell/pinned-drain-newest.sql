-- outboxctl: drain-newest
-- The newest row of the coalesce group: the one delivered.
SELECT o.id, o.category, o.object_identifier, o.payload::text AS payload, o.date_added, o.scheduled_for
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = 3
   AND o.object_identifier = 11
 ORDER BY o.id DESC
 LIMIT 1;
