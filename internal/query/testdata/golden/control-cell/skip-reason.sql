-- outboxctl: skip-group-rows
-- The rows skip archives, then deletes: the message's whole coalesce group.
/* outboxctl skip: INC-9 * / DELETE FROM x; -- it's / * again */ WITH m AS (
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

-- outboxctl: skip-group-rows-delete
-- What outboxctl deletes after archiving the rows above.
/* outboxctl skip: INC-9 * / DELETE FROM x; -- it's / * again */ DELETE FROM sentry_controloutbox d
 WHERE d.id IN (SELECT s.id FROM (
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
 ORDER BY o.id
 ) s);

-- outboxctl: delete-archived
-- Delete rows the archive has staged, by id; returns the ids deleted.
/* outboxctl skip: INC-9 * / DELETE FROM x; -- it's / * again */ DELETE FROM sentry_controloutbox o
 WHERE o.id = ANY (ARRAY[1, 2]::bigint[])
RETURNING o.id;
