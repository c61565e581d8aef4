package query

import (
	"fmt"
	"strings"
	"time"
)

// The statements of `outboxctl doctor`. Each reads either the catalog and the statistics
// views (cheap, no table privilege needed) or the outbox table through the indexes Sentry
// has (reference §1.4), with bounded LIMITs: none reads the heap beyond a few rows per shard.

// BackoffCapSeconds is Sentry's backoff cap (PR #51199): a head row whose delay reached it
// has failed about a dozen times in a row.
const BackoffCapSeconds = 3600

// DoctorServerRow is the row of DoctorServer; the replay lag is NULL on a primary.
type DoctorServerRow struct {
	InRecovery      bool     `db:"in_recovery"`
	ReplayLag       *float64 `db:"replay_lag_seconds"`
	ReplayLagBytes  *int64   `db:"replay_lag_bytes"`
	Autovacuum      bool     `db:"autovacuum"`
	VacThreshold    int64    `db:"vacuum_threshold"`
	VacScale        float64  `db:"vacuum_scale_factor"`
	MaxPrepared     int64    `db:"max_prepared_transactions"`
	Role            string   `db:"role"`
	SeesAllSessions bool     `db:"sees_all_sessions"`
	OldestXidAge    int64    `db:"oldest_running_xid_age"`
}

// DoctorServer reads what the server says about itself: primary or standby and its replay
// lag, the autovacuum settings, and whether this role sees other sessions' state.
func DoctorServer() Statement {
	text := `SELECT pg_is_in_recovery() AS in_recovery,
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
       age(pg_snapshot_xmin(pg_current_snapshot())::text::xid)::bigint AS oldest_running_xid_age`
	return Statement{
		Name: "doctor-server",
		Doc: []string{
			"Primary or standby (and how far a standby's replay lags), the server's autovacuum",
			"settings, and whether this role may see other sessions' state (pg_read_all_stats).",
			"oldest_running_xid_age: age in xids of the oldest transaction still running, which any role sees.",
		},
		Text: text,
		Args: Args{},
	}
}

// qualifiedNames qualifies table names with schema when one is set.
func qualifiedNames(schema string, tables []string) []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = qualified(schema, t)
	}
	return out
}

// DoctorTableRow is one row of DoctorTables. The statistics come from a LEFT JOIN of
// pg_stat_all_tables, so each may be NULL; a table never vacuumed has NULL vacuum times.
type DoctorTableRow struct {
	TableName       string     `db:"table_name"`
	LiveTuples      *int64     `db:"n_live_tup"`
	DeadTuples      *int64     `db:"n_dead_tup"`
	RelTuples       float64    `db:"reltuples"`
	LastVacuum      *time.Time `db:"last_vacuum"`
	LastAutovacuum  *time.Time `db:"last_autovacuum"`
	AutovacuumCount *int64     `db:"autovacuum_count"`
	RelOptions      []any      `db:"reloptions"`
	HeapBytes       int64      `db:"heap_bytes"`
	IndexBytes      int64      `db:"index_bytes"`
}

// DoctorTables reads the vacuum state of the outbox tables from the statistics views and the
// catalog: dead and live tuples, the last (auto)vacuum, the table's autovacuum reloptions,
// and heap and index sizes.
func DoctorTables(schema string, tables []string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT c.relname::text AS table_name,
       s.n_live_tup, s.n_dead_tup,
       c.reltuples::float8 AS reltuples,
       s.last_vacuum, s.last_autovacuum, s.autovacuum_count,
       coalesce(c.reloptions, '{}')::text[] AS reloptions,
       pg_relation_size(c.oid) AS heap_bytes,
       pg_indexes_size(c.oid) AS index_bytes
  FROM unnest(%s::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
  LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
 ORDER BY t.n`, b.arg("tables", qualifiedNames(schema, tables), ""))
	return Statement{
		Name: "doctor-tables",
		Doc: []string{
			"Vacuum state of the outbox tables. Autovacuum vacuums a table once n_dead_tup exceeds",
			"autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × reltuples (reloptions override",
			"the server settings); reltuples = -1 means never analysed.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorIndexRow is one row of DoctorIndexes; Columns holds one name per key column
// ("(expression)" for an expression).
type DoctorIndexRow struct {
	TableName string `db:"table_name"`
	IndexName string `db:"index_name"`
	Columns   []any  `db:"columns"`
	Valid     bool   `db:"valid"`
}

// DoctorIndexes lists the indexes of the outbox tables with their column sets, so drift from
// Sentry's three indexes (reference §1.4) is seen by columns, whatever the index names.
func DoctorIndexes(schema string, tables []string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT c.relname::text AS table_name,
       ic.relname::text AS index_name,
       ARRAY(SELECT coalesce(a.attname::text, '(expression)')
               FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
               LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              ORDER BY k.n) AS columns,
       i.indisvalid AS valid
  FROM unnest(%s::text[]) WITH ORDINALITY AS t(name, n)
  JOIN pg_class c ON c.oid = to_regclass(t.name)
  JOIN pg_index i ON i.indrelid = c.oid
  JOIN pg_class ic ON ic.oid = i.indexrelid
 ORDER BY t.n, ic.relname`, b.arg("tables", qualifiedNames(schema, tables), ""))
	return Statement{
		Name: "doctor-indexes",
		Doc: []string{
			"Indexes of the outbox tables by column set. Sentry has three, each led by the shard key:",
			"(…, category, object_identifier), (…, scheduled_for) and (…, id); the control table's lead with region_name.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorXminSessionRow is one row of DoctorXminSessions. pg_stat_activity hides the state,
// times and query of other roles' sessions from a role without pg_read_all_stats (NULL),
// and background processes have no user; one of the two xids is NULL.
type DoctorXminSessionRow struct {
	PID             int64    `db:"pid"`
	Usename         *string  `db:"usename"`
	ApplicationName *string  `db:"application_name"`
	BackendType     *string  `db:"backend_type"`
	State           *string  `db:"state"`
	BackendXid      *string  `db:"backend_xid"`
	BackendXmin     *string  `db:"backend_xmin"`
	XminAgeXids     int64    `db:"xmin_age_xids"`
	XactAgeSeconds  *float64 `db:"xact_age_seconds"`
	StateAgeSeconds *float64 `db:"state_age_seconds"`
	Query           *string  `db:"query"`
}

// DoctorXminSessions lists the sessions holding back the xmin horizon, oldest first: those
// with a transaction id (backend_xid) or a snapshot (backend_xmin). A role without
// pg_read_all_stats sees the pids, application names and xids of other roles' sessions but
// not their state, start times or queries (NULL here).
func DoctorXminSessions(limit int) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT a.pid, a.usename::text AS usename, a.application_name, a.backend_type, a.state,
       a.backend_xid::text AS backend_xid, a.backend_xmin::text AS backend_xmin,
       greatest(age(a.backend_xid), age(a.backend_xmin))::bigint AS xmin_age_xids,
       extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_seconds,
       extract(epoch FROM now() - a.state_change)::float8 AS state_age_seconds,
       left(a.query, 200) AS query
  FROM pg_stat_activity a
 WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
   AND a.pid <> pg_backend_pid()
 ORDER BY greatest(age(a.backend_xid), age(a.backend_xmin)) DESC, a.pid
 LIMIT %s`, b.arg("limit", limitOrDefault(limit), ""))
	return Statement{
		Name: "doctor-xmin-sessions",
		Doc: []string{
			"Sessions holding back the xmin horizon, oldest first: while one runs, VACUUM keeps every",
			"dead outbox row deleted after it started, and every claim walks past them.",
			"state 'idle in transaction' = a client opened a transaction and went away without ending it.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorPreparedXactRow is one row of DoctorPreparedXacts; owner and database are NULL
// once the role or the database has been dropped.
type DoctorPreparedXactRow struct {
	GID         string    `db:"gid"`
	Owner       *string   `db:"owner"`
	Database    *string   `db:"database"`
	Xid         string    `db:"xid"`
	XminAgeXids int64     `db:"xmin_age_xids"`
	Prepared    time.Time `db:"prepared"`
	AgeSeconds  float64   `db:"age_seconds"`
}

// DoctorPreparedXacts lists prepared transactions (two-phase commit), oldest first: an
// orphaned one holds the xmin horizon and its locks until someone commits or rolls it back.
func DoctorPreparedXacts(limit int) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT p.gid, p.owner::text AS owner, p.database::text AS database,
       p.transaction::text AS xid, age(p.transaction)::bigint AS xmin_age_xids,
       p.prepared,
       extract(epoch FROM now() - p.prepared)::float8 AS age_seconds
  FROM pg_prepared_xacts p
 ORDER BY age(p.transaction) DESC, p.gid
 LIMIT %s`, b.arg("limit", limitOrDefault(limit), ""))
	return Statement{
		Name: "doctor-prepared-xacts",
		Doc: []string{
			"Prepared transactions, oldest first: each holds the xmin horizon (and its locks) until",
			"COMMIT PREPARED or ROLLBACK PREPARED.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorReplicationSlotRow is one row of DoctorReplicationSlots: a slot holds an xmin, a
// catalog_xmin, both or neither, has a pid only while active, and a restart_lsn once used.
type DoctorReplicationSlotRow struct {
	SlotName           string  `db:"slot_name"`
	SlotType           string  `db:"slot_type"`
	Active             bool    `db:"active"`
	ActivePID          *int64  `db:"active_pid"`
	Xmin               *string `db:"xmin"`
	XminAgeXids        *int64  `db:"xmin_age_xids"`
	CatalogXmin        *string `db:"catalog_xmin"`
	CatalogXminAgeXids *int64  `db:"catalog_xmin_age_xids"`
	RestartLSN         *string `db:"restart_lsn"`
	RetainedWALBytes   *int64  `db:"retained_wal_bytes"`
}

// DoctorReplicationSlots lists replication slots with the xmin they hold and the WAL they keep.
func DoctorReplicationSlots() Statement {
	text := `SELECT s.slot_name::text AS slot_name, s.slot_type, s.active, s.active_pid,
       s.xmin::text AS xmin, age(s.xmin)::bigint AS xmin_age_xids,
       s.catalog_xmin::text AS catalog_xmin, age(s.catalog_xmin)::bigint AS catalog_xmin_age_xids,
       s.restart_lsn::text AS restart_lsn,
       pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
                       s.restart_lsn)::bigint AS retained_wal_bytes
  FROM pg_replication_slots s
 ORDER BY greatest(age(s.xmin), age(s.catalog_xmin)) DESC NULLS LAST, s.slot_name`
	return Statement{
		Name: "doctor-replication-slots",
		Doc: []string{
			"Replication slots: xmin (a standby's hot_standby_feedback) and catalog_xmin (logical decoding)",
			"hold the xmin horizon; restart_lsn keeps WAL while the slot is not consumed.",
		},
		Text: text,
		Args: Args{},
	}
}

// DoctorLockTimeoutRow is the row of DoctorLockTimeout: the setting now in force.
type DoctorLockTimeoutRow struct {
	StatementTimeout string `db:"statement_timeout"`
}

// DoctorLockTimeout shortens the statement timeout for the rest of the transaction, before
// DoctorLockWaits: pg_blocking_pids takes the lock manager's partition locks, which must
// never be held for long on a busy primary.
func DoctorLockTimeout(d time.Duration) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT set_config('statement_timeout', %s, true) AS statement_timeout`,
		b.arg("timeout", fmt.Sprint(d.Milliseconds()), "milliseconds, for the rest of this transaction"))
	return Statement{
		Name: "doctor-lock-timeout",
		Doc:  []string{"A short statement timeout for the lock query that follows (SET LOCAL)."},
		Text: text,
		Args: b.args,
	}
}

// DoctorLockWaitRow is one row of DoctorLockWaits. The session's application and start
// come from a LEFT JOIN of pg_stat_activity (NULL once it has gone); the row columns are
// NULL unless the lock is on a row of an outbox (and cell unless that row is a control one).
type DoctorLockWaitRow struct {
	PID             int64    `db:"pid"`
	ApplicationName *string  `db:"application_name"`
	TableName       string   `db:"table_name"`
	LockType        string   `db:"locktype"`
	Mode            string   `db:"mode"`
	BlockedBy       []any    `db:"blocked_by"`
	WaitingSeconds  *float64 `db:"waiting_seconds"`
	Cell            *string  `db:"cell"`
	ShardScope      *int64   `db:"shard_scope"`
	ShardIdentifier *int64   `db:"shard_identifier"`
	RowID           *int64   `db:"row_id"`
}

// DoctorLockWaits lists the sessions waiting on locks of the outbox tables, who blocks them
// (pg_blocking_pids, called once per waiting session), and, when the lock is on a row, the
// row's shard (looked up by ctid: a TID probe, not a scan). A session waiting for a row lock
// waits on the holder's transaction id while holding the row's tuple lock, so the tuple lock
// it holds names the row; a second waiter waits on the tuple lock itself.
func DoctorLockWaits(targets []Target) Statement {
	b := newBuilder()
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.From()
	}
	var rowLookups []string
	for i, t := range targets {
		cell := "NULL::text"
		if t.Control() {
			cell = "r." + t.cellCol() + "::text"
		}
		rowLookups = append(rowLookups, fmt.Sprintf(`    SELECT %s AS cell, r.shard_scope, r.shard_identifier, r.id
      FROM %s r
     WHERE w.relid = to_regclass(%s)
       AND r.ctid = format('(%%s,%%s)', w.page, w.tuple)::tid`, cell, t.From(), b.arg(fmt.Sprintf("t%d", i), t.From(), "")))
	}
	text := fmt.Sprintf(`WITH outbox AS (
    SELECT c.oid, c.relname::text AS table_name
      FROM unnest(%[1]s::text[]) AS t(name)
      JOIN pg_class c ON c.oid = to_regclass(t.name)
),
waits AS (
    SELECT DISTINCT ON (l.pid) l.pid, l.locktype, l.mode,
           coalesce(l.relation, tl.relation) AS relid,
           coalesce(l.page, tl.page) AS page, coalesce(l.tuple, tl.tuple) AS tuple
      FROM pg_locks l
      LEFT JOIN pg_locks tl ON tl.pid = l.pid AND tl.locktype = 'tuple' AND tl.granted
     WHERE NOT l.granted
       AND coalesce(l.relation, tl.relation) IN (SELECT o.oid FROM outbox o)
     ORDER BY l.pid
     LIMIT %[2]s
)
SELECT w.pid, a.application_name, o.table_name, w.locktype, w.mode,
       pg_blocking_pids(w.pid) AS blocked_by,
       extract(epoch FROM now() - a.query_start)::float8 AS waiting_seconds,
       lr.cell, lr.shard_scope, lr.shard_identifier, lr.id AS row_id
  FROM waits w
  JOIN outbox o ON o.oid = w.relid
  LEFT JOIN pg_stat_activity a ON a.pid = w.pid
  LEFT JOIN LATERAL (
%[3]s
  ) lr ON w.page IS NOT NULL
 ORDER BY w.pid`, b.arg("tables", names, ""), b.arg("limit", 50, ""), strings.Join(rowLookups, "\n    UNION ALL\n"))
	return Statement{
		Name: "doctor-lock-waits",
		Doc: []string{
			"Sessions waiting on locks of the outbox tables and the pids blocking them. A waiter on a row",
			"(locktype transactionid or tuple) is a drain or a web request queued behind the shard's head",
			"row: the cell, shard and row id say which. waiting_seconds is since the waiter's statement began.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorUnclaimedRow is one row of DoctorUnclaimed (every outbox column is NOT NULL). In the
// control silo the row also has the cell, under the column name the table gives it.
type DoctorUnclaimedRow struct {
	ShardScope       int64     `db:"shard_scope"`
	ShardIdentifier  int64     `db:"shard_identifier"`
	NextAttempt      time.Time `db:"next_attempt"`
	HeadID           int64     `db:"head_id"`
	HeadCategory     int64     `db:"head_category"`
	HeadObject       int64     `db:"head_object"`
	LastClaim        time.Time `db:"last_claim"`
	HeadAdded        time.Time `db:"head_added"`
	UnclaimedSeconds float64   `db:"unclaimed_seconds"`
	DueShards        int64     `db:"due_shards"`
}

// DoctorUnclaimed looks for due shards whose head has not been claimed for a while: the
// shards of the oldest rows (schedule_batch splits [min(id), max(id)] into ranges on every
// run, and the first range, holding the oldest rows, is always handed out: if the workers
// run, the oldest due shards are claimed within a run), each confirmed due by one probe of
// the (…, scheduled_for) index and read at its head (lowest id; its scheduled_from is when
// Sentry last claimed the shard, or when the row was written if never claimed).
func DoctorUnclaimed(t Target, sample, limit int) Statement {
	b := newBuilder()
	b.cellFilter(t, "o")
	keys := strings.Join(t.shardCols("o"), ", ")
	text := fmt.Sprintf(`WITH oldest AS (
    SELECT %[1]s
      FROM %[2]s o
%[3]s
     ORDER BY o.id
     LIMIT %[4]s
),
shards AS (
    SELECT DISTINCT * FROM oldest
)
SELECT %[5]ss.shard_scope, s.shard_identifier, n.next_attempt,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_claim, head.date_added AS head_added,
       extract(epoch FROM now() - head.scheduled_from)::float8 AS unclaimed_seconds,
       count(*) OVER () AS due_shards
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.scheduled_for AS next_attempt
      FROM %[2]s o
     WHERE %[6]s
     ORDER BY o.scheduled_for
     LIMIT 1
 ) n
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM %[2]s o
     WHERE %[6]s
     ORDER BY o.id
     LIMIT 1
 ) head
 WHERE n.next_attempt <= now()
 ORDER BY head.scheduled_from, %[7]s
 LIMIT %[8]s`,
		keys, t.From(), b.whereClause("     "), b.arg("sample", sample, "oldest rows whose shards are checked"),
		selectCell(t, "s"), t.sameShard("o", "s", "     "), strings.Join(t.shardCols("s"), ", "), b.arg("limit", limitOrDefault(limit), ""))
	return Statement{
		Name: "doctor-unclaimed-shards",
		Doc: []string{
			"Due shards among the shards of the oldest rows of " + t.Describe() + ", longest unclaimed first.",
			"last_claim = the head row's scheduled_from: when Sentry last claimed the shard (or wrote the",
			"row, if it never did). Due and unclaimed for minutes: Sentry's drain tasks are not running or",
			"not reaching this database. Claimed seconds ago: probably draining right now.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DoctorCappedRow is one row of DoctorCappedShards (plus the cell column in the control silo).
type DoctorCappedRow struct {
	ShardScope       int64     `db:"shard_scope"`
	ShardIdentifier  int64     `db:"shard_identifier"`
	Depth            int64     `db:"depth"`
	NextAttempt      time.Time `db:"next_attempt"`
	HeadID           int64     `db:"head_id"`
	HeadCategory     int64     `db:"head_category"`
	HeadObject       int64     `db:"head_object"`
	LastAttempt      time.Time `db:"last_attempt"`
	HeadAdded        time.Time `db:"head_added"`
	LastDelaySeconds float64   `db:"last_delay_seconds"`
	CappedShards     int64     `db:"capped_shards"`
}

// DoctorCappedShards finds shards in backoff whose head row's delay reached the 1 h cap
// (poison suspects): candidates from one index-only pass over the (…, scheduled_for) index
// (only claimed shards have future rows), confirmed in backoff by one probe each, then the
// head row read once per shard.
func DoctorCappedShards(t Target, limit int) Statement {
	b := newBuilder()
	b.and("o.scheduled_for > now()")
	b.cellFilter(t, "o")
	keys := strings.Join(t.shardCols("o"), ", ")
	text := fmt.Sprintf(`WITH candidates AS (
    SELECT %[1]s, count(*) AS depth
      FROM %[2]s o
%[3]s
     GROUP BY %[1]s
),
backing_off AS (
    SELECT k.*, h.next_attempt
      FROM candidates k
     CROSS JOIN LATERAL (
        SELECT o.scheduled_for AS next_attempt
          FROM %[2]s o
         WHERE %[4]s
         ORDER BY o.scheduled_for
         LIMIT 1
     ) h
     WHERE h.next_attempt > now()
)
SELECT %[5]sk.shard_scope, k.shard_identifier, k.depth, k.next_attempt,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_attempt, head.date_added AS head_added,
       extract(epoch FROM head.scheduled_for - head.scheduled_from)::float8 AS last_delay_seconds,
       count(*) OVER () AS capped_shards
  FROM backing_off k
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.scheduled_for, o.date_added
      FROM %[2]s o
     WHERE %[6]s
     ORDER BY o.id
     LIMIT 1
 ) head
 WHERE head.scheduled_for - head.scheduled_from >= %[7]s::int * interval '1 second'
 ORDER BY head.date_added, %[8]s
 LIMIT %[9]s`,
		keys, t.From(), b.whereClause("     "), t.sameShard("o", "k", "         "), selectCell(t, "k"),
		t.sameShard("o", "k", "     "), b.arg("cap", BackoffCapSeconds, "seconds: Sentry's backoff cap"),
		strings.Join(t.shardCols("k"), ", "), b.arg("limit", limitOrDefault(limit), ""))
	return Statement{
		Name: "doctor-capped-shards",
		Doc: []string{
			"Shards of " + t.Describe() + " in backoff at Sentry's 1 h cap, oldest head message first:",
			"the head row (lowest id) has failed about a dozen times in a row and blocks the whole shard.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// DisabledDepthCap bounds the depth count of a kill-switched shard: a count of the cap
// means "at least".
const DisabledDepthCap = 10000

// DoctorDisabledRow is one row of DoctorDisabledShards (plus the cell column in the control silo).
type DoctorDisabledRow struct {
	ShardScope      int64     `db:"shard_scope"`
	ShardIdentifier int64     `db:"shard_identifier"`
	Depth           int64     `db:"depth"`
	HeadID          int64     `db:"head_id"`
	HeadCategory    int64     `db:"head_category"`
	HeadObject      int64     `db:"head_object"`
	LastVisit       time.Time `db:"last_visit"`
	HeadAdded       time.Time `db:"head_added"`
	TrimmingStalled bool      `db:"trimming_stalled"`
}

// DoctorDisabledShards reads the kill-switched shards of one scope that still hold rows:
// depth (counted on the (…, id) index up to DisabledDepthCap), the head row, when Sentry last
// visited (the head's scheduled_from), and whether the head's coalesce group has a newer
// row. Sentry trims a disabled shard by deleting the older rows of its head group; once the
// head is the newest of its group, nothing is ever deleted again (reference §3.8): trimming
// has stalled. In the cell silo each listed id is one shard, probed on the index; in the
// control silo the cells holding each id are found first (the index leads with the cell,
// so without --cell that reads the control table, which is small).
func DoctorDisabledShards(t Target, scope Enum, ids []int64) Statement {
	b := newBuilder()
	scopeArg := b.arg("scope", scope.Value, scope.Name)
	idsArg := b.arg("ids", ids, "")
	shards := fmt.Sprintf(`SELECT %s::int AS shard_scope, i.id AS shard_identifier
      FROM unnest(%s::bigint[]) AS i(id)`, scopeArg, idsArg)
	if t.Control() {
		b.cellFilter(t, "o")
		b.and("o.shard_scope = " + scopeArg)
		b.and("o.shard_identifier = ANY (" + idsArg + "::bigint[])")
		shards = fmt.Sprintf(`SELECT DISTINCT %s
      FROM %s o
%s`, strings.Join(t.shardCols("o"), ", "), t.From(), b.whereClause("     "))
	}
	text := fmt.Sprintf(`WITH shards AS (
    %[1]s
)
SELECT %[2]ss.shard_scope, s.shard_identifier, d.depth,
       head.id AS head_id, head.category AS head_category, head.object_identifier AS head_object,
       head.scheduled_from AS last_visit, head.date_added AS head_added,
       NOT EXISTS (SELECT 1 FROM %[3]s o
                    WHERE %[4]s
                      AND o.category = head.category
                      AND o.object_identifier = head.object_identifier
                      AND o.id > head.id) AS trimming_stalled
  FROM shards s
 CROSS JOIN LATERAL (
    SELECT o.id, o.category, o.object_identifier, o.scheduled_from, o.date_added
      FROM %[3]s o
     WHERE %[5]s
     ORDER BY o.id
     LIMIT 1
 ) head
 CROSS JOIN LATERAL (
    SELECT count(*) AS depth
      FROM (SELECT 1 FROM %[3]s o
             WHERE %[6]s
             LIMIT %[7]s) x
 ) d
 ORDER BY d.depth DESC, %[8]s`,
		shards, selectCell(t, "s"), t.From(), t.sameShard("o", "s", "                    "),
		t.sameShard("o", "s", "     "), t.sameShard("o", "s", "             "),
		b.arg("depth_cap", DisabledDepthCap, "count at most this many rows"), strings.Join(t.shardCols("s"), ", "))
	return Statement{
		Name: "doctor-disabled-shards",
		Doc: []string{
			fmt.Sprintf("Kill-switched %s shards of %s that still hold rows.", scope.Name, t.Describe()),
			"depth is counted up to 10000 (10000 means at least). trimming_stalled = the head row is the newest",
			"of its coalesce group: Sentry's visits delete nothing more, and every row behind it waits until the",
			"shard is re-enabled.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}
