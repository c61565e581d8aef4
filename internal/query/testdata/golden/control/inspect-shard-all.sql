-- outboxctl: shard-messages-all
-- Every message of shard ORGANIZATION_SCOPE/2 in sentry_controloutbox (control silo), newest first.
-- group_rows = rows sharing (category, object_identifier); delivers = true marks the newest row
-- of the group, the one Sentry delivers (its payload wins); the others are superseded.
WITH groups AS MATERIALIZED (
    SELECT x.region_name, x.category, x.object_identifier, count(*) AS group_rows, max(x.id) AS newest_id
      FROM sentry_controloutbox x
     WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND x.shard_identifier = 2
     GROUP BY x.region_name, x.category, x.object_identifier
)
SELECT o.id, o.region_name, o.category, o.object_identifier,
       g.group_rows, o.id = g.newest_id AS delivers,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
  JOIN groups g ON g.category = o.category
   AND g.object_identifier = o.object_identifier
   AND g.region_name = o.region_name
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 2
 ORDER BY o.id DESC;
