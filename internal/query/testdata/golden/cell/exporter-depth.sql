-- outboxctl: exporter-depth
-- Rows of sentry_regionoutbox (cell silo) per cell, scope and category.
SELECT ''::text AS cell,
       o.shard_scope, o.category, count(*) AS depth
  FROM sentry_regionoutbox o
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3;
