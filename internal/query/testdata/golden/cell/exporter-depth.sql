-- outboxctl: exporter-depth
-- Rows of sentry_regionoutbox (cell silo) per cell, scope and category.
SELECT ''::text AS cell,
       o.shard_scope, o.category, count(*) AS depth
  FROM sentry_regionoutbox o
 GROUP BY o.shard_scope, o.category
 ORDER BY 1, 2, 3;
