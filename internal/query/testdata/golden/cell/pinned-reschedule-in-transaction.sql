-- outboxctl: session
-- What outboxctl sends first: the settings hold for this transaction alone (SET LOCAL).
BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE;
SET LOCAL application_name = 'outboxctl/drain';
SET LOCAL statement_timeout = '30000';
SET LOCAL jit = off;

-- outboxctl: reschedule
-- Make the shard due now with a fresh backoff: rows get scheduled_for = THE_PAST (2016-08-01),
-- as a new row has; Sentry's next claim then starts again from a 2 s delay.
/* outboxctl reschedule */ UPDATE sentry_regionoutbox o
   SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
       scheduled_from = now()
 WHERE o.shard_scope = 0  -- ORGANIZATION_SCOPE
   AND o.shard_identifier = 7;

-- outboxctl: commit
-- The statements above take effect together.
COMMIT;
