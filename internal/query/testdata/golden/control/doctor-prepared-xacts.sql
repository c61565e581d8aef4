-- outboxctl: doctor-prepared-xacts
-- Prepared transactions, oldest first: each holds the xmin horizon (and its locks) until
-- COMMIT PREPARED or ROLLBACK PREPARED.
SELECT p.gid, p.owner::text AS owner, p.database::text AS database,
       p.transaction::text AS xid, age(p.transaction)::bigint AS xmin_age_xids,
       p.prepared,
       extract(epoch FROM now() - p.prepared)::float8 AS age_seconds
  FROM pg_prepared_xacts p
 ORDER BY age(p.transaction) DESC, p.gid
 LIMIT 10;
