-- The repairs: reschedule (make a shard due now) and the DELETE of rows an archive staged
-- (compact, skip). Each runs in the transaction the session preamble opens, after
-- db.CheckPrimary; the command's --reason is prefixed as a comment (Why.Mark).

-- name: reschedule
-- Every row of the shard (up to the plan's highest id, @watermark) gets the schedule of a
-- fresh row: scheduled_for = THE_PAST (2016-08-01), so Sentry's next claim starts again from
-- a 2 s delay.
UPDATE /* TEMPLATE: table */sentry_controloutbox o
   SET scheduled_for = '2016-08-01 00:00:00+00'::timestamptz,
       scheduled_from = now()
 /* IF: cell */WHERE o./* TEMPLATE: cell_column */region_name = @cell/* END: cell */
   AND o.shard_scope = @scope
   AND o.shard_identifier = @shard
   /* IF: watermark */AND o.id <= @watermark/* END: watermark */;

-- name: delete-archived
-- Delete the rows an archive has staged, by id; the ids returned are what the archive's
-- commit marker names.
DELETE FROM /* TEMPLATE: table */sentry_controloutbox o
 WHERE o.id = ANY (@ids::bigint[])
RETURNING o.id;
