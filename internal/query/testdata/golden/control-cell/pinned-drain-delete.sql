-- outboxctl: drain-delete
-- Delete delivered or superseded rows by id.
DELETE FROM sentry_controloutbox o
 WHERE o.id = ANY (ARRAY[4, 5]::bigint[])
RETURNING o.id;
