-- outboxctl: killswitch-shards
-- What waits behind every disabled shard, in one statement: the ids are those the
-- kill-switch lists hold (decoded by outboxctl, which also reads pickled values).
WITH k AS (
  SELECT k.options_table, k.shard_scope, k.shard_identifier
    FROM unnest(ARRAY['sentry_option']::text[], ARRAY[0]::int[], ARRAY[1]::bigint[]) AS k(options_table, shard_scope, shard_identifier)
), s AS (
  SELECT DISTINCT k.shard_scope, k.shard_identifier FROM k
), d AS (
  SELECT 'cell'::text AS silo, NULL::text AS cell, o.shard_scope, o.shard_identifier,
         count(*) AS depth, count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
         min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
    FROM s
    JOIN sentry.sentry_regionoutbox o ON o.shard_scope = s.shard_scope AND o.shard_identifier = s.shard_identifier
   GROUP BY o.shard_scope, o.shard_identifier
  UNION ALL
  SELECT 'control'::text AS silo, o.region_name::text AS cell, o.shard_scope, o.shard_identifier,
         count(*) AS depth, count(DISTINCT (o.category, o.object_identifier)) AS coalesce_groups,
         min(o.date_added) AS oldest_message, min(o.scheduled_for) AS next_attempt
    FROM s
    JOIN sentry.sentry_controloutbox o ON o.shard_scope = s.shard_scope AND o.shard_identifier = s.shard_identifier
   GROUP BY o.region_name, o.shard_scope, o.shard_identifier
)
SELECT k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell AS region_name,
       coalesce(d.depth, 0) AS depth, coalesce(d.coalesce_groups, 0) AS coalesce_groups,
       d.oldest_message, d.next_attempt
  FROM k
  LEFT JOIN d ON d.shard_scope = k.shard_scope AND d.shard_identifier = k.shard_identifier
 ORDER BY k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell;
