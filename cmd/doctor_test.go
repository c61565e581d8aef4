package cmd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

type finding struct {
	Check    string         `json:"check"`
	Severity string         `json:"severity"`
	Summary  string         `json:"summary"`
	Evidence map[string]any `json:"evidence"`
	Next     []string       `json:"next"`
}

// doctor runs `outboxctl --dsn … --schema S doctor ARGS -o json` and decodes the findings.
func doctor(t *testing.T, dsn, schema string, args ...string) (int, []finding, string) {
	t.Helper()
	io, out, errOut := render.Test()
	base := []string{"--dsn", dsn, "--schema", schema, "doctor", "-o", "json"}
	code := cmd.Main(context.Background(), append(base, args...), io)
	var fs []finding
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &fs); err != nil {
			t.Fatalf("decoding %q: %v", out.String(), err)
		}
	}
	return code, fs, errOut.String()
}

// only returns the findings of one check whose evidence key holds want.
func only(fs []finding, check, key string, want any) []finding {
	var out []finding
	for _, f := range fs {
		if f.Check == check && fmt.Sprint(f.Evidence[key]) == fmt.Sprint(want) {
			out = append(out, f)
		}
	}
	return out
}

func execSQL(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// conn opens a connection of its own (a session the test controls), closed at the end.
func conn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		testdb.Unreachable(t, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func randomName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// noCrit raises the critical thresholds of the server-wide xmin check out of reach, so the
// exit status of a test that builds one warning is exact whatever else the server runs.
var noCrit = []string{"--xmin-crit", "10000h", "--xmin-crit-xids", "2000000000", "--limit", "200"} //nolint:gochecknoglobals // test flags

// The checks whose findings depend only on the test's own schema. vacuum is left out of the
// healthy run because CI's server has autovacuum off (a real finding), xmin because other
// tests' transactions are server-wide.
const schemaScoped = "scheduler,stuck,killswitch,backfill,locks,schema,replica"

func TestDoctorHealthyOutboxExitsZero(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		// Claimed two seconds ago, then a new row made it due: probably draining now.
		testdb.Row{Scope: 0, Shard: 2, Category: 2, Object: 2, ScheduledFrom: now.Add(-2 * time.Second), ScheduledFor: now.Add(2 * time.Second), DateAdded: now.Add(-time.Minute)},
		testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: 5})
	testdb.Insert(t, schema, "sentry_controloutbox", testdb.Row{Cell: "us", Scope: 1, Shard: 3, Category: 0, Object: 3})
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", schemaScoped)
	if code != 0 {
		t.Fatalf("exit %d, want 0: %s %+v", code, errOut, fs)
	}
	for _, f := range fs {
		if f.Severity != "ok" {
			t.Fatalf("finding %+v, want every finding ok", f)
		}
	}
	sched := only(fs, "scheduler", "table", "sentry_regionoutbox")
	if len(sched) != 1 || sched[0].Evidence["in_flight"] != float64(1) || sched[0].Evidence["waiting_under_threshold"] != float64(1) {
		t.Fatalf("scheduler finding = %+v, want 1 in flight and 1 waiting", sched)
	}
	if len(only(fs, "schema", "table", "sentry_controloutbox")) != 1 || len(only(fs, "scheduler", "table", "sentry_controloutbox")) != 1 {
		t.Fatalf("a monolith has both tables checked: %+v", fs)
	}
}

func TestDoctorSchedulerNamesUnclaimedShard(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	twoHours := time.Now().Add(-2 * time.Hour)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 42, Category: 2, Object: 42, ScheduledFrom: twoHours, ScheduledFor: twoHours.Add(4 * time.Second), DateAdded: twoHours.Add(-time.Minute)})
	testdb.Insert(t, schema, "sentry_controloutbox",
		testdb.Row{Cell: "us", Scope: 1, Shard: 7, Category: 0, Object: 7, ScheduledFrom: time.Now().Add(-10 * time.Minute), DateAdded: time.Now().Add(-10 * time.Minute)})
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "scheduler")
	if code != cmd.ExitCritical {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitCritical, errOut, fs)
	}
	crit := only(fs, "scheduler", "shard_identifier", 42)
	if len(crit) != 1 || crit[0].Severity != "crit" || crit[0].Evidence["never_claimed"] != false ||
		!strings.Contains(crit[0].Summary, "ORGANIZATION_SCOPE/42 is due but its head was last claimed 2h0m") {
		t.Fatalf("finding = %+v", crit)
	}
	if crit[0].Next[0] != "outboxctl --schema "+schema+" inspect shard organization 42" {
		t.Fatalf("next = %q", crit[0].Next[0])
	}
	warn := only(fs, "scheduler", "table", "sentry_controloutbox")
	if len(warn) != 1 || warn[0].Severity != "warn" || warn[0].Evidence["never_claimed"] != true ||
		warn[0].Next[0] != "outboxctl --schema "+schema+" --silo control --cell us inspect shard user 7" {
		t.Fatalf("control finding = %+v", warn)
	}
	if errOut != "Error: doctor: 1 critical, 1 warning(s), 0 ok\n" {
		t.Fatalf("stderr = %q", errOut)
	}
}

func TestDoctorQueueFindings(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	claimed := now.Add(-10 * time.Minute)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		// ORG/7 at the 1 h cap, its head written three hours ago.
		testdb.Row{Scope: 0, Shard: 7, Category: 24, Object: 70, ScheduledFrom: claimed, ScheduledFor: claimed.Add(time.Hour), DateAdded: now.Add(-3 * time.Hour)},
		testdb.Row{Scope: 0, Shard: 7, Category: 2, Object: 7, ScheduledFrom: claimed, ScheduledFor: claimed.Add(time.Hour)},
		// ORG/9 kill-switched (and so backing off to the cap too: not a poison suspect) with two
		// groups: its head is alone in its group, so trimming has stalled.
		testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)},
		testdb.Row{Scope: 0, Shard: 9, Category: 3, Object: 90, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)})
	execSQL(t, "INSERT INTO "+schema+`.sentry_option (key, value, last_updated) VALUES
		('hybrid_cloud.authentication.disabled_organization_shards', '[9]', now()),
		('outbox_replication.sentry_organization.replication_version', '1', now()),
		('outbox_replication.sentry_apikey.replication_version', '0', now())`)
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "stuck,killswitch,backfill")
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	stuck := only(fs, "stuck", "shard_identifier", 7)
	if len(stuck) != 1 || stuck[0].Severity != "warn" || stuck[0].Evidence["head_category"] != "AUTH_PROVIDER_UPDATE" ||
		stuck[0].Evidence["attempts_estimate"] != float64(12) || stuck[0].Evidence["depth"] != float64(2) ||
		stuck[0].Evidence["cause"] != "outage_or_poison" ||
		!strings.Contains(stuck[0].Summary, "sentry_regionoutbox: 1 shard(s) at the 1 h backoff cap, heads of AUTH_PROVIDER_UPDATE, blocking 2 row(s)") ||
		stuck[0].Next[0] != "outboxctl --schema "+schema+" reschedule --stuck --at-cap --not-killswitched --reason 'fresh attempt: 1 shards at the 1 h cap (outage_or_poison)'" {
		t.Fatalf("stuck = %+v", stuck)
	}
	ks := only(fs, "killswitch", "shard_identifier", 9)
	if len(ks) != 1 || ks[0].Evidence["depth"] != float64(2) || ks[0].Evidence["trimming_stalled"] != true ||
		!strings.Contains(ks[0].Summary, "trimming has stalled") {
		t.Fatalf("killswitch = %+v", ks)
	}
	bf := only(fs, "backfill", "table", "sentry_organization")
	if len(bf) != 1 || bf[0].Severity != "warn" || bf[0].Evidence["option"] != float64(1) || bf[0].Evidence["coded"] != float64(4) ||
		!strings.Contains(bf[0].Summary, "is held at version 1 by option") {
		t.Fatalf("backfill = %+v", bf)
	}
	gated := only(fs, "backfill", "table", "sentry_apikey")
	if len(gated) != 1 || gated[0].Evidence["state"] != "gated by option" || !strings.Contains(gated[0].Summary, "is gated: option") {
		t.Fatalf("gated backfill = %+v", gated)
	}
	byDefault := only(fs, "backfill", "gated_by_default", float64(len(backfill.Registered(nil))-2))
	if len(byDefault) != 1 || byDefault[0].Severity != "ok" || slices.Contains(strings.Split(byDefault[0].Evidence["tables"].(string), ","), "sentry_organization") {
		t.Fatalf("backfills gated by an unset option = %+v", byDefault)
	}
	// The four above plus ok findings for the control table's stuck and kill-switch checks.
	if len(fs) != 7 {
		t.Fatalf("findings = %+v", fs)
	}
}

func TestDoctorVacuumNamesDisabledAutovacuum(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	execSQL(t, "ALTER TABLE "+schema+".sentry_regionoutbox SET (autovacuum_enabled = false, autovacuum_vacuum_threshold = 10)")
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "vacuum")
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	v := only(fs, "vacuum", "table", "sentry_regionoutbox")
	if len(v) != 1 || v[0].Severity != "warn" || v[0].Evidence["autovacuum_table"] != false || v[0].Evidence["autovacuum_trigger"] != float64(10) ||
		!strings.Contains(v[0].Summary, "autovacuum is disabled on the table") ||
		v[0].Next[0] != "ALTER TABLE "+schema+".sentry_regionoutbox RESET (autovacuum_enabled);" {
		t.Fatalf("vacuum = %+v", v)
	}
	if c := only(fs, "vacuum", "table", "sentry_controloutbox"); len(c) != 1 || c[0].Evidence["autovacuum_table"] != true {
		t.Fatalf("control table = %+v", c)
	}
}

// idleInTransaction opens a session that takes a transaction id and then idles.
func idleInTransaction(t *testing.T) uint32 {
	t.Helper()
	c := conn(t, testdb.DSN())
	ctx := context.Background()
	if _, err := c.Exec(ctx, "BEGIN; SELECT txid_current()"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "ROLLBACK") })
	time.Sleep(1100 * time.Millisecond)
	return c.PgConn().PID()
}

func TestDoctorNamesIdleInTransactionSession(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	pid := idleInTransaction(t)
	code, fs, errOut := doctor(t, testdb.DSN(), schema, append([]string{"--check", "xmin", "--xmin-warn", "1s"}, noCrit...)...)
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	mine := only(fs, "xmin", "pid", pid)
	if len(mine) != 1 || mine[0].Severity != "warn" || mine[0].Evidence["state"] != "idle in transaction" ||
		!strings.Contains(mine[0].Summary, fmt.Sprintf("pid %d (application '', user postgres) is idle in transaction", pid)) ||
		mine[0].Next[0] != fmt.Sprintf("SELECT pg_terminate_backend(%d);  -- rolls its transaction back: ask its owner first", pid) {
		t.Fatalf("finding for pid %d = %+v", pid, mine)
	}
}

// requirePreparedTransactions fails under CI (where .ci/run enables them) and skips
// elsewhere when max_prepared_transactions is 0.
func requirePreparedTransactions(t *testing.T) {
	t.Helper()
	var n int
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT current_setting('max_prepared_transactions')::int").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		return
	}
	msg := "max_prepared_transactions is 0: run ALTER SYSTEM SET max_prepared_transactions = 10 and restart PostgreSQL (.ci/run does)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func TestDoctorNamesPreparedTransaction(t *testing.T) {
	t.Parallel()
	requirePreparedTransactions(t)
	schema := testdb.Schema(t, fixture.Options{})
	gid := randomName("outboxctl_test_")
	c := conn(t, testdb.DSN())
	ctx := context.Background()
	if _, err := c.Exec(ctx, "BEGIN; SELECT txid_current(); PREPARE TRANSACTION '"+gid+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { execSQL(t, "ROLLBACK PREPARED '"+gid+"'") })
	time.Sleep(1100 * time.Millisecond)
	code, fs, errOut := doctor(t, testdb.DSN(), schema, append([]string{"--check", "xmin", "--xmin-warn", "1s"}, noCrit...)...)
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	mine := only(fs, "xmin", "gid", gid)
	if len(mine) != 1 || mine[0].Severity != "warn" || mine[0].Evidence["database"] != "test" ||
		!strings.HasPrefix(mine[0].Summary, "prepared transaction '"+gid+"' (owner postgres, database test) was prepared ") ||
		!strings.Contains(mine[0].Summary, " ago and holds the xmin horizon ") ||
		mine[0].Next[0] != "ROLLBACK PREPARED '"+gid+"';  -- in database test, once its transaction manager has given up on it" {
		t.Fatalf("finding for %s = %+v", gid, mine)
	}
}

// TestDoctorNamesReplicationSlot builds the slot this server allows: wal_level is replica,
// so a logical slot (catalog_xmin) is impossible, and a physical slot holds an xmin only
// while a standby with hot_standby_feedback is attached. A physical slot created with
// immediately_reserve keeps WAL from its restart_lsn, which doctor reports.
func TestDoctorNamesReplicationSlot(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	slot := randomName("outboxctl_test_")
	execSQL(t, "SELECT pg_create_physical_replication_slot($1, true)", slot)
	t.Cleanup(func() { execSQL(t, "SELECT pg_drop_replication_slot($1)", slot) })
	code, fs, errOut := doctor(t, testdb.DSN(), schema, append([]string{"--check", "xmin"}, noCrit...)...)
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	mine := only(fs, "xmin", "slot_name", slot)
	if len(mine) != 1 || mine[0].Severity != "warn" || mine[0].Evidence["active"] != false || mine[0].Evidence["xmin"] != nil ||
		!strings.Contains(mine[0].Summary, "replication slot '"+slot+"' (physical, inactive) holds no xmin; is inactive and keeps") ||
		mine[0].Next[0] != "SELECT pg_drop_replication_slot('"+slot+"');  -- only if no standby or consumer will use it again" {
		t.Fatalf("finding for slot %s = %+v", slot, mine)
	}
}

func TestDoctorNamesBlockedSessionAndShard(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 42, Category: 2, Object: 42}, testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 1})
	ctx := context.Background()
	claim := "SELECT id FROM " + schema + ".sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 42 ORDER BY id LIMIT 1 FOR UPDATE"
	holder, waiter := conn(t, testdb.DSN()), conn(t, testdb.DSN())
	if _, err := holder.Exec(ctx, "BEGIN; "+claim); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := waiter.Exec(ctx, "BEGIN; "+claim+"; ROLLBACK"); done <- err }()
	waitForLockWait(t, waiter.PgConn().PID())
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "locks")
	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	mine := only(fs, "locks", "pid", waiter.PgConn().PID())
	want := fmt.Sprintf("pid %d waits for the row lock of row %d, shard ORGANIZATION_SCOPE/42 of sentry_regionoutbox, held by pid(s) [%d]",
		waiter.PgConn().PID(), ids[0], holder.PgConn().PID())
	if len(mine) != 1 || mine[0].Summary != want || mine[0].Evidence["shard_identifier"] != float64(42) ||
		fmt.Sprint(mine[0].Evidence["blocked_by"]) != fmt.Sprintf("[%d]", holder.PgConn().PID()) {
		t.Fatalf("finding = %+v, want summary %q", mine, want)
	}
}

func waitForLockWait(t *testing.T, pid uint32) {
	t.Helper()
	for range 100 {
		var waiting bool
		err := testdb.Pool(t).QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)", int32(pid)).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pid %d never waited for the lock", pid)
}

// TestDoctorWithoutStatsPrivilege runs doctor as a role that is neither a superuser nor a
// member of pg_read_all_stats: every check runs, and the xmin finding for another role's
// idle-in-transaction session names its pid and says what it could not see.
func TestDoctorWithoutStatsPrivilege(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	role := randomName("outboxctl_test_role_")
	execSQL(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { execSQL(t, "DROP OWNED BY "+role); execSQL(t, "DROP ROLE "+role) })
	execSQL(t, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	execSQL(t, "GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
	pid := idleInTransaction(t)
	dsn := strings.Replace(testdb.DSN(), "postgres@", role+"@", 1)
	all := "scheduler,stuck,killswitch,backfill,vacuum,xmin,locks,replica,schema"
	code, fs, errOut := doctor(t, dsn, schema, append([]string{"--check", all, "--xmin-warn-xids", "1"}, noCrit...)...)
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	for _, f := range fs {
		if strings.HasPrefix(f.Summary, "check could not run") {
			t.Fatalf("a check failed for the unprivileged role: %+v", f)
		}
	}
	mine := only(fs, "xmin", "pid", pid)
	if len(mine) != 1 || mine[0].Evidence["state"] != nil || mine[0].Evidence["xact_age_seconds"] != nil ||
		!strings.Contains(mine[0].Summary, "hidden from role "+role+" (not a member of pg_read_all_stats)") {
		t.Fatalf("finding for pid %d = %+v", pid, mine)
	}
}

func TestDoctorUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "--check", "scheduler,bogus"}, "Error: `--check`: unknown check \"bogus\": valid checks are backfill, era, killswitch, locks, mailboxes, replica, replicas, scheduler, schema, stuck, tombstones, vacuum, xmin\n"},
		{[]string{"doctor", "--xmin-warn", "2h", "--xmin-crit", "1h"}, "Error: `--xmin-warn` (2h0m0s) must not exceed `--xmin-crit` (1h0m0s)\n"},
		{[]string{"doctor", "--unclaimed", "-1s"}, `Error: invalid argument "-1s" for "--unclaimed" flag: a duration must not be negative: write one such as --unclaimed 10m` + "\n"},
	} {
		io, out, errOut := render.Test()
		if code := cmd.Main(context.Background(), tt.args, io); code != cmd.ExitUsage {
			t.Fatalf("%v: exit %d, want %d", tt.args, code, cmd.ExitUsage)
		}
		if first, _, _ := strings.Cut(errOut.String(), "Try:"); first != tt.want || out.Len() != 0 {
			t.Fatalf("%v: stderr %q, stdout %q", tt.args, errOut, out)
		}
	}
}

// TestDoctorBackfillStalledAndCompleteBelowCoded: a walk in progress that does not move over
// --sample, and a walk "complete" while the option holds the target below the coded version.
func TestDoctorBackfillStalledAndCompleteBelowCoded(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	execSQL(t, "INSERT INTO "+schema+`.sentry_option (key, value, last_updated) VALUES
		('outbox_replication.sentry_organization.replication_version', '4', now()),
		('outbox_replication.sentry_apikey.replication_version', '2', now())`)
	execSQL(t, "INSERT INTO "+schema+`.hybridcloud_celloutboxbackfillwatermark (date_updated, date_added, table_name, low_bound, version)
		VALUES (now(), now(), 'sentry_organization', 500, 4)`)
	execSQL(t, "INSERT INTO "+schema+`.hybridcloud_controloutboxbackfillwatermark (date_updated, date_added, table_name, low_bound, version)
		VALUES (now(), now(), 'sentry_apikey', 0, 4)`)
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "backfill", "--sample", "200ms")
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	stalled := only(fs, "backfill", "table", "sentry_organization")
	if len(stalled) != 1 || stalled[0].Evidence["low_bound"] != float64(500) ||
		!strings.Contains(stalled[0].Summary, "backfill of sentry_organization did not move in 200ms (low bound 500, version 4)") {
		t.Fatalf("stalled = %+v", stalled)
	}
	low := only(fs, "backfill", "table", "sentry_apikey")
	if len(low) != 1 || low[0].Evidence["state"] != "complete" ||
		!strings.Contains(low[0].Summary, "is 'complete' at target 2, below the coded version 3") {
		t.Fatalf("complete below coded = %+v", low)
	}
	if errOut != "sampling the backfill cursors again in 200ms…\nError: doctor: 0 critical, 2 warning(s), 1 ok\n" { // the ok: tables gated by an unset option
		t.Fatalf("stderr = %q", errOut)
	}
}

// TestDoctorStuckDepthCountedUpToTheCap: a shard at the cap deeper than query.StuckDepthCap
// is counted up to the cap and said so, in text and JSON ("at least", depth_at_least), with
// the command that counts it exactly as its last next step (which answers the exact depth);
// a shallower one is exact, and labelled exact.
func TestDoctorStuckDepthCountedUpToTheCap(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	deep := query.StuckDepthCap + 3
	// ORG/7 at the cap with deep rows, ORG/8 at the cap with 2.
	execSQL(t, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added)
		SELECT 0, s.shard, 2, g %% 50, now() - interval '10 minutes', now() + interval '50 minutes', now() - interval '3 hours'
		  FROM (VALUES (7, %d), (8, 2)) AS s(shard, n), generate_series(1, s.n) AS g`, schema, deep))
	code, fs, errOut := doctor(t, testdb.DSN(), schema, "--check", "stuck")
	if code != cmd.ExitWarn {
		t.Fatalf("exit %d, want %d: %s %+v", code, cmd.ExitWarn, errOut, fs)
	}
	// One finding for both (one cause), its rows counted up to the cap for ORG/7.
	both := only(fs, "stuck", "grouped_shards", float64(2))
	if len(both) != 1 || both[0].Evidence["rows"] != float64(query.StuckDepthCap+2) || both[0].Evidence["rows_at_least"] != true ||
		!strings.Contains(both[0].Summary, fmt.Sprintf("blocking at least %d (a shard's rows counted up to %d; inspect shard counts them all) row(s)", query.StuckDepthCap+2, query.StuckDepthCap)) {
		t.Fatalf("ORG/7 and ORG/8 = %+v", both)
	}
	exact := both[0].Next[len(both[0].Next)-1]
	if want := "outboxctl --schema " + schema + " inspect shard organization 7"; exact != want {
		t.Fatalf("the last next = %q, want %q (all: %q)", exact, want, both[0].Next)
	}
	// The exact count the next step gives.
	out, _ := mustRun(t, 0, schema, "inspect", "shard", "organization", "7", "-o", "json")
	if !strings.Contains(out, fmt.Sprintf(`"depth": %d,`, deep)) {
		t.Fatalf("inspect shard organization 7 does not say depth %d:\n%s", deep, out)
	}
	// In the text a pipe gets too.
	text, _ := mustRun(t, cmd.ExitWarn, schema, "doctor", "--check", "stuck")
	if !strings.Contains(text, fmt.Sprintf("at least %d", query.StuckDepthCap+2)) || !strings.Contains(text, "rows_at_least=true") {
		t.Fatalf("text output does not label the bound:\n%s", text)
	}
}
