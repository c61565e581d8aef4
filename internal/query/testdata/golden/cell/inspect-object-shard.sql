-- outboxctl: object-outboxes
-- Outboxes of ORGANIZATION_UPDATE object 1 in sentry_regionoutbox (cell silo), newest first.
-- The newest row is the one Sentry delivers; older rows of the same shard are superseded.
-- Speed: the object id is the shard id for this category, so this is one probe of the shard index.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1  -- the object is the shard for ORGANIZATION_UPDATE
   AND o.category = 2  -- ORGANIZATION_UPDATE
   AND o.object_identifier = 1
 ORDER BY o.id DESC
 LIMIT 20;
