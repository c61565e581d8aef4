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

-- name: era-tombstone-watermarks
-- The tombstone (deletion) watermarks of one silo (a Sentry since Sep 2026: PR #123171's
-- sentry_celldeletionwatermark or sentry_controldeletionwatermark, prefix 'tombstone')
-- against its tombstones (sentry_regiontombstone, sentry_controltombstone): per
-- HybridCloudForeignKey column (table_name, field_name), the highest tombstone id its cascade
-- finished (low_bound), the newest tombstone, and the first tombstone past low_bound with
-- its age: the one the cascade is waiting on. Sentry's scheduler runs every 15 minutes, 500
-- tombstones a batch, rescheduling while there is more, so a healthy pass leaves no old
-- tombstone past its watermark. Oldest waiting first, at most @limit; each probe is one
-- primary-key lookup.
SELECT w.table_name::text AS table_name, w.field_name::text AS field_name, w.low_bound, w.date_updated,
       top.max_id, next.id AS next_id, next.created_at AS next_created_at
  FROM /* TEMPLATE: watermarks */sentry_celldeletionwatermark w
 CROSS JOIN (SELECT max(t.id) AS max_id FROM /* TEMPLATE: tombstones */sentry_regiontombstone t) top
  LEFT JOIN LATERAL (SELECT t.id, t.created_at
                       FROM /* TEMPLATE: tombstones */sentry_regiontombstone t
                      WHERE t.id > w.low_bound
                      ORDER BY t.id
                      LIMIT 1) next ON true
 WHERE w.prefix = 'tombstone'
 ORDER BY next.created_at NULLS LAST, w.table_name, w.field_name
 LIMIT @limit;
