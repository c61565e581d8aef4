-- outboxctl: category-depth
-- Pending rows of category ORGANIZATION_UPDATE (2) in sentry_controloutbox (control silo), per scope.
-- shards = shards holding the category; objects = distinct objects (deliveries left, at most).
-- No index leads with category: this reads the whole table (bounded by the statement timeout).
SELECT o.shard_scope, count(*) AS pending,
       count(DISTINCT (o.shard_scope, o.shard_identifier)) AS shards,
       count(DISTINCT o.object_identifier) AS objects,
       min(o.scheduled_for) AS next_attempt,
       min(o.date_added) AS oldest_message
  FROM sentry_controloutbox o
 WHERE o.category = 2  -- ORGANIZATION_UPDATE
 GROUP BY o.shard_scope
 ORDER BY pending DESC, o.shard_scope;
