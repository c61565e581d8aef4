-- outboxctl: exporter-oldest-row
-- The oldest row of sentry_controloutbox (control silo), cell 'x''; DROP TABLE y; --' (lowest id) and its age in seconds.
SELECT o.id, o.date_added, extract(epoch FROM now() - o.date_added)::float8 AS age_seconds
  FROM sentry_controloutbox o
 WHERE o.region_name = 'x''; DROP TABLE y; --'
 ORDER BY o.id
 LIMIT 1;
