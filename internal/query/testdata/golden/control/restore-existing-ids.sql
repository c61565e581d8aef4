-- outboxctl: existing-ids
-- Which archived ids are in the table now.
SELECT o.id
  FROM sentry_controloutbox o
 WHERE o.id = ANY (ARRAY[1, 3, 9999]::bigint[])
 ORDER BY o.id;
