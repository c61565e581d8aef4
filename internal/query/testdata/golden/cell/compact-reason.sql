-- outboxctl: superseded
-- Rows a drain would delete undelivered: each coalesce group's rows below its newest id.
/* outboxctl compact: INC-9 * / DELETE FROM x; -- it's / * again */ WITH newest AS (
    SELECT o.category, o.object_identifier, max(o.id) AS newest_id
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
     GROUP BY o.category, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
  JOIN newest n ON true
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id;

-- outboxctl: superseded-delete
-- What outboxctl deletes after archiving the rows above.
/* outboxctl compact: INC-9 * / DELETE FROM x; -- it's / * again */ DELETE FROM sentry_regionoutbox d
 WHERE d.id IN (SELECT s.id FROM (
WITH newest AS (
    SELECT o.category, o.object_identifier, max(o.id) AS newest_id
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
     GROUP BY o.category, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
  JOIN newest n ON true
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 1
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id
 ) s);
