-- Sentry's options tables (sentry_option, sentry_controloption): reading option values and
-- writing them (the kill-switch lists, the backfill gate). The value column is jsonb since
-- 2023 and text before: the jsonb choice is on for a jsonb column. Each write sets
-- last_updated = now() (Sentry's option sync only propagates rows updated in the last hour)
-- and last_updated_by = 'cli' (what `sentry config set` writes).

-- name: option-values
-- Options by key (@keys): JSON, or a base64 pickle when last written before March 2023.
SELECT o.key, o.value::text AS value, o.last_updated, o.last_updated_by
  FROM /* TEMPLATE: table */sentry_option o
 WHERE o.key = ANY (@keys::text[])
 ORDER BY o.key;

-- name: option-ensure
-- Create the option row if it is missing, with @empty as its value; an existing row is left
-- alone (ON CONFLICT on the unique key cannot create a duplicate).
INSERT INTO /* TEMPLATE: table */sentry_option (key, value, last_updated, last_updated_by)
VALUES (@key, @empty/* EITHER: jsonb */::jsonb/* OR: */, now(), 'cli')
ON CONFLICT (key) DO NOTHING;

-- name: option-lock
-- Read an option's stored value and lock its row until the transaction ends, so a
-- read-modify-write cannot lose a concurrent change.
SELECT o.value::text AS value, o.last_updated, o.last_updated_by
  FROM /* TEMPLATE: table */sentry_option o
 WHERE o.key = @key
   FOR UPDATE;

-- name: killswitch-update
-- Add @ids to (add) or remove them from a kill-switch list in one statement: the new list
-- is computed from the row it updates, so two writers serialise on the row. The list stays
-- sorted, distinct integers; a JSON null (or SQL NULL) counts as the empty list, as it does
-- for Sentry, and a value that is not a JSON list of integers makes the statement fail.
UPDATE /* TEMPLATE: table */sentry_option o
   SET value = (SELECT coalesce(jsonb_agg(s.x ORDER BY s.x), '[]'::jsonb) FROM (
                SELECT e::bigint AS x FROM jsonb_array_elements(coalesce(nullif(o.value/* EITHER: jsonb *//* OR: ::jsonb */, 'null'::jsonb), '[]'::jsonb)) AS e
                 /* EITHER: add */UNION
                SELECT unnest(@ids::bigint[])/* OR: WHERE e::bigint <> ALL (@ids::bigint[]) */) s)/* EITHER: jsonb *//* OR: ::text */,
       last_updated = now(),
       last_updated_by = 'cli'
 WHERE o.key = @key
RETURNING o.value::text AS value;

-- name: option-write
-- Replace an option's value with @value (created if missing): the read-modify-write
-- fallback for values stored as pickles, and the backfill gate.
INSERT INTO /* TEMPLATE: table */sentry_option (key, value, last_updated, last_updated_by)
VALUES (@key, @value/* EITHER: jsonb */::jsonb/* OR: */, now(), 'cli')
ON CONFLICT (key) DO UPDATE
   SET value = EXCLUDED.value,
       last_updated = now(),
       last_updated_by = 'cli'
RETURNING value::text AS value;
