-- outboxctl: top-shards-floor
-- How deep the deepest shards of sentry_controloutbox (control silo) are at least: the shards most seen in a
-- sample of 2.5% of the table's pages, each counted on the index up to the cap.
WITH sampled AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS seen
      FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((250::float8 / 100)::real) REPEATABLE (1::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
     ORDER BY seen DESC, o.region_name, o.shard_scope, o.shard_identifier
     LIMIT 20  -- the shards most seen in the sample
),
counted AS (
    SELECT (SELECT count(*) FROM (
               SELECT 1
                 FROM sentry_controloutbox o
                WHERE o.region_name = s.region_name
                  AND o.shard_scope = s.shard_scope
                  AND o.shard_identifier = s.shard_identifier
                LIMIT 40) r) AS rows_at_least  -- each counted up to this many rows
      FROM sampled s
)
SELECT (SELECT c.rows_at_least FROM counted c ORDER BY c.rows_at_least DESC OFFSET 20::int - 1 LIMIT 1) AS floor;

-- outboxctl: top-shards-floor
-- How deep the deepest shards of sentry_controloutbox (control silo) are at least: the shards most seen in a
-- sample of 100% of the table's pages, each counted on the index up to the cap.
WITH sampled AS (
    SELECT o.region_name, o.shard_scope, o.shard_identifier, count(*) AS seen
      FROM sentry_controloutbox o TABLESAMPLE SYSTEM ((10000::float8 / 100)::real) REPEATABLE (2::float8)  -- hundredths of a percent of the table's pages sampled, which pages: the same seed, the same sample
     WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
       AND o.category = 2  -- ORGANIZATION_UPDATE
     GROUP BY o.region_name, o.shard_scope, o.shard_identifier
     ORDER BY seen DESC, o.region_name, o.shard_scope, o.shard_identifier
     LIMIT 10  -- the shards most seen in the sample
),
counted AS (
    SELECT (SELECT count(*) FROM (
               SELECT 1
                 FROM sentry_controloutbox o
                WHERE o.region_name = s.region_name
                  AND o.shard_scope = s.shard_scope
                  AND o.shard_identifier = s.shard_identifier
                  AND o.category = 2  -- ORGANIZATION_UPDATE
                LIMIT 2) r) AS rows_at_least  -- each counted up to this many rows
      FROM sampled s
)
SELECT (SELECT c.rows_at_least FROM counted c ORDER BY c.rows_at_least DESC OFFSET 5::int - 1 LIMIT 1) AS floor;
