-- outboxctl: skip-group-rows
-- The rows skip archives, then deletes: the message's whole coalesce group.
WITH m AS (
    SELECT o.*
      FROM sentry_controloutbox o
     WHERE o.id = 2  -- the message to skip
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.region_name::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
  JOIN m ON o.region_name = m.region_name
       AND o.shard_scope = m.shard_scope
       AND o.shard_identifier = m.shard_identifier
       AND o.category = m.category
       AND o.object_identifier = m.object_identifier
 ORDER BY o.id;

-- outboxctl: skip-group-rows
-- The rows skip archives, then deletes: the message's whole coalesce group.
WITH m AS (
    SELECT o.*
      FROM sentry_controloutbox o
     WHERE o.id = 2  -- the message to skip
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.region_name::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
  JOIN m ON o.region_name = m.region_name
       AND o.shard_scope = m.shard_scope
       AND o.shard_identifier = m.shard_identifier
       AND o.category = m.category
       AND o.object_identifier = m.object_identifier
       AND o.id <= 1  -- the group's newest id in the plan
 ORDER BY o.id;
