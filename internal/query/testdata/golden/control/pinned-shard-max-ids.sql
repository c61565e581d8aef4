-- outboxctl: shard-max-ids
-- Each listed shard's highest id: a parallel drain never touches rows above it (unless --follow).
SELECT l.shard_scope, l.shard_identifier, m.max_id
  FROM unnest(ARRAY[0, 1]::integer[], ARRAY[7, 8]::bigint[]) AS l (shard_scope, shard_identifier)
 CROSS JOIN LATERAL (
    SELECT o.id AS max_id
      FROM sentry_controloutbox o
     WHERE o.shard_scope = l.shard_scope
       AND o.shard_identifier = l.shard_identifier
     ORDER BY o.id DESC
     LIMIT 1
 ) m;
