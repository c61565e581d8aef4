package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
)

// pooledSettings starts a PgBouncer with one server connection and returns what a client
// that sets nothing (Sentry's psycopg) reads there: application_name and statement_timeout.
func pooledSettings(t *testing.T) (dsn string, read func() (app, st string)) {
	t.Helper()
	port := startPgBouncer(t, pgbouncerBinary(t)) // default_pool_size = 1
	dsn = fmt.Sprintf("postgres://postgres:bouncer-Pa55@127.0.0.1:%d/test?sslmode=disable", port)
	return dsn, func() (app, st string) {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, dsn+"&default_query_exec_mode=simple_protocol")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if err := c.QueryRow(ctx, "SELECT current_setting('application_name'), current_setting('statement_timeout')").Scan(&app, &st); err != nil {
			t.Fatal(err)
		}
		return app, st
	}
}

// TestApplicationNameDoesNotLeakThroughPgBouncer (found by review): application_name went in
// the startup packet, and PgBouncer SETs it on the server connection, which keeps it after
// outboxctl leaves: the pool's next client that names itself nothing (Sentry's workers, by
// default) then showed in pg_stat_activity as outboxctl/<command>, and an operator who
// cancels or terminates outboxctl's sessions by that name would hit Sentry's. It is SET
// LOCAL now, like the timeouts.
func TestApplicationNameDoesNotLeakThroughPgBouncer(t *testing.T) {
	t.Parallel()
	dsn, read := pooledSettings(t)
	app0, _ := read()
	conn := connect(t, db.Config{DSN: dsn, Command: "drain"})
	if err := db.CheckPrimary(context.Background(), conn, "drain"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(context.Background())
	if app, _ := read(); app != app0 {
		t.Fatalf("the pool's next client after outboxctl has application_name %q, want the server's %q", app, app0)
	}
}

// TestExecSetDoesNotLeakThroughPgBouncer (found by review): Conn.Exec outside a transaction
// wraps the statement in one of its own and commits it, so Exec("SET …") would be a session
// SET surviving the COMMIT on the pooled server connection. Exec refuses it
// (ErrSessionStatement), and BEGIN, COMMIT and the like, which would do nothing there.
func TestExecSetDoesNotLeakThroughPgBouncer(t *testing.T) {
	t.Parallel()
	dsn, read := pooledSettings(t)
	_, st0 := read()
	conn := connect(t, db.Config{DSN: dsn, Command: "test"})
	for _, sql := range []string{"SET statement_timeout = '7s'", " set lock_timeout = 1", "BEGIN", "commit;", "RESET ALL", "DISCARD ALL"} {
		if _, err := conn.Exec(context.Background(), sql); !errors.Is(err, db.ErrSessionStatement) {
			t.Errorf("Conn.Exec(%q) outside a transaction = %v, want ErrSessionStatement", sql, err)
		}
	}
	if _, err := conn.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatalf("Conn.Exec(SELECT 1): %v", err)
	}
	_ = conn.Close(context.Background())
	if _, st := read(); st != st0 {
		t.Fatalf("the pool's next client has statement_timeout %s, want the server's %s", st, st0)
	}
}
