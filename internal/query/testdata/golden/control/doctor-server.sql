-- outboxctl: doctor-server
-- Primary or standby (and how far a standby's replay lags), the server's autovacuum
-- settings, and whether this role may see other sessions' state (pg_read_all_stats).
-- oldest_running_xid_age: age in xids of the oldest transaction still running, which any role sees.
SELECT pg_is_in_recovery() AS in_recovery,
       CASE WHEN pg_is_in_recovery()
            THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8
       END AS replay_lag_seconds,
       CASE WHEN pg_is_in_recovery()
            THEN pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint
       END AS replay_lag_bytes,
       current_setting('autovacuum') = 'on' AS autovacuum,
       current_setting('autovacuum_vacuum_threshold')::bigint AS vacuum_threshold,
       current_setting('autovacuum_vacuum_scale_factor')::float8 AS vacuum_scale_factor,
       current_setting('max_prepared_transactions')::int AS max_prepared_transactions,
       current_user::text AS role,
       pg_has_role('pg_read_all_stats', 'USAGE') AS sees_all_sessions,
       age(pg_snapshot_xmin(pg_current_snapshot())::text::xid)::bigint AS oldest_running_xid_age;
