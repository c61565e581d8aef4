-- outboxctl: shard-state
-- Backoff state of shard ORGANIZATION_SCOPE/1 in sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --'.
-- head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay
-- from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits
-- until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).
SELECT h.region_name, h.shard_scope, h.shard_identifier,
       d.depth, d.next_attempt, d.next_attempt <= now() AS due,
       h.id AS head_id, h.category AS head_category, h.object_identifier AS head_object,
       h.scheduled_from AS last_attempt,
       -- NULL for a row never attempted: Sentry writes it with scheduled_for (THE_PAST) before
       -- scheduled_from, which is no backoff step.
       CASE WHEN h.scheduled_for >= h.scheduled_from THEN extract(epoch FROM h.scheduled_for - h.scheduled_from)::float8 END AS last_delay_seconds,
       now() AS observed_at
  FROM (
    SELECT DISTINCT ON (o.region_name) o.id, o.region_name, o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
      FROM sentry_controloutbox o
     WHERE o.region_name = 'x''; DROP TABLE y; --'
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.shard_identifier = 1
     ORDER BY o.region_name, o.id
     LIMIT 1000
  ) h
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth, min(x.scheduled_for) AS next_attempt
      FROM sentry_controloutbox x
     WHERE x.region_name = h.region_name
       AND x.shard_scope = h.shard_scope
       AND x.shard_identifier = h.shard_identifier
 ) d
 ORDER BY h.region_name, h.id;

-- outboxctl: shard-categories
-- Per-category depth of shard ORGANIZATION_SCOPE/1 in sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --'.
-- coalesce_groups = distinct objects: the deliveries left for that category.
-- oldest_message / newest_message = date_added of the category's lowest-id / highest-id row.
WITH RECURSIVE c AS (
    (SELECT o.region_name, o.shard_scope, o.shard_identifier, o.category
       FROM sentry_controloutbox o
      WHERE o.region_name = 'x''; DROP TABLE y; --'
        AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
        AND o.shard_identifier = 1
      ORDER BY o.region_name, o.category
      LIMIT 1)
    UNION ALL
    SELECT nx.*
      FROM c
     CROSS JOIN LATERAL (
        SELECT o.region_name, o.shard_scope, o.shard_identifier, o.category
          FROM sentry_controloutbox o
         WHERE o.region_name = 'x''; DROP TABLE y; --'
           AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND o.shard_identifier = 1
           AND (o.region_name, o.category) > (c.region_name, c.category)
         ORDER BY o.region_name, o.category
         LIMIT 1
     ) nx
)
SELECT c.region_name, c.category, d.depth, d.coalesce_groups,
       (SELECT x.date_added FROM sentry_controloutbox x
         WHERE x.region_name = c.region_name
           AND x.shard_scope = c.shard_scope
           AND x.shard_identifier = c.shard_identifier
           AND x.category + 0 = c.category
         ORDER BY x.id LIMIT 1) AS oldest_message,
       (SELECT x.date_added FROM sentry_controloutbox x
         WHERE x.region_name = c.region_name
           AND x.shard_scope = c.shard_scope
           AND x.shard_identifier = c.shard_identifier
           AND x.category + 0 = c.category
         ORDER BY x.id DESC LIMIT 1) AS newest_message
  FROM c
 CROSS JOIN LATERAL (
    SELECT sum(g.n)::bigint AS depth, count(*) AS coalesce_groups
      FROM (SELECT count(*) AS n
              FROM sentry_controloutbox x
             WHERE x.region_name = c.region_name
               AND x.shard_scope = c.shard_scope
               AND x.shard_identifier = c.shard_identifier
               AND x.category = c.category
             GROUP BY x.object_identifier) g
 ) d
 ORDER BY d.depth DESC, c.region_name, c.category;

-- outboxctl: shard-messages
-- Messages of shard ORGANIZATION_SCOPE/1 in sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --': the head (head = true: the lowest row, which Sentry locks and is blocked on), then the newest.
-- group_rows = rows sharing (category, object_identifier), counted up to 100 (100 means at least).
-- delivers = true marks the newest row of its group, the one Sentry delivers (its payload wins);
-- the others are superseded.
SELECT p.id, p.region_name, p.category, p.object_identifier,
       (SELECT count(*) FROM (
          SELECT 1 FROM sentry_controloutbox x
           WHERE x.region_name = p.region_name
             AND x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
          LIMIT 100) g) AS group_rows,  -- count at most this many
       CASE WHEN p.head OR false THEN NOT EXISTS (
          SELECT 1 FROM sentry_controloutbox x
           WHERE x.region_name = p.region_name
             AND x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
             AND x.id > p.id)
       ELSE NOT EXISTS (
          SELECT 1 FROM (
             SELECT x.category, x.object_identifier FROM sentry_controloutbox x
              WHERE x.region_name = p.region_name
                AND x.shard_scope = p.shard_scope
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
              FROM sentry_controloutbox o
             WHERE o.region_name = 'x''; DROP TABLE y; --'
               AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1
             ORDER BY o.id
             LIMIT 1) h
    UNION ALL
    SELECT r.*, false AS head
      FROM (SELECT o.*
              FROM sentry_controloutbox o
             WHERE o.region_name = 'x''; DROP TABLE y; --'
               AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1
             ORDER BY o.id DESC
             LIMIT 50) r
     WHERE r.id > (SELECT min(o.id) FROM sentry_controloutbox o
             WHERE o.region_name = 'x''; DROP TABLE y; --'
               AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND o.shard_identifier = 1)
  ) p
 ORDER BY p.head DESC, p.id DESC;
