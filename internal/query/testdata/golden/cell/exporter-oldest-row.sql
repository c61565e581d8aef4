-- outboxctl: exporter-oldest-row
-- The oldest row of sentry_regionoutbox (cell silo) (lowest id) and its age in seconds.
SELECT o.id, o.date_added, extract(epoch FROM now() - o.date_added)::float8 AS age_seconds
  FROM sentry_regionoutbox o
 ORDER BY o.id
 LIMIT 1;
