-- outboxctl: doctor-disabled-shards
-- Kill-switched ORGANIZATION_SCOPE shards of sentry_controloutbox (control silo) that still hold rows.
-- depth is counted up to 10000 (10000 means at least). trimming_stalled = the head row is the newest
-- of its coalesce group: Sentry's visits delete nothing more, and every row behind it waits until the
-- shard is re-enabled.
WITH shards AS (
    SELECT DISTINCT o.region_name, o.shard_scope, o.shard_identifier
      FROM sentry_controloutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = ANY (ARRAY[1, 2]::bigint[])
)
SELECT s.region_name, s.shard_scope, s.shard_identifier, d.depth,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_visit, head.date_added AS head_added,
       NOT EXISTS (SELECT 1 FROM sentry_controloutbox o
                    WHERE o.region_name = s.region_name
                      AND o.shard_scope = s.shard_scope
                      AND o.shard_identifier = s.shard_identifier
                      AND o.category = head.category
                      AND o.object_identifier = head.object_identifier
                      AND o.id > head.id) AS trimming_stalled
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM sentry_controloutbox o
     WHERE o.region_name = s.region_name
       AND o.shard_scope = s.shard_scope
       AND o.shard_identifier = s.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM sentry_controloutbox o
             WHERE o.region_name = s.region_name
               AND o.shard_scope = s.shard_scope
               AND o.shard_identifier = s.shard_identifier
             LIMIT 10000) x  -- count at most this many rows
 ) d
 ORDER BY d.depth DESC, s.region_name, s.shard_scope, s.shard_identifier;
