-- outboxctl compact --print-sql: the rows compact would archive, then delete. outboxctl writes
-- them to its archive file (synced) before the DELETE; psql cannot, so the DELETE below is
-- commented out and this script changes nothing. To archive and delete: outboxctl compact … --yes

-- outboxctl: session
-- What outboxctl sends first: the settings hold for this transaction alone (SET LOCAL).
BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE;
SET LOCAL application_name = 'outboxctl/drain';
SET LOCAL statement_timeout = '30000';
SET LOCAL jit = off;

-- outboxctl: superseded
-- Rows a drain would delete undelivered: each coalesce group's rows below its newest id.
/* outboxctl compact: INC-1 */ WITH newest AS (
    SELECT o.category, o.object_identifier, max(o.id) AS newest_id
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
     GROUP BY o.category, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_regionoutbox o
  JOIN newest n ON true
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = n.category
   AND o.object_identifier = n.object_identifier
   AND o.id < n.newest_id;

-- -- outboxctl: superseded-delete
-- -- What outboxctl deletes after archiving the rows above.
-- /* outboxctl compact: INC-1 */ DELETE FROM sentry_regionoutbox d
--  WHERE d.id IN (SELECT s.id FROM (
-- WITH newest AS (
--     SELECT o.category, o.object_identifier, max(o.id) AS newest_id
--       FROM sentry_regionoutbox o
--      WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
--        AND o.shard_identifier = 7
--      GROUP BY o.category, o.object_identifier
-- )
-- SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, NULL::text AS cell,
--        o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
--   FROM sentry_regionoutbox o
--   JOIN newest n ON true
--  WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
--    AND o.shard_identifier = 7
--    AND o.category = n.category
--    AND o.object_identifier = n.object_identifier
--    AND o.id < n.newest_id
--  ) s);

-- outboxctl: rollback
-- This script changes nothing: uncomment the DELETE and COMMIT instead to delete without an archive.
ROLLBACK;
