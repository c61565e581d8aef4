-- outboxctl: shard-messages
-- Messages of shard ORGANIZATION_SCOPE/1 in sentry_regionoutbox (cell silo): the head (head = true: the lowest row, which Sentry locks and is blocked on), then the newest.
-- group_rows = rows sharing (category, object_identifier).
-- delivers = true marks the newest row of its group, the one Sentry delivers (its payload wins);
-- the others are superseded.
SELECT p.id, p.category, p.object_identifier,
       (SELECT count(*) FROM (
          SELECT 1 FROM sentry_regionoutbox x
           WHERE x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier) g) AS group_rows,
       CASE WHEN p.head OR false THEN NOT EXISTS (
          SELECT 1 FROM sentry_regionoutbox x
           WHERE x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
             AND x.id > p.id)
       ELSE NOT EXISTS (
          SELECT 1 FROM (
             SELECT x.category, x.object_identifier FROM sentry_regionoutbox x
              WHERE x.shard_scope = p.shard_scope
                AND x.shard_identifier = p.shard_identifier
                AND x.id > p.id
             OFFSET 0) newer
           WHERE newer.category = p.category
             AND newer.object_identifier = p.object_identifier) END AS delivers,
       p.payload::text AS payload,
       p.scheduled_from, p.scheduled_for, p.date_added, p.head
  FROM (
    SELECT h.*, true AS head
      FROM (SELECT o.*
              FROM sentry_regionoutbox o
             WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1
             ORDER BY o.id
             LIMIT 1) h
    UNION ALL
    SELECT r.*, false AS head
      FROM (SELECT o.*
              FROM sentry_regionoutbox o
             WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1
             ORDER BY o.id DESC
             LIMIT 10) r
     WHERE r.id > (SELECT min(o.id) FROM sentry_regionoutbox o
             WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1)
  ) p
 ORDER BY p.head DESC, p.id DESC;
