-- outboxctl: delete-archived
-- Delete rows the archive has staged, by id; returns the ids deleted.
DELETE FROM sentry_controloutbox o
 WHERE o.id = ANY (ARRAY[1, 2, 9999]::bigint[])
RETURNING o.id;
