-- One shard (inspect shard): its backoff state, its categories and its messages. A shard is
-- (shard_scope, shard_identifier), and in the control silo also its cell; --cell narrows the
-- control silo's statements to one cell.

-- name: shard-state
-- Depth, earliest scheduled_for and the head: the lowest-id row, which Sentry locks and
-- derives the backoff from (one probe of the (…, id) index). Depth and next attempt are one
-- index-only pass over the (…, scheduled_for) index; or, given (depth_given), the depth is
-- bound from shard-categories' sums and the next attempt is one probe of that index. In the
-- control silo there is one head row per cell.
SELECT /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.shard_scope, h.shard_identifier,
       d.depth, d.next_attempt, d.next_attempt <= now() AS due,
       h.id AS head_id, h.category AS head_category, h.object_identifier AS head_object,
       h.scheduled_from AS last_attempt,
       -- NULL for a row never attempted: Sentry writes it with scheduled_for (THE_PAST) before
       -- scheduled_from, which is no backoff step.
       CASE WHEN h.scheduled_for >= h.scheduled_from THEN extract(epoch FROM h.scheduled_for - h.scheduled_from)::float8 END AS last_delay_seconds,
       now() AS observed_at
  FROM (
    SELECT /* IF: control */DISTINCT ON (o./* TEMPLATE: cell_column */region_name) /* END: control */o.id, /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND o.shard_scope = @scope
       AND o.shard_identifier = @shard
     ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.id
     LIMIT @limit
  ) h
 CROSS JOIN LATERAL (
    /* EITHER: counted */SELECT count(*) AS depth, min(x.scheduled_for) AS next_attempt
      FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = h./* TEMPLATE: cell_column */region_name/* END: control */
       AND x.shard_scope = h.shard_scope
       AND x.shard_identifier = h.shard_identifier/* OR: SELECT /* EITHER: control */coalesce((SELECT g.depth FROM unnest(@cells::text[], @depths::bigint[]) AS g(cell, depth)
             WHERE g.cell = h./* TEMPLATE: cell_column */region_name), 0)/* OR: @depth */::bigint AS depth,
           (SELECT x.scheduled_for FROM /* TEMPLATE: table */sentry_controloutbox x
             /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = h./* TEMPLATE: cell_column */region_name/* END: control */
               AND x.shard_scope = h.shard_scope
               AND x.shard_identifier = h.shard_identifier
             ORDER BY x.scheduled_for
             LIMIT 1) AS next_attempt */
 ) d
 ORDER BY /* IF: control */h./* TEMPLATE: cell_column */region_name, /* END: control */h.id;

-- name: shard-categories
-- Depth per category with coalesce groups and ages. The categories are walked on the
-- (…, category, object_identifier) index, one probe each; each category's depth and groups
-- are an index-only range of that index; its ages are one probe at each end of the (…, id)
-- index (category + 0 keeps the probe there: on the category index PostgreSQL would read and
-- sort every row of the category to find its lowest id).
WITH RECURSIVE c AS (
    (SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.category
       FROM /* TEMPLATE: table */sentry_controloutbox o
      /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
        AND o.shard_scope = @scope
        AND o.shard_identifier = @shard
      ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.category
      LIMIT 1)
    UNION ALL
    SELECT nx.*
      FROM c
     CROSS JOIN LATERAL (
        SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.category
          FROM /* TEMPLATE: table */sentry_controloutbox o
         /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
           AND o.shard_scope = @scope
           AND o.shard_identifier = @shard
           AND (/* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.category) > (/* IF: control */c./* TEMPLATE: cell_column */region_name, /* END: control */c.category)
         ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.category
         LIMIT 1
     ) nx
)
SELECT /* IF: control */c./* TEMPLATE: cell_column */region_name, /* END: control */c.category, d.depth, d.coalesce_groups,
       (SELECT x.date_added FROM /* TEMPLATE: table */sentry_controloutbox x
         /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = c./* TEMPLATE: cell_column */region_name/* END: control */
           AND x.shard_scope = c.shard_scope
           AND x.shard_identifier = c.shard_identifier
           AND x.category + 0 = c.category
         ORDER BY x.id LIMIT 1) AS oldest_message,
       (SELECT x.date_added FROM /* TEMPLATE: table */sentry_controloutbox x
         /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = c./* TEMPLATE: cell_column */region_name/* END: control */
           AND x.shard_scope = c.shard_scope
           AND x.shard_identifier = c.shard_identifier
           AND x.category + 0 = c.category
         ORDER BY x.id DESC LIMIT 1) AS newest_message
  FROM c
 CROSS JOIN LATERAL (
    SELECT sum(g.n)::bigint AS depth, count(*) AS coalesce_groups
      FROM (SELECT count(*) AS n
              FROM /* TEMPLATE: table */sentry_controloutbox x
             /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = c./* TEMPLATE: cell_column */region_name/* END: control */
               AND x.shard_scope = c.shard_scope
               AND x.shard_identifier = c.shard_identifier
               AND x.category = c.category
             GROUP BY x.object_identifier) g
 ) d
 ORDER BY d.depth DESC, /* IF: control */c./* TEMPLATE: cell_column */region_name, /* END: control */c.category;

-- name: shard-messages
-- The head (the shard's lowest row, which Sentry locks and is blocked on) first, then a page
-- from the (…, id) index, newest (or, not newest, oldest) first. "Is there a newer row in my
-- group" looks at the shard's rows newer than the message for a page of the newest rows, and
-- at the group's own index for the head and an oldest page (far from the newest end). The
-- group size is counted up to @group_cap when capped.
SELECT p.id, /* IF: control */p./* TEMPLATE: cell_column */region_name, /* END: control */p.category, p.object_identifier,
       (SELECT count(*) FROM (
          SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox x
           /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = p./* TEMPLATE: cell_column */region_name/* END: control */
             AND x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier/* IF: capped */
          LIMIT @group_cap/* END: capped */) g) AS group_rows,
       CASE WHEN p.head OR /* EITHER: newest */false/* OR: true */ THEN NOT EXISTS (
          SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox x
           /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = p./* TEMPLATE: cell_column */region_name/* END: control */
             AND x.shard_scope = p.shard_scope
             AND x.shard_identifier = p.shard_identifier
             AND x.category = p.category
             AND x.object_identifier = p.object_identifier
             AND x.id > p.id)
       ELSE NOT EXISTS (
          SELECT 1 FROM (
             SELECT x.category, x.object_identifier FROM /* TEMPLATE: table */sentry_controloutbox x
              /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = p./* TEMPLATE: cell_column */region_name/* END: control */
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
              FROM /* TEMPLATE: table */sentry_controloutbox o
             /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
               AND o.shard_scope = @scope
               AND o.shard_identifier = @shard
             ORDER BY o.id
             LIMIT 1) h
    UNION ALL
    SELECT r.*, false AS head
      FROM (SELECT o.*
              FROM /* TEMPLATE: table */sentry_controloutbox o
             /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
               AND o.shard_scope = @scope
               AND o.shard_identifier = @shard
             ORDER BY o.id /* EITHER: newest */DESC/* OR: ASC */
             LIMIT @limit) r
     WHERE r.id > (SELECT min(o.id) FROM /* TEMPLATE: table */sentry_controloutbox o
             /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
               AND o.shard_scope = @scope
               AND o.shard_identifier = @shard)
  ) p
 ORDER BY p.head DESC, p.id /* EITHER: newest */DESC/* OR: ASC */;

-- name: shard-messages-all
-- Every message of the shard, newest first: the coalesce groups are aggregated once and
-- joined, so the cost is two passes over the shard however large it is.
WITH groups AS MATERIALIZED (
    SELECT /* IF: control */x./* TEMPLATE: cell_column */region_name, /* END: control */x.category, x.object_identifier, count(*) AS group_rows, max(x.id) AS newest_id
      FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: cell */WHERE x./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       AND x.shard_scope = @scope
       AND x.shard_identifier = @shard
     GROUP BY /* IF: control */x./* TEMPLATE: cell_column */region_name, /* END: control */x.category, x.object_identifier
)
SELECT o.id, /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.category, o.object_identifier,
       g.group_rows, o.id = g.newest_id AS delivers,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
  JOIN groups g ON g.category = o.category
   AND g.object_identifier = o.object_identifier/* IF: control */
   AND g./* TEMPLATE: cell_column */region_name = o./* TEMPLATE: cell_column */region_name/* END: control */
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
 ORDER BY o.id DESC;
