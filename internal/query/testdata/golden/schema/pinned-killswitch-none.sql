-- outboxctl: killswitch-shards
-- What waits behind every disabled shard, in one statement: the ids are those the
-- kill-switch lists hold (decoded by outboxctl, which also reads pickled values).
WITH k AS (
  SELECT k.options_table, k.shard_scope, k.shard_identifier
    FROM unnest(ARRAY['sentry_option']::text[], ARRAY[0]::int[], ARRAY[1]::bigint[]) AS k(options_table, shard_scope, shard_identifier)
), s AS (
  SELECT DISTINCT k.shard_scope, k.shard_identifier FROM k
), d AS (
  SELECT NULL::text AS silo, NULL::text AS cell, s.shard_scope, s.shard_identifier,
         0::bigint AS depth, 0::bigint AS coalesce_groups,
         NULL::timestamptz AS oldest_message, NULL::timestamptz AS next_attempt
    FROM s
   WHERE false
)
SELECT k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell AS region_name,
       coalesce(d.depth, 0) AS depth, coalesce(d.coalesce_groups, 0) AS coalesce_groups,
       d.oldest_message, d.next_attempt
  FROM k
  LEFT JOIN d ON d.shard_scope = k.shard_scope AND d.shard_identifier = k.shard_identifier
 ORDER BY k.options_table, k.shard_scope, k.shard_identifier, d.silo, d.cell;
