package db_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

func connect(t *testing.T, cfg db.Config) *db.Conn {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = testdb.DSN()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Connect(ctx, cfg)
	if err != nil {
		testdb.Unreachable(t, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func TestReadTxCannotWrite(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	conn := connect(t, db.Config{Command: "test"})
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
			(shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for)
			VALUES (0, 1, 2, 1, now(), now())`, pgx.Identifier{schema}.Sanitize()))
		return db.Classify(err, "attempted write")
	})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.Kind != db.KindReadOnly || dbErr.SQLState != "25006" {
		t.Fatalf("a write inside a read transaction gave %v, want a read-only refusal (25006)", err)
	}
	var n int64
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after the refused write: %d, %v", n, err)
	}
}

func TestSessionSettings(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{Command: "shards", StatementTimeout: 7 * time.Second, LockTimeout: 1500 * time.Millisecond})
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		var app, st, lt, idle, ro, jit string
		err := tx.QueryRow(context.Background(), `SELECT current_setting('application_name'), current_setting('statement_timeout'),
			current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout'), current_setting('transaction_read_only'),
			current_setting('jit')`).
			Scan(&app, &st, &lt, &idle, &ro, &jit)
		if err != nil {
			return err
		}
		if app != "outboxctl/shards" || st != "7s" || lt != "1500ms" || idle != "17s" || ro != "on" || jit != "off" {
			return fmt.Errorf("settings: application_name=%s statement_timeout=%s lock_timeout=%s idle=%s read_only=%s jit=%s", app, st, lt, idle, ro, jit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{StatementTimeout: 100 * time.Millisecond})
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), "SELECT pg_sleep(2)")
		return db.Classify(err, "stuck-shards")
	})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.Kind != db.KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if !strings.HasPrefix(err.Error(), "statement timed out in stuck-shards (SQLSTATE 57014); raise --statement-timeout") {
		t.Fatalf("message %q", err)
	}
}

func TestUnreachableAndPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Pa55"
	for _, dsn := range []string{
		"postgres://sentry:" + secret + "@127.0.0.1:1/sentry?connect_timeout=2",
		"host=127.0.0.1 port=1 user=sentry password=" + secret + " dbname=sentry connect_timeout=2",
		"postgres://sentry:" + secret + "@127.0.0.1:1/sentry?sslmode=bogus",
	} {
		_, err := db.Connect(context.Background(), db.Config{DSN: dsn})
		if err == nil {
			t.Fatalf("connected to port 1?")
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the password leaked: %v", err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	}
	_, err := db.Connect(context.Background(), db.Config{DSN: "postgres://sentry:" + secret + "@127.0.0.1:1/sentry"})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.Kind != db.KindUnreachable || !strings.HasPrefix(err.Error(), "cannot reach PostgreSQL at 127.0.0.1:1") {
		t.Fatalf("err = %v", err)
	}
	if got := db.RedactDSN("dsn postgres://u:" + secret + "@h/db and redis://:" + secret + "@r:6379/0 password=" + secret + " x"); strings.Contains(got, secret) {
		t.Fatalf("RedactDSN left the secret: %s", got)
	}
}

// TestReadsDoNotBlockWriters runs every diagnostic statement in a read session, keeps the
// transaction open, and checks that a concurrent writer inserts and updates the outbox
// without waiting, and that the reader holds nothing stronger than AccessShareLock.
func TestReadsDoNotBlockWriters(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	tbl := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
	conn := connect(t, db.Config{Command: "test"})
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	k := query.ShardKey{Scope: query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, ID: 1}
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		for _, st := range []query.Statement{
			query.StuckShards(target, query.ShardFilter{}), query.TopShards(target, query.ShardFilter{}),
			query.ShardState(target, k), query.ShardCategories(target, k), query.ShardMessages(target, k, 50, false),
			query.ShardMessagesAll(target, k), query.Depth(target), query.Message(target, 1),
		} {
			if _, err := query.Run(context.Background(), tx, st); err != nil {
				return err
			}
		}
		writer, err := testdb.Pool(t).Acquire(context.Background())
		if err != nil {
			return err
		}
		defer writer.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := writer.Exec(ctx, "SET lock_timeout = '500ms'"); err != nil {
			return err
		}
		if _, err := writer.Exec(ctx, "INSERT INTO "+tbl+" (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for) VALUES (0, 1, 2, 1, now(), now())"); err != nil {
			return fmt.Errorf("a concurrent INSERT was blocked: %w", err)
		}
		if _, err := writer.Exec(ctx, "UPDATE "+tbl+" SET scheduled_for = now() + interval '2 seconds' WHERE shard_scope = 0 AND shard_identifier = 1"); err != nil {
			return fmt.Errorf("a concurrent UPDATE (Sentry's claim) was blocked: %w", err)
		}
		_, _ = writer.Exec(ctx, "RESET lock_timeout")
		var strong int
		if err := tx.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation' AND mode <> 'AccessShareLock'`).Scan(&strong); err != nil {
			return err
		}
		if strong != 0 {
			return fmt.Errorf("the reader holds %d relation locks stronger than AccessShareLock", strong)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestThroughPgBouncer runs the read path through a real PgBouncer in transaction pooling
// mode (no named prepared statements survive there), and checks that a wrong password is
// one line that does not show the password. PgBouncer authenticates clients itself here, so
// the wrong-password path is tested even though the test server trusts local connections.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bin := pgbouncerBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: 5, ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(time.Hour)})
	port := startPgBouncer(t, bin)
	const password = "bouncer-Pa55"
	good := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/test?sslmode=disable", password, port)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	for i := range 3 { // several sessions and transactions over the same pooled server connection
		conn := connect(t, db.Config{DSN: good, Command: "pgbouncer-test"})
		for j := range 3 {
			err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
				res, err := query.Run(context.Background(), tx, query.StuckShards(target, query.ShardFilter{}))
				if err != nil {
					return err
				}
				if len(res.Rows) != 1 {
					return fmt.Errorf("stuck shards through pgbouncer: %d rows", len(res.Rows))
				}
				var st string
				if err := tx.QueryRow(context.Background(), "SELECT current_setting('statement_timeout')").Scan(&st); err != nil {
					return err
				}
				if st != "30s" {
					return fmt.Errorf("statement_timeout through pgbouncer = %s", st)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("session %d, transaction %d: %v", i, j, err)
			}
		}
	}
	bad := fmt.Sprintf("postgres://postgres:wrong-Secret-9@127.0.0.1:%d/test?sslmode=disable", port)
	_, err := db.Connect(context.Background(), db.Config{DSN: bad})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.Kind != db.KindAuth {
		t.Fatalf("wrong password gave %v, want an authentication error", err)
	}
	if strings.Contains(err.Error(), "wrong-Secret-9") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad error: %q", err)
	}
	if !strings.Contains(err.Error(), "check the user and password") {
		t.Fatalf("no next step in %q", err)
	}
}

// pgbouncerBinary finds pgbouncer, or skips (fails under CI=true: .ci/run installs it).
func pgbouncerBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("pgbouncer is not installed; .ci/run installs it")
			}
			t.Skip("pgbouncer not installed")
		}
	}
	return bin
}

func startPgBouncer(t *testing.T, bin string, extra ...string) int {
	t.Helper()
	// PgBouncer drops to the postgres user when started as root, so its files live in a
	// directory that user can read (t.TempDir's parent is private to root).
	dir, err := os.MkdirTemp("", "outboxctl-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// A port free now (two PgBouncers may run in one test process).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	ini := fmt.Sprintf(`[databases]
test = host=127.0.0.1 port=5432 dbname=test user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = plain
auth_file = %[2]s/userlist.txt
pool_mode = transaction
max_client_conn = 20
default_pool_size = 1
logfile = %[2]s/pgbouncer.log
pidfile = %[2]s/pgbouncer.pid
ignore_startup_parameters = extra_float_digits
%[3]s
`, port, dir, strings.Join(extra, "\n"))
	for name, text := range map[string]string{"pgbouncer.ini": ini, "userlist.txt": `"postgres" "bouncer-Pa55"` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "postgres"}, args...) // pgbouncer refuses to run as root
	}
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for range 50 {
		c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://postgres:bouncer-Pa55@127.0.0.1:%d/test?sslmode=prefer", port))
		if err == nil {
			_ = c.Close(context.Background())
			return port
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
	t.Fatalf("pgbouncer did not start:\n%s\n%s", stderr.String(), log)
	return 0
}

// TestRedactIsTheOneRedaction: database URLs keep their user and lose the password; any
// other URL (a drain handler's) loses its userinfo and every query value, inside any text.
func TestRedactIsTheOneRedaction(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://sentry:s3cr3t@db:5432/sentry?sslmode=disable": "postgres://sentry:xxxxx@db:5432/sentry?sslmode=disable",
		"postgres://u:p/w@h/db":                                   "postgres://u:xxxxx@h/db",
		"redis://:pw@r:6379/0":                                    "redis://:xxxxx@r:6379/0",
		"host=db password='a b' user=x":                           "host=db password=xxxxx user=x",
		"https://user:pw@relay/hook":                              "https://xxxxx@relay/hook",
		`Post "https://relay/x?token=s3cr3t&region=us#f": EOF`:    `Post "https://relay/x?region=xxxxx&token=xxxxx": EOF`,
		"https://TOKEN@relay/x":                                   "https://xxxxx@relay/x",
		"discard":                                                 "discard",
		"the secret hunter2 again":                                "the secret xxxxx again",
	} {
		if got := db.Redact(in, "hunter2"); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSessionSettingsOutsideTransaction: a statement outside ReadTx (the drain's, the replica
// check) runs with the session settings, sent once before it.
func TestSessionSettingsOutsideTransaction(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{Command: "drain", StatementTimeout: 9 * time.Second})
	// A statement on the connection inside a read transaction must not spend the session SET
	// there: the rollback would undo it.
	err := db.ReadTx(context.Background(), conn, func(pgx.Tx) error {
		return conn.QueryRow(context.Background(), "SELECT 1").Scan(new(int))
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var st, idle string
		if err := conn.QueryRow(context.Background(), "SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')").Scan(&st, &idle); err != nil {
			t.Fatal(err)
		}
		if st != "9s" || idle != "19s" {
			t.Fatalf("outside a transaction: statement_timeout=%s idle=%s, want 9s and 19s", st, idle)
		}
	}
}

// TestReadTxFirstPipelined: the first statement's rows reach the caller, the transaction is
// read-only with the settings, savepoints nest, and no session SET was sent for it (the
// session keeps the server's default after the transaction: SET LOCAL alone covered it).
func TestReadTxFirstPipelined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, db.Config{Command: "shards", StatementTimeout: 7 * time.Second})
	var serverDefault string
	if err := db.RawQueryRow(ctx, conn, "SELECT reset_val FROM pg_settings WHERE name = 'statement_timeout'").Scan(&serverDefault); err != nil {
		t.Fatal(err)
	}
	var first []int64
	read := func(rows db.Rows) error {
		for rows.Next() {
			var n int64
			if err := rows.Scan(&n); err != nil {
				return err
			}
			first = append(first, n)
		}
		return rows.Err()
	}
	err := db.ReadTxFirst(ctx, conn, &db.First{SQL: "SELECT g FROM generate_series(1, $1::int) g", Args: []any{3}, Read: read}, func(tx pgx.Tx) error {
		var st, ro string
		if err := tx.QueryRow(ctx, "SELECT current_setting('statement_timeout'), current_setting('transaction_read_only')").Scan(&st, &ro); err != nil {
			return err
		}
		if st != "7s" || ro != "on" {
			return fmt.Errorf("in the transaction: statement_timeout=%s read_only=%s, want 7s and on", st, ro)
		}
		sp, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := sp.Exec(ctx, "SELECT 1/0"); err == nil {
			return errors.New("1/0 did not fail")
		}
		if err := sp.Rollback(ctx); err != nil {
			return fmt.Errorf("rolling back to the savepoint: %w", err)
		}
		return tx.QueryRow(ctx, "SELECT 1").Scan(new(int))
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(first) != "[1 2 3]" {
		t.Fatalf("first statement rows = %v, want [1 2 3]", first)
	}
	var after string
	if err := db.RawQueryRow(ctx, conn, "SELECT setting FROM pg_settings WHERE name = 'statement_timeout'").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != serverDefault {
		t.Fatalf("statement_timeout after the read = %s, want the server default %s (no session SET)", after, serverDefault)
	}
	if conn.InTransaction() {
		t.Fatal("still in a transaction after ReadTxFirst, want it rolled back")
	}
}

// TestLoopbackKeepsLibpqTLS: a DSN silent on TLS gets libpq's sslmode=prefer, on loopback
// too: encrypted when the server offers TLS (Debian's does, with its snakeoil certificate).
// A loopback address may be a forwarder (socat, an haproxy in TCP mode) to a remote
// server, so "loopback" does not mean "the bytes never leave the machine"; skipping the
// handshake there (8 ms of every command's connection) was tried and reverted. An operator
// who knows the server is local passes sslmode=disable or the Unix socket.
func TestLoopbackKeepsLibpqTLS(t *testing.T) {
	t.Parallel()
	// The test DSN says sslmode=disable (so that every other test is plain): drop it.
	u, err := url.Parse(testdb.DSN())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Skipf("the test DSN is not a postgres:// URL on 127.0.0.1 (%v)", err)
	}
	q := u.Query()
	q.Del("sslmode")
	u.RawQuery = q.Encode()
	var serverSSL string
	if err := testdb.Pool(t).QueryRow(context.Background(), "SHOW ssl").Scan(&serverSSL); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, db.Config{DSN: u.String(), Command: "test"})
	var ssl bool
	if err := conn.QueryRow(context.Background(), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil {
		t.Fatal(err)
	}
	if ssl != (serverSSL == "on") {
		t.Fatalf("%s: encrypted = %v with the server's ssl = %s; want libpq's prefer", u, ssl, serverSSL)
	}
}

// TestJITOffUnlessTheDSNSetsIt: every transaction runs with jit = off, except when the DSN
// chose jit itself, as a parameter or in options.
func TestJITOffUnlessTheDSNSetsIt(t *testing.T) {
	t.Parallel()
	sep := "?"
	if strings.Contains(testdb.DSN(), "?") {
		sep = "&"
	}
	for _, c := range []struct{ suffix, want string }{
		{"", "off"},
		{sep + "jit=on", "on"},
		{sep + "options=" + strings.ReplaceAll(url.QueryEscape("-c jit=on"), "+", "%20"), "on"},
	} {
		conn := connect(t, db.Config{DSN: testdb.DSN() + c.suffix, Command: "test"})
		var got string
		err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), "SELECT current_setting('jit')").Scan(&got)
		})
		if err != nil || got != c.want {
			t.Fatalf("DSN %s: jit = %q (%v), want %s", testdb.DSN()+c.suffix, got, err, c.want)
		}
	}
}

// TestSessionSettingsDoNotLeakThroughPgBouncer: a write command's first statement runs
// outside a transaction (CheckPrimary's pg_is_in_recovery()), so Conn.flush sends the session
// script "SET statement_timeout …; SET lock_timeout …; SET idle_in_transaction_session_timeout
// …; SET jit = off;" as plain session SETs, as it once did. In PgBouncer's transaction pooling the server
// connection goes back to the pool with them, and the next client of the pool (Sentry itself)
// inherits outboxctl's 2 s lock_timeout, 30 s statement_timeout and, since eb8ec3e, jit = off.
// (Found by review; the settings are now SET LOCAL only, see db.Conn.)
func TestSessionSettingsDoNotLeakThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bin := pgbouncerBinary(t)
	port := startPgBouncer(t, bin) // default_pool_size = 1: every client gets the same server connection
	dsn := fmt.Sprintf("postgres://postgres:bouncer-Pa55@127.0.0.1:%d/test?sslmode=disable", port)
	ctx := context.Background()
	other := func() (jit, st, lt string) {
		c, err := pgx.Connect(ctx, dsn+"&default_query_exec_mode=simple_protocol") // Sentry's psycopg: no named statements
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if err := c.QueryRow(ctx, "SELECT current_setting('jit'), current_setting('statement_timeout'), current_setting('lock_timeout')").Scan(&jit, &st, &lt); err != nil {
			t.Fatal(err)
		}
		return jit, st, lt
	}
	jit0, st0, lt0 := other()

	conn := connect(t, db.Config{DSN: dsn, Command: "reschedule"})
	if err := db.CheckPrimary(ctx, conn, "change anything"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)

	if jit, st, lt := other(); jit != jit0 || st != st0 || lt != lt0 {
		t.Fatalf("another client of the pool after outboxctl: jit=%s statement_timeout=%s lock_timeout=%s, want the server's jit=%s statement_timeout=%s lock_timeout=%s",
			jit, st, lt, jit0, st0, lt0)
	}
}
