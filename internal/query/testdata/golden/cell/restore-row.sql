-- outboxctl: restore-row
-- Reinsert an archived row as it was: id, payload, cell and schedule; an id that exists is left alone.
INSERT INTO sentry_regionoutbox (id, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
VALUES (9999, 0, 1, 2, 1, E'{"k": "it''s\\n\\\\ */ --"}'::jsonb, '2026-11-30 10:11:12.345678Z'::timestamptz, '2026-11-30 11:11:12.345678Z'::timestamptz, '2026-11-30 10:11:12.345678Z'::timestamptz)
ON CONFLICT (id) DO NOTHING;

-- outboxctl: restore-row
-- Reinsert an archived row as it was: id, payload, cell and schedule; an id that exists is left alone.
INSERT INTO sentry_regionoutbox (id, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
VALUES (1, 0, 1, 2, 1, NULL, '2026-11-30 10:11:12.345678Z'::timestamptz, '2026-11-30 10:11:12.345678Z'::timestamptz, '2026-11-30 10:11:12.345678Z'::timestamptz)
ON CONFLICT (id) DO NOTHING;
