-- outboxctl: drain-coalesced
-- How many rows each delivery stands for (and, opt-in, their first ids).
SELECT g.category, g.object_identifier,
       (SELECT count(*) FROM sentry.sentry_controloutbox o
          WHERE o.region_name = 'us'
            AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
            AND o.shard_identifier = 7
            AND o.category = g.category
            AND o.object_identifier = g.object_identifier) AS coalesced_count,
       NULL::bigint[] AS coalesced_ids
  FROM unnest(ARRAY[3]::bigint[], ARRAY[11]::bigint[], ARRAY[50]::bigint[]) AS g(category, object_identifier, up_to);

-- outboxctl: drain-coalesced
-- How many rows each delivery stands for (and, opt-in, their first ids).
SELECT g.category, g.object_identifier,
       (SELECT count(*) FROM sentry.sentry_controloutbox o
          WHERE o.region_name = 'us'
            AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
            AND o.shard_identifier = 7
            AND o.category = g.category
            AND o.object_identifier = g.object_identifier) AS coalesced_count,
       ARRAY(SELECT o.id FROM sentry.sentry_controloutbox o
               WHERE o.region_name = 'us'
                 AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
                 AND o.shard_identifier = 7
                 AND o.category = g.category
                 AND o.object_identifier = g.object_identifier
                 AND o.id <= g.up_to
                ORDER BY o.id LIMIT 100) AS coalesced_ids
  FROM unnest(ARRAY[3]::bigint[], ARRAY[11]::bigint[], ARRAY[50]::bigint[]) AS g(category, object_identifier, up_to);
