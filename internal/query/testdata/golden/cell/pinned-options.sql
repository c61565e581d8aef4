-- outboxctl: option-ensure
-- Create the option row if it is missing; an existing row is left alone.
/* outboxctl option-ensure: incident 1 */ INSERT INTO sentry_option (key, value, last_updated, last_updated_by)
VALUES ('k', '[]'::jsonb, now(), 'cli')
ON CONFLICT (key) DO NOTHING;

-- outboxctl: option-ensure
-- Create the option row if it is missing; an existing row is left alone.
/* outboxctl option-ensure */ INSERT INTO sentry_option (key, value, last_updated, last_updated_by)
VALUES ('k', '[]', now(), 'cli')
ON CONFLICT (key) DO NOTHING;

-- outboxctl: option-lock
-- Read and lock the option row.
SELECT o.value::text AS value, o.last_updated, o.last_updated_by
  FROM sentry_option o
 WHERE o.key = 'k'
   FOR UPDATE;

-- outboxctl: killswitch-add
-- Add shard ids to the kill-switch list k, in one statement.
-- Sentry's workers see the change within about 20 s: the option sync re-pushes rows whose
-- last_updated is under an hour old, and each worker caches an option for 10 s.
/* outboxctl killswitch add: why */ UPDATE sentry_option o
   SET value = (SELECT coalesce(jsonb_agg(s.x ORDER BY s.x), '[]'::jsonb) FROM (
                SELECT e::bigint AS x FROM jsonb_array_elements(coalesce(nullif(o.value, 'null'::jsonb), '[]'::jsonb)) AS e
                 UNION
                SELECT unnest(ARRAY[1, 2]::bigint[])) s),
       last_updated = now(),
       last_updated_by = 'cli'
 WHERE o.key = 'k'
RETURNING o.value::text AS value;

-- outboxctl: killswitch-remove
-- Remove shard ids from the kill-switch list k, in one statement.
-- Sentry's workers see the change within about 20 s: the option sync re-pushes rows whose
-- last_updated is under an hour old, and each worker caches an option for 10 s.
/* outboxctl killswitch remove */ UPDATE sentry_option o
   SET value = (SELECT coalesce(jsonb_agg(s.x ORDER BY s.x), '[]'::jsonb) FROM (
                SELECT e::bigint AS x FROM jsonb_array_elements(coalesce(nullif(o.value::jsonb, 'null'::jsonb), '[]'::jsonb)) AS e
                 WHERE e::bigint <> ALL (ARRAY[1]::bigint[])) s)::text,
       last_updated = now(),
       last_updated_by = 'cli'
 WHERE o.key = 'k'
RETURNING o.value::text AS value;

-- outboxctl: option-write
-- Set option k (created if missing; the unique key rules out a duplicate).
-- last_updated = now() so Sentry's option sync propagates it within about 20 s.
/* outboxctl backfill gate: r */ INSERT INTO sentry_option (key, value, last_updated, last_updated_by)
VALUES ('k', 'true'::jsonb, now(), 'cli')
ON CONFLICT (key) DO UPDATE
   SET value = EXCLUDED.value,
       last_updated = now(),
       last_updated_by = 'cli'
RETURNING value::text AS value;

-- outboxctl: option-write
-- Set option k (created if missing; the unique key rules out a duplicate).
-- last_updated = now() so Sentry's option sync propagates it within about 20 s.
/* outboxctl killswitch add */ INSERT INTO sentry_option (key, value, last_updated, last_updated_by)
VALUES ('k', 'true', now(), 'cli')
ON CONFLICT (key) DO UPDATE
   SET value = EXCLUDED.value,
       last_updated = now(),
       last_updated_by = 'cli'
RETURNING value::text AS value;
