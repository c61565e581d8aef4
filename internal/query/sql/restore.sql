-- The statements of restore: which archived ids are back in the table, and the INSERT of one
-- archived row as it was.

-- name: existing-ids
-- Which of the archived ids are in the table: restore's plan skips those, and its check that
-- the rows of an uncommitted batch are still there reads them.
SELECT o.id
  FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
 ORDER BY o.id;

-- name: restore-row
-- One archived row as it was: id, payload (cast for a jsonb column), schedule and, in the
-- control silo, its cell. An id that exists again is left alone. The timestamps need no cast:
-- a printed one is a typed literal, a bound one takes the column's type.
INSERT INTO /* TEMPLATE: table */sentry_controloutbox (id, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added/* IF: control */, /* TEMPLATE: cell_column */region_name/* END: control */)
VALUES (@id, @scope, @shard, @category, @object, @payload/* IF: jsonb */::jsonb/* END: jsonb */, @scheduled_from, @scheduled_for, @date_added/* IF: control */, @cell/* END: control */)
ON CONFLICT (id) DO NOTHING;
