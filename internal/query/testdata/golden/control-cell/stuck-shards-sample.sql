-- outboxctl: stuck-shards-sample
-- Shards of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' in backoff, estimated from a sample of 2.5% of the table's pages:
-- each confirmed in backoff by one probe; depth = its sampled rows in backoff scaled up; a shard the sample missed is not listed.
WITH sampled AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS sampled_rows
      FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((250::float8 / 100)::real) REPEATABLE (1::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
     WHERE o.scheduled_for > now()
       AND o.region_name = 'x''; DROP TABLE y; --'
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
)
SELECT k.region_name, k.shard_scope, k.shard_identifier,
       round(k.sampled_rows * 10000 / 250::float8)::bigint AS depth, true AS estimated, 250::float8 / 100 AS sampled_percent  -- hundredths of a percent of the table's pages sampled
  FROM sampled k
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) h
 WHERE h.next_attempt > now()
 ORDER BY depth DESC, k.region_name, k.shard_scope, k.shard_identifier
 LIMIT 20;

-- outboxctl: stuck-shards-sample
-- Shards of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' in backoff, estimated from a sample of 0.25% of the table's pages:
-- each confirmed in backoff by one probe; depth = its sampled rows in backoff scaled up; a shard the sample missed is not listed.
WITH sampled AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS sampled_rows
      FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((25::float8 / 100)::real) REPEATABLE (2::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
     WHERE o.scheduled_for > now()
       AND o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.region_name = 'x''; DROP TABLE y; --'
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
)
SELECT k.region_name, k.shard_scope, k.shard_identifier,
       round(k.sampled_rows * 10000 / 25::float8)::bigint AS depth, true AS estimated, 25::float8 / 100 AS sampled_percent  -- hundredths of a percent of the table's pages sampled
  FROM sampled k
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM sentry_controloutbox o
     WHERE o.region_name = k.region_name
       AND o.shard_scope = k.shard_scope
       AND o.shard_identifier = k.shard_identifier
     ORDER BY o.scheduled_for
     LIMIT 1
 ) h
 WHERE h.next_attempt > now()
   AND EXISTS (SELECT 1 FROM sentry_controloutbox o
                WHERE o.region_name = k.region_name
                  AND o.shard_scope = k.shard_scope
                  AND o.shard_identifier = k.shard_identifier
                  AND o.category = 2)  -- ORGANIZATION_UPDATE
   AND round(k.sampled_rows * 10000 / 25::float8) >= 2  -- hundredths of a percent of the table's pages sampled
 ORDER BY depth DESC, k.region_name, k.shard_scope, k.shard_identifier
 LIMIT 5;
