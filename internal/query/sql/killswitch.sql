-- What waits behind kill-switched shards: the depth of the listed shards (drain's plan and
-- doctor) and of every shard the kill-switch lists hold (killswitch list). The lists are
-- decoded by outboxctl (a value may be a pickle) and passed as arrays.

-- name: shard-depths
-- Depth, coalesce groups, oldest message and next attempt of each listed shard (@ids) of
-- one scope, on the shard index.
SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_identifier, count(*) AS depth,
       count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
       min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
  FROM /* TEMPLATE: table */sentry_controloutbox o
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = ANY (@ids::bigint[])
 GROUP BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_identifier
 ORDER BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_identifier;

-- name: killswitch-shards
-- Every (options table, scope, id) the lists hold, unnested, each distinct shard joined to
-- every outbox on the shard index; a shard with no rows still gets one row (depth 0, silo
-- NULL). The region holds one killswitch-outbox part per outbox (killswitch-no-outbox when
-- there is none).
WITH k AS (
  SELECT k.options_table, k.shard_scope, k.shard_identifier
    FROM unnest(@options_tables::text[], @scopes::int[], @ids::bigint[]) AS k(options_table, shard_scope, shard_identifier)
), s AS (
  SELECT DISTINCT k.shard_scope, k.shard_identifier FROM k
), d AS (
  /* TEMPLATE_BEGIN: outboxes */SELECT NULL::text AS silo, NULL::text AS cell, s.shard_scope, s.shard_identifier,
         0::bigint AS depth, 0::bigint AS coalesce_groups,
         NULL::timestamptz AS oldest_message, NULL::timestamptz AS next_attempt
    FROM s
   WHERE false/* TEMPLATE_END: outboxes */
)
SELECT k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell AS region_name,
       coalesce(d.depth, 0) AS depth, coalesce(d.coalesce_groups, 0) AS coalesce_groups,
       d.oldest_message, d.next_attempt
  FROM k
  LEFT JOIN d ON d.shard_scope = k.shard_scope AND d.shard_identifier = k.shard_identifier
 ORDER BY k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell;

-- name: killswitch-outbox
-- Part of killswitch-shards (s is its shards): the depth of each listed shard in one outbox
-- (@silo). Every branch but the first is a UNION ALL.
/* EITHER: first */SELECT/* OR:   UNION ALL
  SELECT */ @silo::text AS silo, /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell, o.shard_scope, o.shard_identifier,
         count(*) AS depth, count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
         min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
    FROM s
    JOIN /* TEMPLATE: table */sentry_controloutbox o ON o.shard_scope = s.shard_scope AND o.shard_identifier = s.shard_identifier
   GROUP BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier

-- name: killswitch-no-outbox
-- Part of killswitch-shards when no outbox is here: the lists alone, every shard at depth 0.
SELECT NULL::text AS silo, NULL::text AS cell, s.shard_scope, s.shard_identifier,
         0::bigint AS depth, 0::bigint AS coalesce_groups,
         NULL::timestamptz AS oldest_message, NULL::timestamptz AS next_attempt
    FROM s
   WHERE false
