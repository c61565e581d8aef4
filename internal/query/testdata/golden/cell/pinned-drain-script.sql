-- outboxctl drain script: one message of one shard, in two runs.
--   1. psql -f THIS_FILE                 reads only: shows the message to deliver and its id
--   2. deliver that payload yourself, then
--      psql -v delivered=ID -f THIS_FILE  deletes the delivered row and the older rows of its
--                                         group, only if ID is still the group's newest row
-- Run as printed it changes nothing. Needs psql 10 or newer (\if).
\set ON_ERROR_STOP on
DO $guard$
BEGIN
  IF statement_timestamp() <> transaction_timestamp() THEN
    RAISE EXCEPTION 'outboxctl: run this drain script outside a transaction block (no BEGIN before it): it commits each message on its own';
  END IF;
END
$guard$;

\if :{?delivered}
-- outboxctl: session
-- What outboxctl sends first: the settings hold for this transaction alone (SET LOCAL).
BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE;
SET LOCAL application_name = 'outboxctl/drain';
SET LOCAL statement_timeout = '30000';
SET LOCAL jit = off;

-- outboxctl: drain-head
-- Lock the shard's lowest row without waiting (claims the shard).
SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
 ORDER BY o.id
 LIMIT 1
   FOR UPDATE NOWAIT \gset head_

-- outboxctl: drain-newest
-- The newest row of the head's coalesce group: the one to deliver.
-- The payload is shown as a JSON string, so no byte of it reaches the terminal raw.
SELECT o.id AS newest_id,
       coalesce(to_json(o.payload::text)::text, 'SQL NULL (no payload)') AS payload_shown
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = :head_category
   AND o.object_identifier = :head_object_identifier
 ORDER BY o.id DESC
 LIMIT 1 \gset 

SELECT :'newest_id'::bigint = :'delivered'::bigint AS delivered_is_newest \gset
\if :delivered_is_newest
-- outboxctl: drain-delete-group
-- The delivered row and the older rows of its group: delete them.
DELETE FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = :head_category
   AND o.object_identifier = :head_object_identifier
   AND o.id <= :'delivered'::bigint;
COMMIT;
\echo deleted the group of row :newest_id: run step 1 again for the next message
\else
ROLLBACK;
\echo nothing deleted: the newest row of the head group is :newest_id, not :'delivered'; deliver row :newest_id, then run with -v delivered=:newest_id
\endif
\else
-- outboxctl: drain-peek-head
-- The shard's head: the lowest row, the one Sentry is blocked on (read only).
SELECT o.id, o.category, o.object_identifier
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
 ORDER BY o.id
 LIMIT 1 \gset head_

-- outboxctl: drain-newest
-- The newest row of the head's coalesce group: the one to deliver.
-- The payload is shown as a JSON string, so no byte of it reaches the terminal raw.
SELECT o.id AS newest_id,
       coalesce(to_json(o.payload::text)::text, 'SQL NULL (no payload)') AS payload_shown
  FROM sentry_regionoutbox o
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7
   AND o.category = :head_category
   AND o.object_identifier = :head_object_identifier
 ORDER BY o.id DESC
 LIMIT 1 \gset 
\echo deliver row :newest_id (category :head_category, object :head_object_identifier), payload (as a JSON string):
\echo :payload_shown
\echo then run this script again with: psql -v delivered=:newest_id -f THIS_FILE
\endif
