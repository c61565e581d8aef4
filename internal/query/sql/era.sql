-- The era model's reads of rows (era.go): what the catalog alone cannot say.

-- name: era-group-action-log-pair
-- The scope and category of the group action log outbox's oldest row. The table holds only
-- GROUP_ACTION_LOG_EVENT rows in GROUP_SCOPE, whose integers the reference leaves unverified
-- (49 and 14 are likely): the database says them. No row when the table is empty.
SELECT g.shard_scope::bigint AS shard_scope, g.category::bigint AS category
  FROM /* TEMPLATE: table */sentry_groupactionlogoutbox g
 ORDER BY g.id
 LIMIT 1;

-- name: era-group-action-log-in-cell-outbox
-- GROUP_ACTION_LOG_EVENT rows (@scope, @category) in the cell outbox: how many, how many were
-- added on or after @since (2026-09-15: from then Sentry writes every group action log row to
-- its own table, so those come from another writer), and the oldest and newest date_added.
-- shard_scope leads every index of the outbox, so the scan stays within the scope.
SELECT count(*) AS rows_total,
       count(*) FILTER (WHERE o.date_added >= @since::timestamptz) AS rows_since,
       min(o.date_added) AS oldest,
       max(o.date_added) AS newest
  FROM /* TEMPLATE: table */sentry_regionoutbox o
 WHERE o.shard_scope = @scope
   AND o.category = @category;
