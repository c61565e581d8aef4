-- outboxctl: bulk-skip-rows
-- The rows skip --category ORGANIZATION_MEMBER_UPDATE archives, then deletes: in every coalesce group of the
-- category with a matching row, every row up to the group's highest matching id.
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
SELECT b.shard_scope, b.shard_identifier
  FROM unnest(ARRAY[0, 0]::integer[], ARRAY[1, 2]::bigint[]) AS b (shard_scope, shard_identifier)
    ) s
),
groups AS (
    SELECT o.shard_scope, o.shard_identifier, o.object_identifier, max(o.id) AS up_to
      FROM batch b
      JOIN sentry_controloutbox o
        ON o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     WHERE o.category = 3  -- ORGANIZATION_MEMBER_UPDATE
       AND o.region_name = 'x''; DROP TABLE y; --'
       AND o.date_added >= '2026-01-02 03:04:05Z'::timestamptz
       AND o.date_added < '2026-01-02 03:04:05Z'::timestamptz
     GROUP BY o.shard_scope, o.shard_identifier, o.object_identifier
)
SELECT o.id, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.region_name::text AS cell,
       o.payload::text AS payload, o.scheduled_from, o.scheduled_for, o.date_added
  FROM groups g
  JOIN sentry_controloutbox o
    ON o.shard_scope = g.shard_scope
   AND o.shard_identifier = g.shard_identifier
   AND o.category = 3  -- ORGANIZATION_MEMBER_UPDATE
   AND o.object_identifier = g.object_identifier
   AND o.id <= g.up_to
 WHERE o.region_name = 'x''; DROP TABLE y; --'
 ORDER BY o.id;
