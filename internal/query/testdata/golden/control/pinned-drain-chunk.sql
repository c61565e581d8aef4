-- outboxctl: drain-delete-group-chunk
-- Delete the delivered group up to the delivered row, a chunk at a time.
DELETE FROM sentry_controloutbox o
 WHERE o.id IN (SELECT x.id FROM sentry_controloutbox x
                 WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
                   AND x.shard_identifier = 7
                   AND x.category = 3
                   AND x.object_identifier = 11
                   AND x.id <= 50  -- the delivered row
                 LIMIT 10000)
RETURNING o.id;
