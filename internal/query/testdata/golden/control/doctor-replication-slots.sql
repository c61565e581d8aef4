-- outboxctl: doctor-replication-slots
-- Replication slots: xmin (a standby's hot_standby_feedback) and catalog_xmin (logical decoding)
-- hold the xmin horizon; restart_lsn keeps WAL while the slot is not consumed.
SELECT s.slot_name::text AS slot_name, s.slot_type, s.active, s.active_pid,
       s.xmin::text AS xmin, age(s.xmin)::bigint AS xmin_age_xids,
       s.catalog_xmin::text AS catalog_xmin, age(s.catalog_xmin)::bigint AS catalog_xmin_age_xids,
       s.restart_lsn::text AS restart_lsn,
       pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
                       s.restart_lsn)::bigint AS retained_wal_bytes
  FROM pg_replication_slots s
 ORDER BY greatest(age(s.xmin), age(s.catalog_xmin)) DESC NULLS LAST, s.slot_name;
