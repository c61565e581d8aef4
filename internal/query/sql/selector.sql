-- The shard selectors shared by shards and the bulk repairs (reschedule, compact, skip,
-- drain SELECTORS): one set-based statement that lists the selected shards in key order,
-- and the shard list a batch of a bulk repair works on. Every read is prefixed by the shard
-- key, so each probe uses one of Sentry's indexes: the candidates of --stuck are one
-- index-only pass over the (…, scheduled_for) index, a shard's head row one probe of the
-- (…, id) index, --category one probe of the (…, category, object_identifier) index.

-- name: selected-shards
-- candidates: the shards of the table (with --stuck only those with a row scheduled in the
-- future), in key order after @after_scope/@after_shard (a bulk repair's next batch); each is
-- kept when its head row (the lowest id, which Sentry locks and derives the backoff from),
-- its earliest schedule and its rows match every criterion turned on.
WITH candidates AS (
    SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier, count(*) AS depth
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: stuck */WHERE o.scheduled_for > now()/* END: stuck */
       /* IF: scope */AND o.shard_scope = @scope/* END: scope */
       /* IF: cell */AND o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
       /* IF: listed */AND (o.shard_scope, o.shard_identifier) IN (SELECT l.shard_scope, l.shard_identifier FROM unnest(@listed_scopes::integer[], @listed_ids::bigint[]) AS l (shard_scope, shard_identifier))/* END: listed */
       /* IF: excluded */AND (o.shard_scope, o.shard_identifier) NOT IN (SELECT x.shard_scope, x.shard_identifier FROM unnest(@excluded_scopes::integer[], @excluded_ids::bigint[]) AS x (shard_scope, shard_identifier))/* END: excluded */
       /* IF: after */AND (o.shard_scope, o.shard_identifier) > (@after_scope::integer, @after_shard::bigint)/* END: after */
     GROUP BY /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.shard_scope, o.shard_identifier
    /* IF: min_depth */HAVING count(*) >= @min_depth/* END: min_depth */
)
SELECT /* EITHER: control */k./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell, k.shard_scope, k.shard_identifier, k.depth,
       head.id AS head_id, head.category AS head_category, head.last_delay_seconds, head.last_attempt, head.oldest_message, n.next_attempt
  FROM candidates k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, extract(epoch FROM o.scheduled_for - o.scheduled_from)::float8 AS last_delay_seconds,
           o.scheduled_from AS last_attempt, o.date_added AS oldest_message
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: control */WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name/* END: control */
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: control */WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name/* END: control */
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 /* IF: stuck */WHERE n.next_attempt > now()/* END: stuck */
   /* IF: at_cap */AND head.last_delay_seconds >= @cap_seconds/* END: at_cap */
   /* IF: head_category */AND head.category = @head_category/* END: head_category */
   /* IF: has_rows */AND EXISTS (SELECT 1 FROM /* TEMPLATE: table */sentry_controloutbox o/* END: has_rows */
                /* IF: has_rows *//* IF: control */WHERE o./* TEMPLATE: cell_column */region_name = k./* TEMPLATE: cell_column */region_name/* END: control *//* END: has_rows */
                  /* IF: has_rows */AND o.shard_scope = k.shard_scope/* END: has_rows */
                  /* IF: has_rows */AND o.shard_identifier = k.shard_identifier/* END: has_rows */
                  /* IF: category */AND o.category = @category/* END: category */
                  /* IF: added_after */AND o.date_added >= @added_after/* END: added_after */
                  /* IF: added_before */AND o.date_added < @added_before/* END: added_before */
               /* IF: has_rows */)/* END: has_rows */
 ORDER BY /* IF: control */k./* TEMPLATE: cell_column */region_name, /* END: control */k.shard_scope, k.shard_identifier
 /* IF: limit */LIMIT @limit/* END: limit */;
