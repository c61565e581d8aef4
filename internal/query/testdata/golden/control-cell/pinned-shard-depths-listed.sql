-- outboxctl: shard-depths-listed
-- The depth of each listed shard after the drain.
SELECT l.shard_scope, l.shard_identifier, d.depth
  FROM unnest(ARRAY[0, 1]::integer[], ARRAY[7, 8]::bigint[]) AS l (shard_scope, shard_identifier)
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM sentry_controloutbox o
     WHERE o.region_name = 'x''; DROP TABLE y; --'
       AND o.shard_scope = l.shard_scope
       AND o.shard_identifier = l.shard_identifier
 ) d;
