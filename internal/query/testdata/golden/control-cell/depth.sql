-- outboxctl: depth
-- Total depth of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' and depth per category.
-- The first row (category NULL) is the total.
WITH per_category AS MATERIALIZED (
    SELECT o.category, count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.region_name = 'x''; DROP TABLE y; --'
     GROUP BY o.category
)
SELECT NULL AS category, coalesce(sum(c.depth), 0)::bigint AS depth FROM per_category c
UNION ALL
SELECT c.category, c.depth FROM per_category c
 ORDER BY category NULLS FIRST;
