-- outboxctl: shard-messages
-- Messages of shard ORGANIZATION_SCOPE/2 in sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --', newest first.
-- group_rows = rows sharing (category, object_identifier); delivers = true marks the newest row
-- of the group, the one Sentry delivers (its payload wins); the others are superseded.
SELECT o.id, o.region_name, o.category, o.object_identifier,
       g.group_rows, o.id = g.newest_id AS delivers,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM sentry_controloutbox o
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows, max(x.id) AS newest_id
      FROM sentry_controloutbox x
     WHERE x.region_name = o.region_name
       AND x.shard_scope = o.shard_scope
       AND x.shard_identifier = o.shard_identifier
       AND x.category = o.category
       AND x.object_identifier = o.object_identifier
 ) g
 WHERE o.region_name = 'x''; DROP TABLE y; --'
   AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 2
 ORDER BY o.id DESC;
