-- Webhook payload mailboxes (reference §10.4): hybridcloud_webhookpayload, the control
-- silo's second queue. A mailbox is mailbox_name (provider:identifier); Sentry delivers it
-- head-of-line, its head being its lowest id. Every head is found through the
-- (mailbox_name, id) index, webhookpayload_mailbox_id_idx: the schedule_for index and
-- webhookpayload_priority_idx are gone on a Sentry after August 2026 (migrations 0033 and
-- 0034), so nothing here may depend on them.

-- name: mailbox-catalog
-- Is the table here, how large the planner thinks it is, and which of its indexes exist
-- (by their columns, not their names: Django's hash names differ between versions):
-- head_index is the (mailbox_name, id) index the heads are found through, schedule_index
-- the schedule_for index a Sentry before August 2026 still has.
WITH rel AS (
    SELECT c.oid, c.relnamespace,
           CASE WHEN c.reltuples < 0 THEN NULL
                WHEN c.relpages = 0 THEN c.reltuples
                ELSE c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
           END AS total
      FROM pg_class c
     WHERE c.oid = to_regclass(@table)
),
cols AS (
    SELECT a.attname::text AS name, a.attnum
      FROM rel
      JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
)
SELECT (SELECT count(*) FROM rel) = 1 AS present,
       (SELECT round(rel.total)::bigint FROM rel) AS estimated_rows,
       EXISTS (SELECT 1 FROM rel JOIN pg_index i ON i.indrelid = rel.oid
                WHERE i.indisvalid AND i.indpred IS NULL AND i.indnatts >= 2
                  AND i.indkey[0] = (SELECT cols.attnum FROM cols WHERE cols.name = 'mailbox_name')
                  AND i.indkey[1] = (SELECT cols.attnum FROM cols WHERE cols.name = 'id')) AS head_index,
       EXISTS (SELECT 1 FROM rel JOIN pg_index i ON i.indrelid = rel.oid
                WHERE i.indisvalid AND i.indkey[0] = (SELECT cols.attnum FROM cols WHERE cols.name = 'schedule_for')) AS schedule_index,
       coalesce((SELECT array_agg(cols.name ORDER BY cols.attnum) FROM cols), '{}') AS columns;

-- name: mailboxes
-- Every mailbox's head, most harmful first, then the depth of the first @limit. The heads
-- are walked on the (mailbox_name, id) index, one probe each (a loose index scan:
-- PostgreSQL has no skip scan): the first entry past the previous mailbox's name is the
-- next mailbox's lowest id, its head, and ORDER BY mailbox_name, id is an order only that
-- index gives. The cost grows with the number of mailboxes, not of payloads. A head
-- that failed at least once (attempts > 0) blocks its mailbox unless its provider is one
-- that skips a failing payload (@skip_providers); blocked mailboxes come first, the one
-- blocked longest (oldest head) first, then the others by their oldest payload. The depth
-- is counted up to @count_cap + 1 rows on the same index: past it, counted_depth says
-- "more than @count_cap" and estimated_depth is the planner's: pg_stats' most common
-- mailbox names times @table_rows (mailbox-catalog's estimated_rows), NULL when the
-- mailbox is not among them or the table was never analyzed.
WITH RECURSIVE walk AS (
    (SELECT w.id, w.mailbox_name, w.provider, w.region_name, w.destination_type, w.date_added, w.schedule_for, w.attempts
       FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
      ORDER BY w.mailbox_name, w.id
      LIMIT 1)
    UNION ALL
    SELECT nx.*
      FROM walk h
     CROSS JOIN LATERAL (
        SELECT w.id, w.mailbox_name, w.provider, w.region_name, w.destination_type, w.date_added, w.schedule_for, w.attempts
          FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
         WHERE w.mailbox_name > h.mailbox_name
         ORDER BY w.mailbox_name, w.id
         LIMIT 1
     ) nx
),
heads AS (
    SELECT h.*, (h.attempts > 0 AND NOT coalesce(h.provider = ANY (@skip_providers::text[]), false)) AS blocked
      FROM walk h
     WHERE true
       /* IF: provider */AND h.provider = @provider/* END: provider */
       /* IF: cell */AND h.region_name = @cell/* END: cell */
)/* EITHER: listing */,
top AS (
    SELECT *
      FROM heads
     ORDER BY blocked DESC, date_added, mailbox_name
     LIMIT @limit
),
mcv AS (
    -- The names first (InitPlans), so pg_stats is read by index however many tables the
    -- database has.
    SELECT v.name, v.freq
      FROM pg_stats s
     CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(name, freq)
     WHERE s.schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(@table_name))
       AND s.tablename = (SELECT c.relname FROM pg_class c WHERE c.oid = to_regclass(@table_name))
       AND s.attname = 'mailbox_name'
)
SELECT t.mailbox_name, t.provider, t.region_name AS cell, t.destination_type,
       d.counted AS counted_depth, d.counted > @count_cap AS depth_capped,
       (SELECT round(@table_rows::float8 * mcv.freq)::bigint FROM mcv WHERE mcv.name = t.mailbox_name) AS estimated_depth,
       t.id AS head_id, t.attempts AS head_attempts, t.schedule_for AS head_next_attempt,
       t.date_added AS oldest_added, t.blocked,
       (SELECT count(*) FROM heads) AS mailboxes,
       (SELECT count(*) FROM heads WHERE heads.blocked) AS blocked_mailboxes,
       now() AS observed_at
  FROM top t
 CROSS JOIN LATERAL (
    SELECT count(*) AS counted
      FROM (SELECT 1
              FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
             WHERE w.mailbox_name = t.mailbox_name
             LIMIT @count_cap + 1) x
 ) d
 ORDER BY t.blocked DESC, t.date_added, t.mailbox_name/* OR: -- The summary form (the exporter's): per provider and cell (the head's), the
-- mailboxes, the blocked ones, the oldest head's age and the longest-blocked head's age.
SELECT h.provider, h.region_name AS cell, count(*)::bigint AS mailboxes,
       count(*) FILTER (WHERE h.blocked)::bigint AS blocked,
       extract(epoch FROM now() - min(h.date_added))::float8 AS oldest_age_seconds,
       coalesce(extract(epoch FROM now() - min(h.date_added) FILTER (WHERE h.blocked)), 0)::float8 AS longest_blocked_seconds
  FROM heads h
 GROUP BY h.provider, h.region_name
 ORDER BY mailboxes DESC, h.provider NULLS LAST, h.region_name NULLS LAST */;

-- name: mailbox-payloads
-- The head of mailbox @mailbox and the payloads behind it, lowest id first (@limit of
-- them): one range of the (mailbox_name, id) index. The name is a range of one value
-- (>= and <=, the same rows as = under the column's deterministic collation), so the
-- ORDER BY mailbox_name, id is an order only that index gives: with = the planner drops
-- the constant from the order and may walk the primary key instead, filtering on the
-- name, which for a large mailbox whose payloads are all recent reads the whole table.
-- The request is read whole; outboxctl redacts its secrets before showing it.
SELECT w.id, w.mailbox_name, w.provider, w.destination_type, w.region_name AS cell, w.integration_id,
       w.date_added, w.schedule_for, w.attempts,
       w.request_method, w.request_path, w.request_headers, w.request_body,
       now() AS observed_at
  FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
 WHERE w.mailbox_name >= @mailbox AND w.mailbox_name <= @mailbox
 ORDER BY w.mailbox_name, w.id
 LIMIT @limit;

-- name: mailbox-depth-one
-- The depth of mailbox @mailbox, counted up to @count_cap + 1 rows on a mailbox_name
-- index (either: a count needs no order); past it, estimated_depth is the planner's (@table_rows, mailbox-catalog's
-- estimated_rows, times the name's frequency among pg_stats' most common mailbox names,
-- NULL when it is not among them).
SELECT count(*) AS counted_depth, count(*) > @count_cap AS depth_capped,
       (SELECT round(@table_rows::float8 * v.freq)::bigint
          FROM pg_stats s
         CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(name, freq)
         WHERE s.schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(@table_name))
           AND s.tablename = (SELECT c.relname FROM pg_class c WHERE c.oid = to_regclass(@table_name))
           AND s.attname = 'mailbox_name'
           AND v.name = @mailbox) AS estimated_depth
  FROM (SELECT 1
          FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
         WHERE w.mailbox_name = @mailbox
         LIMIT @count_cap + 1) x;

-- name: mailbox-depth
-- Payloads per provider and cell, counted, with the oldest payload's date: one pass over
-- the table, which PostgreSQL may run in parallel (a count of distinct mailboxes would not
-- be: it sorts every row; outboxctl mailboxes counts them).
SELECT w.provider, w.region_name AS cell, count(*)::bigint AS depth,
       min(w.date_added) AS oldest_added, false AS estimated
  FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
 GROUP BY w.provider, w.region_name
 ORDER BY depth DESC, w.provider NULLS LAST, w.region_name NULLS LAST;

-- name: mailbox-depth-estimate
-- Payloads per provider from the planner's statistics alone: @table_rows (mailbox-catalog's
-- estimated_rows) times pg_stats' most common providers. No table read, as fresh as the
-- last ANALYZE, no split by cell, only providers common enough to be in the statistics.
SELECT v.provider, NULL::text AS cell, round(@table_rows::float8 * v.freq)::bigint AS depth,
       NULL::timestamptz AS oldest_added, true AS estimated
  FROM pg_stats s
 CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(provider, freq)
 WHERE s.schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(@table_name))
   AND s.tablename = (SELECT c.relname FROM pg_class c WHERE c.oid = to_regclass(@table_name))
   AND s.attname = 'provider'
 ORDER BY depth DESC, v.provider;

-- name: mailbox-reschedule
-- Make the payloads of mailbox @mailbox due now with a fresh backoff: what
-- WebhookPayload.create_from_request writes for a new payload, schedule_for THE_PAST
-- (@the_past) and no attempts, on every payload that is not so already (one range of the
-- (mailbox_name, id) index). Nothing is delivered or deleted: Sentry's next scheduler run
-- finds the head due and drains the mailbox.
UPDATE /* TEMPLATE: table */hybridcloud_webhookpayload w
   SET schedule_for = @the_past,
       attempts = 0
 WHERE w.mailbox_name = ANY (@mailboxes::text[])
   AND (w.schedule_for <> @the_past OR w.attempts <> 0)
RETURNING w.id, w.mailbox_name;

-- name: mailbox-common
-- The mailboxes among the planner's most common mailbox names whose estimated depth
-- (@table_rows, mailbox-catalog's estimated_rows, times their frequency) is at least
-- @min_depth: one mailbox of tens of thousands of payloads or more (INC-2324's shape),
-- found without counting any mailbox. As fresh as the last ANALYZE.
SELECT v.name AS mailbox_name, round(@table_rows::float8 * v.freq)::bigint AS estimated_depth
  FROM pg_stats s
 CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(name, freq)
 WHERE s.schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(@table_name))
   AND s.tablename = (SELECT c.relname FROM pg_class c WHERE c.oid = to_regclass(@table_name))
   AND s.attname = 'mailbox_name'
   AND @table_rows::float8 * v.freq >= @min_depth
 ORDER BY estimated_depth DESC, v.name;

-- name: mailbox-head-lock
-- Mailbox @mailbox's head, read whole and locked for the skip that archives then deletes it,
-- only while it is still @head_id: a drain that delivered it (or a payload of a lower id
-- committed late) leaves nothing to skip. SKIP LOCKED: a head Sentry's drain holds is
-- being delivered, never waited for.
SELECT w.id, w.mailbox_name, w.provider, w.destination_type, w.region_name AS cell, w.integration_id,
       w.date_added, w.schedule_for, w.attempts,
       w.request_method, w.request_path, w.request_headers, w.request_body
  FROM /* TEMPLATE: table */hybridcloud_webhookpayload w
 WHERE w.id = @head_id
   AND w.mailbox_name = @mailbox
   AND NOT EXISTS (SELECT 1 FROM /* TEMPLATE: table */hybridcloud_webhookpayload x
                    WHERE x.mailbox_name >= @mailbox AND x.mailbox_name <= @mailbox AND x.id < @head_id)
   FOR UPDATE SKIP LOCKED;

-- name: mailbox-restore-row
-- One archived webhook payload as it was, its request included; an id that exists again is
-- left alone.
INSERT INTO /* TEMPLATE: table */hybridcloud_webhookpayload (id, mailbox_name, provider, destination_type, region_name, integration_id,
       date_added, schedule_for, attempts, request_method, request_path, request_headers, request_body)
VALUES (@id, @mailbox, @provider, @destination_type, @cell, @integration_id,
        @date_added, @schedule_for, @attempts, @request_method, @request_path, @request_headers, @request_body)
ON CONFLICT (id) DO NOTHING;
