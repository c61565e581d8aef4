-- outboxctl: shard-category-counts
-- The rows and coalesce groups a parallel drain would deliver and delete, per scope and category.
SELECT l.shard_scope, o.category, count(*) AS rows,
       count(DISTINCT (o.shard_identifier, o.object_identifier)) AS groups, count(DISTINCT o.shard_identifier) AS shards
  FROM unnest(ARRAY[0, 1]::integer[], ARRAY[7, 8]::bigint[]) AS l (shard_scope, shard_identifier)
  JOIN sentry_controloutbox o
    ON o.shard_scope = l.shard_scope
   AND o.shard_identifier = l.shard_identifier
 GROUP BY l.shard_scope, o.category
 ORDER BY rows DESC, l.shard_scope, o.category;
