-- outboxctl: drain-next
-- Delete the group just delivered; read the shard's head and the newest row of its group: the next message.
WITH del AS (
    SELECT 0::bigint AS id WHERE false
),
h AS (
    SELECT o.id, o.category, o.object_identifier
      FROM sentry_controloutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
     ORDER BY o.id
     LIMIT 1
)
SELECT n.id, h.category, h.object_identifier, n.payload, n.date_added, n.scheduled_for, h.id AS head_id,
       (SELECT count(*) FROM sentry_controloutbox x
     WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND x.shard_identifier = 7
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier) AS coalesced_count,
       (SELECT count(*) FROM del) AS deleted
  FROM (SELECT 1) one
  LEFT JOIN h ON true
  LEFT JOIN LATERAL (
    -- "x.id + 0" keeps the planner on the (…, category, object_identifier) index: the
    -- group's rows, then a top-1, rather than a backward walk through the shard's newer rows.
    SELECT x.id, x.payload::text AS payload, x.date_added, x.scheduled_for
      FROM sentry_controloutbox x
     WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND x.shard_identifier = 7
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier
     ORDER BY x.id + 0 DESC
     LIMIT 1
  ) n ON true;

-- outboxctl: drain-next
-- Delete the group just delivered; read the shard's head and the newest row of its group: the next message.
WITH del AS (
    DELETE FROM sentry_controloutbox o
     WHERE o.id IN (SELECT d.id FROM sentry_controloutbox d
                     WHERE d.shard_scope = 0  -- ORGANIZATION_SCOPE
                       AND d.shard_identifier = 7
                       AND d.category = 3  -- the group just delivered
                       AND d.object_identifier = 11
                       AND d.id <= 50
                     LIMIT 10000)
    RETURNING o.id
),
h AS (
    SELECT o.id, o.category, o.object_identifier
      FROM sentry_controloutbox o
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 7
       AND o.id <= 99  -- the highest id in the plan
       AND NOT (o.category = 3 AND o.object_identifier = 11 AND o.id <= 50)  -- the group just delivered
     ORDER BY o.id
     LIMIT 1
)
SELECT n.id, h.category, h.object_identifier, n.payload, n.date_added, n.scheduled_for, h.id AS head_id,
       (SELECT count(*) FROM sentry_controloutbox x
     WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND x.shard_identifier = 7
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier) AS coalesced_count,
       (SELECT count(*) FROM del) AS deleted
  FROM (SELECT 1) one
  LEFT JOIN h ON true
  LEFT JOIN LATERAL (
    -- "x.id + 0" keeps the planner on the (…, category, object_identifier) index: the
    -- group's rows, then a top-1, rather than a backward walk through the shard's newer rows.
    SELECT x.id, x.payload::text AS payload, x.date_added, x.scheduled_for
      FROM sentry_controloutbox x
     WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND x.shard_identifier = 7
       AND x.category = h.category
       AND x.object_identifier = h.object_identifier
     ORDER BY x.id + 0 DESC
     LIMIT 1
  ) n ON true;
