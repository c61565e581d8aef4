-- outboxctl: depth
-- Total depth of sentry_regionoutbox (cell silo) and depth per category.
-- The first row (category NULL) is the total.
SELECT o.category, count(*) AS depth
  FROM sentry_regionoutbox o
 GROUP BY ROLLUP (o.category)
 ORDER BY o.category NULLS FIRST;
