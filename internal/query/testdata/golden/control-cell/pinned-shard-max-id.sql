-- outboxctl: shard-max-id
-- The shard's highest id: the drain never touches rows above it (unless --follow).
SELECT o.id AS max_id
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --'
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
 ORDER BY o.id DESC
 LIMIT 1;
