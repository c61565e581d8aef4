-- One object's outboxes (inspect object) and one outbox row with its group and shard
-- (inspect message). In the control silo each row also shows its cell.

-- name: object-outboxes
-- The outboxes of one object, newest first. With the shard known (scope_shard: --shard, or a
-- category whose object is its shard) this is one probe of the shard index; otherwise a scan,
-- in which PostgreSQL tests equally cheap predicates in the order written: the selective ones
-- (category, object) go before the scope, which nearly every row matches.
SELECT o.id, /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   /* IF: scope_shard */AND o.shard_scope = @scope/* END: scope_shard */
   /* IF: scope_shard */AND o.shard_identifier = @shard/* END: scope_shard */
   AND o.category = @category
   AND o.object_identifier = @object
   /* IF: scope */AND o.shard_scope = @scope/* END: scope */
 ORDER BY o.id DESC
 LIMIT @limit;

-- name: message
-- One outbox row with its coalesce group (same shard, category and object) and its shard:
-- delivers = the row is its group's newest, is_head = the row is its shard's lowest id.
SELECT o.id, /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, o.category, o.object_identifier,
       g.group_rows, g.newest_id, o.id = g.newest_id AS delivers,
       sh.shard_depth, sh.head_id, o.id = sh.head_id AS is_head,
       o.payload::text AS payload,
       o.scheduled_from, o.scheduled_for, o.date_added
  FROM /* TEMPLATE: table */sentry_controloutbox o
 CROSS JOIN LATERAL (
    SELECT count(*) AS group_rows, max(x.id) AS newest_id
      FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = o./* TEMPLATE: cell_column */region_name/* END: control */
       AND x.shard_scope = o.shard_scope
       AND x.shard_identifier = o.shard_identifier
       AND x.category = o.category
       AND x.object_identifier = o.object_identifier
 ) g
 CROSS JOIN LATERAL (
    SELECT count(*) AS shard_depth, min(x.id) AS head_id
      FROM /* TEMPLATE: table */sentry_controloutbox x
     /* IF: control */WHERE x./* TEMPLATE: cell_column */region_name = o./* TEMPLATE: cell_column */region_name/* END: control */
       AND x.shard_scope = o.shard_scope
       AND x.shard_identifier = o.shard_identifier
 ) sh
 WHERE o.id = @id;
