package query

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// The statements of `outboxctl doctor`, in sql/doctor.sql. Each reads either the catalog and the statistics
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
	return sqlStatement("doctor-server", []string{
		"Primary or standby (and how far a standby's replay lags), the server's autovacuum",
		"settings, and whether this role may see other sessions' state (pg_read_all_stats).",
		"oldest_running_xid_age: age in xids of the oldest transaction still running, which any role sees.",
	}, nil, nil)
}

// qualifiedNames qualifies table names with schema when one is set.
func qualifiedNames(schema string, tables []string) []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = qualified(schema, t)
	}
	return out
}

// DoctorTableRow is one row of DoctorTables. The statistics come from the pg_stat_get_*
// functions (0 for a table the server has no statistics of; pointers, as a view's LEFT JOIN
// gave them); a table never vacuumed has NULL vacuum times.
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
	return sqlStatement("doctor-tables", []string{
		"Vacuum state of the outbox tables. Autovacuum vacuums a table once n_dead_tup exceeds",
		"autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × reltuples (reloptions override",
		"the server settings); reltuples = -1 means never analysed.",
	}, nil, Args{"tables": {Value: qualifiedNames(schema, tables)}})
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
	return sqlStatement("doctor-indexes", []string{
		"Indexes of the outbox tables by column set. Sentry has three, each led by the shard key:",
		"(…, category, object_identifier), (…, scheduled_for) and (…, id); the control table's lead with region_name.",
	}, nil, Args{"tables": {Value: qualifiedNames(schema, tables)}})
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
	return sqlStatement("doctor-xmin-sessions", []string{
		"Sessions holding back the xmin horizon, oldest first: while one runs, VACUUM keeps every",
		"dead outbox row deleted after it started, and every claim walks past them.",
		"state 'idle in transaction' = a client opened a transaction and went away without ending it.",
	}, nil, Args{"limit": {Value: limitOrDefault(limit)}})
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
	return sqlStatement("doctor-prepared-xacts", []string{
		"Prepared transactions, oldest first: each holds the xmin horizon (and its locks) until",
		"COMMIT PREPARED or ROLLBACK PREPARED.",
	}, nil, Args{"limit": {Value: limitOrDefault(limit)}})
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
	return sqlStatement("doctor-replication-slots", []string{
		"Replication slots: xmin (a standby's hot_standby_feedback) and catalog_xmin (logical decoding)",
		"hold the xmin horizon; restart_lsn keeps WAL while the slot is not consumed.",
	}, nil, nil)
}

// DoctorLockTimeoutRow is the row of DoctorLockTimeout: the setting now in force.
type DoctorLockTimeoutRow struct {
	StatementTimeout string `db:"statement_timeout"`
}

// DoctorLockTimeout shortens the statement timeout for the rest of the transaction, before
// DoctorLockWaits: pg_blocking_pids takes the lock manager's partition locks, which must
// never be held for long on a busy primary.
func DoctorLockTimeout(d time.Duration) Statement {
	return sqlStatement("doctor-lock-timeout", []string{"A short statement timeout for the lock query that follows (SET LOCAL)."}, nil,
		Args{"timeout": {Value: fmt.Sprint(d.Milliseconds()), Note: "milliseconds, for the rest of this transaction"}})
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
	names := make([]string, len(targets))
	args := Args{"limit": {Value: 50}}
	lookups := make([]sqltemplate.Part, len(targets))
	var err error
	for i, t := range targets {
		names[i] = t.From()
		var part Args
		if lookups[i], part, err = numberedPart("doctor-lock-row", i, t.idents(), Args{"t": {Value: t.From()}}, t.controlFragments()...); err != nil {
			break
		}
		for k, v := range part {
			args[k] = v
		}
	}
	args["tables"] = Arg{Value: names}
	st := regionStatement("doctor-lock-waits", []string{
		"Sessions waiting on locks of the outbox tables and the pids blocking them. A waiter on a row",
		"(locktype transactionid or tuple) is a drain or a web request queued behind the shard's head",
		"row: the cell, shard and row id say which. waiting_seconds is since the waiter's statement began.",
	}, nil, map[string]sqltemplate.Part{"row_lookups": sqltemplate.Join("\n", lookups)}, args)
	if err != nil {
		st.err = err
	}
	return st
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
	args := t.cellArgs()
	args["sample"] = Arg{Value: sample, Note: "oldest rows whose shards are checked"}
	args["limit"] = Arg{Value: limitOrDefault(limit)}
	return sqlStatement("doctor-unclaimed-shards", []string{
		"Due shards among the shards of the oldest rows of " + t.Describe() + ", longest unclaimed first.",
		"last_claim = the head row's scheduled_from: when Sentry last claimed the shard (or wrote the",
		"row, if it never did). Due and unclaimed for minutes: Sentry's drain tasks are not running or",
		"not reaching this database. Claimed seconds ago: probably draining right now.",
	}, t.idents(), args, t.controlAndCell()...)
}

// DoctorCappedRow is one row of DoctorCappedShards (plus the cell column in the control silo).
type DoctorCappedRow struct {
	ShardScope      int64 `db:"shard_scope"`
	ShardIdentifier int64 `db:"shard_identifier"`
	// Depth is counted up to StuckDepthCap: DepthAtLeast says it reached it.
	Depth            int64     `db:"depth"`
	DepthAtLeast     bool      `db:"depth_at_least"`
	NextAttempt      time.Time `db:"next_attempt"`
	HeadID           int64     `db:"head_id"`
	HeadCategory     int64     `db:"head_category"`
	HeadObject       int64     `db:"head_object"`
	LastAttempt      time.Time `db:"last_attempt"`
	HeadAdded        time.Time `db:"head_added"`
	LastDelaySeconds float64   `db:"last_delay_seconds"`
	CappedShards     int64     `db:"capped_shards"`
	HeadLocked       bool      `db:"head_locked"`
	GroupRows        int64     `db:"group_rows"`
	GroupNewestID    int64     `db:"group_newest_id"`
	GroupNewestAdded time.Time `db:"group_newest_added"`
}

// Group is the row's head coalesce group.
func (r DoctorCappedRow) Group() HeadGroup {
	return HeadGroup{GroupRows: r.GroupRows, GroupNewestID: r.GroupNewestID, GroupNewestAdded: r.GroupNewestAdded}
}

// HeadGroup is a shard's head coalesce group: its rows counted up to HotGroupRows (a count
// of the cap means at least) and its newest row, the one Sentry delivers for the group.
type HeadGroup struct {
	GroupRows        int64
	GroupNewestID    int64
	GroupNewestAdded time.Time
}

// HotGroupRows is the size from which a head coalesce group is a hot shard's: Sentry
// delivers the group once and then deletes its older rows 50 at a time inside the same
// transaction, each SELECT passing over the rows the transaction already deleted, so the
// work grows with the square of the group, and whether it finishes within the drain task's
// 90 s deadline depends on the server (dead tuples, a held horizon), not on a row count
// outboxctl could know (reference §3.1, §3.7, §10.5 #3). A failed attempt on a group this
// large is therefore never taken for a failed delivery: compact comes first, and it
// removes only older rows Sentry would never deliver (every group's newest stays), so the
// threshold errs low; a head that fails again once its group is one row is then poison.
const HotGroupRows = 1000

// MadeDueRow is one row of DoctorMadeDueHeads (plus the cell column in the control silo).
type MadeDueRow struct {
	ShardScope       int64     `db:"shard_scope"`
	ShardIdentifier  int64     `db:"shard_identifier"`
	HeadID           int64     `db:"head_id"`
	HeadCategory     int64     `db:"head_category"`
	HeadObject       int64     `db:"head_object"`
	LastAttempt      time.Time `db:"last_attempt"`
	NextAttempt      time.Time `db:"next_attempt"`
	HeadAdded        time.Time `db:"head_added"`
	LastDelaySeconds float64   `db:"last_delay_seconds"`
	HeadLocked       bool      `db:"head_locked"`
	Depth            int64     `db:"depth"`
	GroupRows        int64     `db:"group_rows"`
	GroupNewestID    int64     `db:"group_newest_id"`
	GroupNewestAdded time.Time `db:"group_newest_added"`
}

// Group is the row's head coalesce group.
func (r MadeDueRow) Group() HeadGroup {
	return HeadGroup{GroupRows: r.GroupRows, GroupNewestID: r.GroupNewestID, GroupNewestAdded: r.GroupNewestAdded}
}

// MadeDueHeads reads, now, the head of each shard outboxctl's ledger says it made
// due (cells parallel to scopes and ids in the control silo, nil in a cell).
func MadeDueHeads(t Target, cells []string, scopes []int64, ids []int64) Statement {
	args := Args{"scopes": Arg{Value: scopes}, "ids": Arg{Value: ids, Note: "the shards outboxctl made due (its ledger)"},
		"group_cap": Arg{Value: HotGroupRows, Note: "count a head group up to this many rows"},
		"depth_cap": Arg{Value: StuckDepthCap, Note: "count at most this many rows of a shard"}}
	on := []string{}
	if t.Control() {
		args["cells"] = Arg{Value: cells}
		on = append(on, "control")
	}
	return withHeadGroup(t, regionStatement("made-due-heads", []string{
		"The shards of " + t.Describe() + " outboxctl made due, read at their head now: a shard that is",
		"not returned holds no rows any more (delivered); one whose head was attempted since it was made",
		"due (last_attempt) and is still there failed again.",
	}, t.idents(), headGroupRegion(t), args, on...))
}

// headGroupRegion is the head-group part (sql/doctor.sql) that doctor-capped-shards and
// made-due-heads read each returned shard's head group with.
func headGroupRegion(t Target) map[string]sqltemplate.Part {
	p, _ := part("head-group", t.idents(), nil, t.controlFragments()...)
	return map[string]sqltemplate.Part{"head_group": p}
}

// withHeadGroup keeps, in st, an error filling the head-group part (headGroupRegion
// leaves the region empty then, and a statement without it must never run).
func withHeadGroup(t Target, st Statement) Statement {
	if _, err := Fill("head-group", t.idents(), t.controlFragments()...); err != nil && st.err == nil {
		st.err = err
	}
	return st
}

// DatabaseIdentity names the database (its cluster's system identifier and its name) and
// reads the server's clock: the ledger's times are the database's, as Sentry's schedules are.
func DatabaseIdentity() Statement {
	return sqlStatement("database-identity", []string{"Which database this is (the ledger of shards outboxctl made due is kept per database), and its clock."}, nil, nil)
}

// IdentityRow is DatabaseIdentity's row.
type IdentityRow struct {
	Identity string    `db:"identity"`
	Now      time.Time `db:"now"`
}

// RowsPresent lists which of ids are still rows of t.
func RowsPresent(t Target, ids []int64) Statement {
	return sqlStatement("rows-present", []string{"Which of the listed rows of " + t.Describe() + " are still there."},
		t.tableIdent(), Args{"ids": Arg{Value: ids, Note: "coalesce groups' newest rows when outboxctl made their shards due"}})
}

// PresentRow is a row of RowsPresent.
type PresentRow struct {
	ID int64 `db:"id"`
}

// DoctorCappedShards finds shards in backoff whose head row's delay reached the 1 h cap
// (poison suspects): the first limit in key order, as the selectors --stuck --at-cap take
// them, listed oldest head first. A walk of the (…, scheduled_for) index steps from one
// shard with a future row to the next (one probe per shard however deep it is), each
// confirmed in backoff by one probe and its head row read once through the (…, id) index,
// and stops at the limit-th shard at the cap: the work is bounded by the shards returned,
// not by the shards in backoff (#40: 13,000 on a bad day). Only the shards returned are
// counted for their depth, each up to StuckDepthCap rows (the hot shard of an incident
// holds millions: counting them was most of doctor's time at 20M rows, #27).
func DoctorCappedShards(t Target, limit int) Statement {
	args := t.cellArgs()
	args["cap"] = Arg{Value: BackoffCapSeconds, Note: "seconds: Sentry's backoff cap"}
	args["limit"] = Arg{Value: limitOrDefault(limit)}
	args["depth_cap"] = Arg{Value: StuckDepthCap, Note: "count at most this many rows of a shard"}
	args["group_cap"] = Arg{Value: HotGroupRows, Note: "count a head group up to this many rows: a hot shard's"}
	return withHeadGroup(t, regionStatement("doctor-capped-shards", []string{
		"Shards of " + t.Describe() + " in backoff at Sentry's 1 h cap: the first " + fmt.Sprint(limitOrDefault(limit)) + " in key order (as",
		"--stuck --at-cap selects them), oldest head message first. The head row (lowest id) has failed",
		"about a dozen times in a row and blocks the whole shard.",
	}, t.idents(), headGroupRegion(t), args, t.controlAndCell()...))
}

// StuckDepthCap bounds the depth count of a shard at the backoff cap: a count of the cap
// means "at least" (DoctorCappedRow.DepthAtLeast); inspect shard counts it exactly.
const StuckDepthCap = 10000

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
	args := t.cellArgs()
	args["scope"] = Arg{Value: scope.Value, Note: scope.Name}
	args["ids"] = Arg{Value: ids}
	args["depth_cap"] = Arg{Value: DisabledDepthCap, Note: "count at most this many rows"}
	return sqlStatement("doctor-disabled-shards", []string{
		fmt.Sprintf("Kill-switched %s shards of %s that still hold rows.", scope.Name, t.Describe()),
		"depth is counted up to 10000 (10000 means at least). trimming_stalled = the head row is the newest",
		"of its coalesce group: Sentry's visits delete nothing more, and every row behind it waits until the",
		"shard is re-enabled.",
	}, t.idents(), args, t.controlAndCell()...)
}
