-- outboxctl: bulk-lock-heads
-- Lock the head row of each shard of the batch, skipping those a drainer holds (being_drained).
WITH batch AS (
    SELECT s.shard_scope, s.shard_identifier FROM (
SELECT b.shard_scope, b.shard_identifier
  FROM unnest(ARRAY[0, 1]::integer[], ARRAY[1, 5]::bigint[]) AS b (shard_scope, shard_identifier)
    ) s
)
SELECT b.shard_scope, b.shard_identifier, h.id IS NULL AS empty, h.id IS NOT NULL AND l.id IS NULL AS being_drained, 0::bigint AS rows, h.id AS head_id
  FROM batch b
  LEFT JOIN LATERAL (
    SELECT o.id
      FROM sentry_regionoutbox o
     WHERE o.shard_scope = b.shard_scope
       AND o.shard_identifier = b.shard_identifier
     ORDER BY o.id
     LIMIT 1
  ) h ON true
  LEFT JOIN LATERAL (
    SELECT o.id
      FROM sentry_regionoutbox o
     WHERE o.id = h.id
       FOR UPDATE SKIP LOCKED
  ) l ON true
 ORDER BY b.shard_scope, b.shard_identifier;
