-- outboxctl: exporter-depth
-- Rows of sentry_controloutbox (control silo) per cell, scope and category.
SELECT o.region_name::text AS cell,
       o.shard_scope, o.category, count(*) AS depth
  FROM sentry_controloutbox o
 GROUP BY o.region_name, o.shard_scope, o.category
 ORDER BY 1, 2, 3;
