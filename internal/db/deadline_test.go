package db_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestSilentServerEndsAtTheStatementDeadline: a server that completes the startup and then
// stops answering ends the statement at the statement timeout plus the margin, with an
// error naming both; the next statement on the connection says the same, not pgx's
// "conn closed".
func TestSilentServerEndsAtTheStatementDeadline(t *testing.T) {
	t.Parallel()
	p := testdb.NewProxy(t)
	p.SilenceAfterStartup()
	conn := connect(t, db.Config{DSN: p.DSN(), Command: "test", StatementTimeout: time.Second})
	const want = "no answer from PostgreSQL within 4s (the statement timeout, 1s, plus 3s): the server, or a proxy or the network before it, stopped answering; check the server and what is between (PgBouncer, a proxy, the network); raise --statement-timeout if the statement is only slow"
	var one int
	elapsed, err := testdb.Within(t, 15*time.Second, "SELECT 1", func() error {
		return conn.QueryRow(context.Background(), "SELECT 1").Scan(&one)
	})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.Kind != db.KindTimeout || err.Error() != want {
		t.Fatalf("a statement on a silent server: %v, want\n%s", err, want)
	}
	if elapsed < 4*time.Second || elapsed > 11*time.Second {
		t.Errorf("it ended after %s, want about 4s (the statement timeout plus the margin)", elapsed)
	}
	_, err = testdb.Within(t, 15*time.Second, "the next statement", func() error {
		return db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), "SELECT 1")
			return err
		})
	})
	if err == nil || err.Error() != want {
		t.Fatalf("the next statement after the stall: %v, want the stall again", err)
	}
}

// TestStatementDeadlineIsPerStatement: the deadline covers one statement, not the
// transaction: statements that each end well within it run on, however long they take
// together (a long listing of several statements, a drain's transaction).
func TestStatementDeadlineIsPerStatement(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{Command: "test", StatementTimeout: time.Second})
	start := time.Now()
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		for range 5 {
			if _, err := tx.Exec(context.Background(), "SELECT pg_sleep(0.9)"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("five statements of 0.9 s each (4.5 s together, past the 4 s deadline of one): %v", err)
	}
	if e := time.Since(start); e < 4*time.Second {
		t.Fatalf("the statements took %s: the test proves nothing under 4 s", e)
	}
}

// TestSilentServerDuringStartup: a server silent from the start is the connect timeout's.
func TestSilentServerDuringStartup(t *testing.T) {
	t.Parallel()
	testdb.Require(t) // a proxy to no server refuses at once: that would be no silence
	p := testdb.NewProxy(t)
	p.Silence()
	elapsed, err := testdb.Within(t, 15*time.Second, "connect", func() error {
		c, err := db.Connect(context.Background(), db.Config{DSN: p.DSN(), ConnectTimeout: time.Second})
		if err == nil {
			_ = c.Close(context.Background())
		}
		return err
	})
	want := "timed out connecting to PostgreSQL at 127.0.0.1:" + strings.Split(p.Addr, ":")[1] + "; check the host and port, firewalls, and --connect-timeout"
	if err == nil || err.Error() != want {
		t.Fatalf("connecting to a silent server: %v, want %s", err, want)
	}
	if elapsed > 6*time.Second {
		t.Errorf("it ended after %s, want about 1s", elapsed)
	}
}

// TestConnectionKeepalive: the TCP connection probes a silent peer after 10 s idle, every
// 5 s, 3 times (Linux's default finds a dead peer after 150 s).
func TestConnectionKeepalive(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{Command: "test"})
	tcp, ok := db.NetConn(conn).(*net.TCPConn)
	if !ok {
		t.Fatalf("the test server's connection is a %T, want TCP (OUTBOXCTL_TEST_DSN with a host)", db.NetConn(conn))
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	err = raw.Control(func(fd uintptr) {
		for name, opt := range map[string][2]int{
			"SO_KEEPALIVE": {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE}, "TCP_KEEPIDLE": {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE},
			"TCP_KEEPINTVL": {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL}, "TCP_KEEPCNT": {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT},
		} {
			v, err := syscall.GetsockoptInt(int(fd), opt[0], opt[1])
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			got[name] = v
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 10, "TCP_KEEPINTVL": 5, "TCP_KEEPCNT": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}
