-- outboxctl: doctor-xmin-sessions
-- Sessions holding back the xmin horizon, oldest first: while one runs, VACUUM keeps every
-- dead outbox row deleted after it started, and every claim walks past them.
-- state 'idle in transaction' = a client opened a transaction and went away without ending it.
SELECT a.pid, a.usename::text AS usename, a.application_name, a.backend_type, a.state,
       a.backend_xid::text AS backend_xid, a.backend_xmin::text AS backend_xmin,
       greatest(age(a.backend_xid), age(a.backend_xmin))::bigint AS xmin_age_xids,
       extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_seconds,
       extract(epoch FROM now() - a.state_change)::float8 AS state_age_seconds,
       left(a.query, 200) AS query
  FROM pg_stat_activity a
 WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
   AND a.pid <> pg_backend_pid()
 ORDER BY greatest(age(a.backend_xid), age(a.backend_xmin)) DESC, a.pid
 LIMIT 10;
