-- outboxctl: message
-- Outbox row 2 of sentry_controloutbox (control silo) with its coalesce group and shard.
-- delivers = true: this row is the newest of its group and is the one Sentry delivers.
-- is_head = true: this row is the shard's lowest id, the one Sentry locks and delivers first
-- (a poison message blocks its whole shard from here).
SELECT o.id, o.region_name, o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       g.group_rows, g.newest_id, o.id = g.newest_id AS delivers,
       sh.shard_depth, sh.head_id, o.id = sh.head_id AS is_head,
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
 CROSS JOIN LATERAL (
    SELECT count(*) AS shard_depth, min(x.id) AS head_id
      FROM sentry_controloutbox x
     WHERE x.region_name = o.region_name
       AND x.shard_scope = o.shard_scope
       AND x.shard_identifier = o.shard_identifier
 ) sh
 WHERE o.id = 2;
