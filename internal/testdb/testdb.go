// Package testdb gives tests an isolated schema with Sentry's tables on the real PostgreSQL
// server. It is for tests only.
//
// The server comes from OUTBOXCTL_TEST_DSN, which make test sets once for the whole run
// (internal/pgtmp/testrun). Without it (go test alone), internal/pgtmp's order picks one for
// this package's process: the local server at 127.0.0.1:5432 when it answers (and
// OUTBOXCTL_THROWAWAY is not 1), else a throwaway cluster from the server binaries on the
// machine, removed when the process ends. When none can be reached, tests skip locally but
// fail under CI=true: a green CI run in which every database test skipped would prove nothing.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/pgtmp"
	"github.com/outboxctl/outboxctl/internal/query/session"
)

// DefaultDSN is the local server this machine and CI run.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	dsnOnce sync.Once
	dsn     string
)

// DSN returns the test server's connection string (see the package comment).
func DSN() string {
	dsnOnce.Do(func() { dsn = resolveDSN() })
	return dsn
}

func resolveDSN() string {
	if v := os.Getenv("OUTBOXCTL_TEST_DSN"); v != "" {
		return v
	}
	r := pgtmp.Resolve(pgtmp.MachineEnv(), "")
	if r.Source != pgtmp.FromThrowaway {
		return DefaultDSN // the local server, or none (the tests skip with the reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgtmp.Start(ctx, pgtmp.Options{BinDir: r.BinDir, RunAs: r.RunAs})
	if err != nil {
		fmt.Fprintf(os.Stderr, "testdb: %v\n", err)
		return DefaultDSN
	}
	// Subprocesses (the scripts, a re-executed test binary) use the same one. Its watchdog
	// removes it when this process ends.
	_ = os.Setenv("OUTBOXCTL_TEST_DSN", c.DSN)
	return c.DSN
}

var (
	redisOnce sync.Once
	redisAddr string
)

// RedisAddr returns the test Redis's address: OUTBOXCTL_TEST_REDIS_ADDR (make test sets it),
// else 127.0.0.1:6379 when it answers (and OUTBOXCTL_THROWAWAY is not 1), else a throwaway
// redis-server for this process when one is installed.
func RedisAddr() string {
	redisOnce.Do(func() {
		redisAddr = pgtmp.LocalRedis
		r := pgtmp.ResolveRedis(pgtmp.MachineEnv(), os.Getenv("OUTBOXCTL_TEST_REDIS_ADDR"))
		switch r.Source {
		case pgtmp.FromUser, pgtmp.FromLocal:
			redisAddr = r.Addr
		case pgtmp.FromThrowaway:
			if rd, err := pgtmp.StartRedis(r.Binary); err == nil {
				redisAddr = rd.Addr
				_ = os.Setenv("OUTBOXCTL_TEST_REDIS_ADDR", rd.Addr)
			}
		}
	})
	return redisAddr
}

// Require skips the test when the test server cannot be reached (fails it under CI=true),
// for a test that reaches the server only through a subprocess or a proxy.
func Require(t testing.TB) {
	t.Helper()
	Pool(t)
}

var (
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
)

// Pool returns a pool shared by the tests of one package. Its size is capped so parallel
// tests of several packages stay well under max_connections.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	poolOnce.Do(func() {
		cfg, err := pgxpool.ParseConfig(DSN())
		if err != nil {
			poolErr = err
			return
		}
		cfg.MaxConns = 8
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p, err := pgxpool.NewWithConfig(ctx, cfg)
		if err == nil {
			err = p.Ping(ctx)
		}
		pool, poolErr = p, err
	})
	if poolErr != nil {
		Unreachable(t, poolErr)
	}
	return pool
}

// Unreachable skips the test, or fails it under CI=true.
func Unreachable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("PostgreSQL at OUTBOXCTL_TEST_DSN (%s) is unreachable: %v", db.Redact(DSN()), err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg + " (set CI=true to make this a failure; make test says what to install)")
}

// Schema creates a schema of its own for the test, with Sentry's tables, and drops it when
// the test ends.
func Schema(t testing.TB, o fixture.Options) string {
	t.Helper()
	p := Pool(t)
	name := NewSchemaName()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fixture.Create(ctx, p, name, o); err != nil {
		t.Fatalf("creating test schema: %v", err)
	}
	t.Cleanup(func() { Drop(t, name) })
	return name
}

// Drop removes a test schema.
func Drop(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Pool(t).Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("dropping test schema %s: %v", name, err)
	}
}

// NewSchemaName returns a fresh schema name for one test or script.
func NewSchemaName() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "outboxctl_test_" + hex.EncodeToString(b[:])
}

// Row is one outbox row to seed; zero times mean Sentry's defaults for a fresh row
// (scheduled_for = THE_PAST, scheduled_from = now()).
type Row struct {
	Cell          string
	Scope         int
	Shard         int64
	Category      int
	Object        int64
	Payload       *string
	ScheduledFrom time.Time
	ScheduledFor  time.Time
	DateAdded     time.Time
}

// Insert seeds outbox rows into schema.table and returns their ids, in order.
func Insert(t testing.TB, schema, table string, rows ...Row) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := Pool(t)
	control := strings.Contains(table, "control")
	ids := make([]int64, 0, len(rows))
	q := fmt.Sprintf(`INSERT INTO %s.%s (shard_scope, shard_identifier, category, object_identifier, payload,
		scheduled_from, scheduled_for, date_added%s)
		VALUES ($1, $2, $3, $4, $5, coalesce($6, now()), coalesce($7, %s::timestamptz), coalesce($8, now())%s) RETURNING id`,
		pgx.Identifier{schema}.Sanitize(), pgx.Identifier{table}.Sanitize(),
		map[bool]string{true: ", region_name"}[control], "'"+fixture.ThePast+"'",
		map[bool]string{true: ", $9"}[control])
	for _, r := range rows {
		args := []any{r.Scope, r.Shard, r.Category, r.Object, r.Payload, nullTime(r.ScheduledFrom), nullTime(r.ScheduledFor), nullTime(r.DateAdded)}
		if control {
			args = append(args, r.Cell)
		}
		var id int64
		if err := p.QueryRow(ctx, q, args...).Scan(&id); err != nil {
			t.Fatalf("seeding %s: %v", table, err)
		}
		ids = append(ids, id)
	}
	return ids
}

// SerializationFailures makes every UPDATE statement on schema.table fail as one that met a
// row changed since its REPEATABLE READ snapshot (SQLSTATE 40001), and returns how many have
// failed so far: a sequence counts them, which no rollback undoes.
func SerializationFailures(t testing.TB, schema, table string) (failed func() int64) {
	t.Helper()
	ctx := context.Background()
	s := pgx.Identifier{schema}.Sanitize()
	for _, sql := range []string{
		"CREATE SEQUENCE " + s + ".serialization_failures",
		"CREATE FUNCTION " + s + ".serialization_failure() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN " +
			"PERFORM nextval(" + session.Quote(s+".serialization_failures") + "); " +
			"RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END $$",
		"CREATE TRIGGER serialization_failure BEFORE UPDATE ON " + s + "." + pgx.Identifier{table}.Sanitize() +
			" FOR EACH STATEMENT EXECUTE FUNCTION " + s + ".serialization_failure()",
	} {
		if _, err := Pool(t).Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return func() int64 {
		t.Helper()
		var n int64
		var called bool
		if err := Pool(t).QueryRow(ctx, "SELECT last_value, is_called FROM "+s+".serialization_failures").Scan(&n, &called); err != nil {
			t.Fatal(err)
		}
		if !called {
			return 0
		}
		return n
	}
}

func nullTime(tm time.Time) any {
	if tm.IsZero() {
		return nil
	}
	return tm
}

// Str returns a pointer to s, for Row.Payload.
func Str(s string) *string { return &s }

// BenchSchema is the schema the benchmarks share: the demo incident at
// OUTBOXCTL_BENCH_ROWS rows (default 2,000,000), built once (about a minute; 20,000,000
// rows in about ten) and reused while its size matches; each call re-stamps its backoff
// schedule relative to now and vacuums it. A size other than the default has a schema of
// its own (outboxctl_bench_20000000), so a run at 20M never replaces the 2M set another
// run may be reading; drop it when done (DROP SCHEMA outboxctl_bench_20000000 CASCADE).
var BenchSchema = benchSchema() //nolint:gochecknoglobals // decided once, from the environment

func benchSchema() string {
	if BadDay() {
		if n := BenchRows(); n != 20_000_000 {
			return "outboxctl_badday_" + strconv.Itoa(n)
		}
		return "outboxctl_badday"
	}
	if n := BenchRows(); n != 2_000_000 {
		return "outboxctl_bench_" + strconv.Itoa(n)
	}
	return "outboxctl_bench"
}

var benchOnce sync.Once

// BadDay says the benchmarks run on the bad-day shape (OUTBOXCTL_BENCH_SHAPE=badday): 20M
// rows by default, the hot shard of a tenth of them at the 1 h cap, ~13,000 shards in
// backoff (fixture.DemoOptions.BadDay), in schema outboxctl_badday.
func BadDay() bool { return os.Getenv("OUTBOXCTL_BENCH_SHAPE") == "badday" }

// BenchRows is the size of the benchmark data set.
func BenchRows() int {
	if n, err := strconv.Atoi(os.Getenv("OUTBOXCTL_BENCH_ROWS")); err == nil && n >= 1000 {
		return n
	}
	if BadDay() {
		return 20_000_000
	}
	return 2_000_000
}

// BenchOptions is the benchmark data set's shape: rows over 110,000 organization shards (with
// the user shards, 100,000+ distinct shards), a hot shard of rows/10 rows in 600 coalesce
// groups, and 4,000 control rows.
func BenchOptions(rows int) fixture.DemoOptions {
	return fixture.DemoOptions{Schema: BenchSchema, Rows: rows, Shards: 110_000, HotGroups: 600, ControlRows: 4000, BadDay: BadDay()}
}

// benchShapeOK says the existing data set has the wanted size and shape (an older data set
// of the same size but another hot shard is rebuilt).
func benchShapeOK(ctx context.Context, conn *pgx.Conn, want int) bool {
	var n, groups, control int64
	err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s.sentry_regionoutbox),
       (SELECT count(DISTINCT object_identifier) FROM %[1]s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %[2]d),
       (SELECT count(*) FROM %[1]s.sentry_controloutbox)`, BenchSchema, fixture.DemoHotShard)).Scan(&n, &groups, &control)
	o := BenchOptions(want)
	return err == nil && n >= int64(want)-300 && n <= int64(want)+300 && groups == int64(o.HotGroups) && control == int64(o.ControlRows)
}

// vacuumBench vacuums the bench table until its dead rows are gone: on a shared server another
// session's snapshot can keep them, and then index-only scans of the re-stamped shards fall
// back to the heap and every index-aligned figure is off.
func vacuumBench(ctx context.Context, b testing.TB, conn *pgx.Conn) {
	for try := 0; ; try++ {
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+BenchSchema+".sentry_regionoutbox"); err != nil {
			b.Fatal(err)
		}
		var dead int64
		err := conn.QueryRow(ctx, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'sentry_regionoutbox'", BenchSchema).Scan(&dead)
		if err != nil {
			b.Fatal(err)
		}
		if dead < 1000 || try == 5 {
			b.Logf("bench table vacuumed (%d dead rows left after %d tries)", dead, try+1)
			return
		}
		time.Sleep(2 * time.Second)
	}
}

// EnsureBenchData builds or refreshes BenchSchema.
func EnsureBenchData(b testing.TB) {
	b.Helper()
	p := Pool(b)
	benchOnce.Do(func() {
		ctx := context.Background()
		conn, err := p.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
			b.Fatal(err)
		}
		want := BenchRows()
		if !benchShapeOK(ctx, conn.Conn(), want) {
			b.Logf("seeding %d rows into %s (once)", want, BenchSchema)
			// The hot shard written at the 1 h cap, as the re-stamp below would put it: at
			// 20M rows rewriting its 2,000,000 rows after the load takes minutes.
			o := BenchOptions(want)
			now := time.Now()
			from, to := now.Add(-20*time.Minute), now.Add(40*time.Minute)
			o.HotFrom, o.HotFor = &from, &to
			start := time.Now()
			if err := fixture.Seed(ctx, conn.Conn(), o); err != nil {
				b.Fatal(err)
			}
			b.Logf("seeded in %s", time.Since(start).Round(time.Second))
		} else if err := refreshBenchClock(ctx, conn.Conn()); err != nil {
			// Seed has just applied the clock; an older data set needs it again.
			b.Fatal(err)
		}
		// The hot shard waits at the 1 h backoff cap, as in the incident the issue measured;
		// re-stamped only when its next attempt comes near, since every re-stamp rewrites its
		// 200,000 rows and leaves them to VACUUM.
		if _, err := conn.Exec(ctx, fmt.Sprintf(`UPDATE %[1]s.sentry_regionoutbox
   SET scheduled_from = now() - interval '20 minutes', scheduled_for = now() + interval '40 minutes'
 WHERE shard_scope = 0 AND shard_identifier = %[2]d
   AND (SELECT min(scheduled_for) FROM %[1]s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %[2]d) < now() + interval '10 minutes'`,
			BenchSchema, fixture.DemoHotShard)); err != nil {
			b.Fatal(err)
		}
		vacuumBench(ctx, b, conn.Conn())
	})
}

// refreshBenchClock re-applies the data set's schedule relative to now. The bad-day shape's
// ~2M rows in backoff are re-stamped only when their earliest next attempt comes within 15
// minutes (every re-stamp rewrites them into four 20M-row indexes and leaves them to VACUUM):
// its schedule keeps every next attempt at least 24 minutes away when stamped.
func refreshBenchClock(ctx context.Context, conn *pgx.Conn) error {
	if !BadDay() {
		return fixture.RefreshDemoClock(ctx, conn, BenchSchema)
	}
	var soon bool
	err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(min(scheduled_for) < now() + interval '15 minutes', true)
  FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier BETWEEN 5 AND 1000 AND shard_identifier %% 8 = 3`, BenchSchema)).Scan(&soon)
	if err != nil || !soon {
		return err
	}
	return fixture.RefreshBadDayClock(ctx, conn, BenchSchema)
}

// CommandConn is a connection opened as a command opens it (db.Connect: the per-transaction
// SET LOCAL settings, jit = off among them), for benchmarks that time outboxctl's statements
// as its commands run them, inside db.ReadTx; it is closed when the test ends.
func CommandConn(t testing.TB) *db.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Connect(ctx, db.Config{DSN: DSN(), Command: "bench", StatementTimeout: 5 * time.Minute})
	if err != nil {
		Unreachable(t, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
