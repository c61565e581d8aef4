-- outboxctl: drain-head
-- Lock the shard's lowest row without waiting (claims the shard).
SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --'
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT;

-- outboxctl: drain-head
-- Lock the shard's lowest row without waiting (claims the shard).
SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --'
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.id <= 90  -- the highest id in the plan
   AND o.id > 40  -- below: groups already delivered
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT;
