-- outboxctl: top-shards-sample
-- Deepest shards of sentry_controloutbox (control silo) estimated from a sample of 2.5% of the table's pages:
-- depth = the shard's sampled rows scaled up; a shard the sample missed is not listed.
SELECT o.region_name, o.shard_scope, o.shard_identifier,
       round(count(*) * 10000 / 250::float8)::bigint AS depth, true AS estimated, 250::float8 / 100 AS sampled_percent  -- hundredths of a percent of the table's pages sampled
  FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((250::float8 / 100)::real) REPEATABLE (1::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
 GROUP BY o.region_name, o.shard_scope, o.shard_identifier
 ORDER BY depth DESC, o.region_name, o.shard_scope, o.shard_identifier
 LIMIT 20;

-- outboxctl: top-shards-sample
-- Deepest shards of sentry_controloutbox (control silo) estimated from a sample of 0.25% of the table's pages:
-- depth = the shard's sampled rows scaled up; a shard the sample missed is not listed.
SELECT o.region_name, o.shard_scope, o.shard_identifier,
       round(count(*) * 10000 / 25::float8)::bigint AS depth, true AS estimated, 25::float8 / 100 AS sampled_percent  -- hundredths of a percent of the table's pages sampled
  FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((25::float8 / 100)::real) REPEATABLE (2::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.category = 2  -- ORGANIZATION_UPDATE
 GROUP BY o.region_name, o.shard_scope, o.shard_identifier
HAVING round(count(*) * 10000 / 25::float8) >= 2  -- hundredths of a percent of the table's pages sampled
 ORDER BY depth DESC, o.region_name, o.shard_scope, o.shard_identifier
 LIMIT 5;
