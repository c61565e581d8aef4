-- outboxctl: depth
-- Total depth of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' and depth per category.
-- The first row (category NULL) is the total.
SELECT o.category, count(*) AS depth
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --'
 GROUP BY ROLLUP (o.category)
 ORDER BY o.category NULLS FIRST;
