-- outboxctl: object-outboxes
-- Outboxes of ORGANIZATION_MEMBER_UPDATE object 10 in sentry_regionoutbox (cell silo), newest first.
-- The newest row is the one Sentry delivers; older rows of the same shard are superseded.
-- Speed: it scans the rows of ORGANIZATION_SCOPE (no index leads with category); the statement timeout bounds it.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
 WHERE o.category = 3  -- ORGANIZATION_MEMBER_UPDATE
   AND o.object_identifier = 10
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
 ORDER BY o.id DESC
 LIMIT 20;
