-- outboxctl: drain-plan-categories
-- The categories of shard ORGANIZATION_SCOPE/7 in sentry_controloutbox (control silo), their rows and coalesce groups counted up to 10000 each.
-- *_at_least = true: the count stopped at the cap (inspect shard counts them all).
WITH RECURSIVE c AS (
    (SELECT o.category
       FROM sentry_controloutbox o
      WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
        AND o.shard_identifier = 7
      ORDER BY o.category
      LIMIT 1)
    UNION ALL
    SELECT nx.category
      FROM c
     CROSS JOIN LATERAL (
        SELECT o.category
          FROM sentry_controloutbox o
         WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
           AND o.shard_identifier = 7
           AND o.category > c.category
         ORDER BY o.category
         LIMIT 1
     ) nx
)
SELECT c.category, least(r.n, 10000::bigint) AS depth, r.n > 10000::bigint AS depth_at_least,  -- each count stops here
       least(g.n, 10000::bigint) AS coalesce_groups, g.n > 10000::bigint AS groups_at_least  -- each count stops here
  FROM c
 CROSS JOIN LATERAL (
    SELECT count(*) AS n
      FROM (SELECT 1 FROM sentry_controloutbox x
            WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
              AND x.shard_identifier = 7
              AND x.category = c.category
            LIMIT 10000::bigint + 1) l  -- each count stops here
 ) r
 CROSS JOIN LATERAL (
    WITH RECURSIVE g AS (
        (SELECT x.object_identifier, 1::bigint AS n
           FROM sentry_controloutbox x
          WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
            AND x.shard_identifier = 7
            AND x.category = c.category
          ORDER BY x.object_identifier
          LIMIT 1)
        UNION ALL
        SELECT nx.object_identifier, g.n + 1
          FROM g
         CROSS JOIN LATERAL (
            SELECT x.object_identifier
              FROM sentry_controloutbox x
             WHERE x.shard_scope = 0  -- ORGANIZATION_SCOPE
               AND x.shard_identifier = 7
               AND x.category = c.category
               AND x.object_identifier > g.object_identifier
             ORDER BY x.object_identifier
             LIMIT 1
         ) nx
         WHERE g.n <= 10000::bigint  -- each count stops here
    )
    SELECT count(*) AS n FROM g
 ) g
 ORDER BY depth DESC, c.category;
