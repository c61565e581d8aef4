-- outboxctl: object-outboxes
-- Outboxes of ORGANIZATION_MEMBER_UPDATE object 10 in sentry_regionoutbox (cell silo), newest first.
-- The newest row is the one Sentry delivers; older rows of the same shard are superseded.
-- Speed: the shard is given, so this is one probe of the shard index.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1  -- --shard
   AND o.category = 3  -- ORGANIZATION_MEMBER_UPDATE
   AND o.object_identifier = 10
 ORDER BY o.id DESC
 LIMIT 20;
