-- outboxctl: drain-archive-rows
-- The rows about to be deleted without delivery, whole, for the archive.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.region_name::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
  JOIN unnest(ARRAY[3]::bigint[], ARRAY[11]::bigint[], ARRAY[50]::bigint[]) AS g(category, object_identifier, up_to) ON true
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = g.category
   AND o.object_identifier = g.object_identifier
   AND o.id <= g.up_to
 ORDER BY o.id;

-- outboxctl: drain-archive-rows
-- The rows about to be deleted without delivery, whole, for the archive.
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.region_name::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
  JOIN unnest(ARRAY[3]::bigint[], ARRAY[11]::bigint[], ARRAY[50]::bigint[]) AS g(category, object_identifier, up_to) ON true
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = g.category
   AND o.object_identifier = g.object_identifier
   AND o.id < g.up_to
 ORDER BY o.id;
