package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
)

// flushCounter is a TCP proxy to the test server that counts the client's flushes (a burst
// of bytes the client sends before it waits for the server): in PostgreSQL's protocol,
// without pipelining, one flush is one round trip.
type flushCounter struct {
	addr    string
	flushes atomic.Int64
}

func startFlushCounter(t *testing.T) *flushCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fc := &flushCounter{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", "127.0.0.1:5432")
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, s)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(c, s); _ = c.Close() }()
			go func() {
				defer wg.Done()
				buf := make([]byte, 1<<16)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						fc.flushes.Add(1)
						if _, werr := s.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = s.Close()
			}()
		}
	}()
	return fc
}

// TestRoundTripsOfAWriteTransaction (from a review) measures what the batch
// drain pays per transaction besides its own statements: BEGIN with the SET LOCALs in one
// round trip (it used to wait for BEGIN, then for the settings), and COMMIT. A statement
// outside a transaction (the replica check) rides in BEGIN's round trip: two in all.
func TestRoundTripsOfAWriteTransaction(t *testing.T) {
	t.Parallel()
	fc := startFlushCounter(t)
	conn := connect(t, db.Config{DSN: fmt.Sprintf("postgres://postgres@%s/test?sslmode=disable", fc.addr), Command: "test"})
	ctx := context.Background()

	fc.flushes.Store(0)
	if err := db.CheckPrimary(ctx, conn, "change anything"); err != nil {
		t.Fatal(err)
	}
	check := fc.flushes.Load()

	fc.flushes.Store(0)
	err := db.RunWriteTx(ctx, conn, []string{"SET LOCAL plan_cache_mode = force_generic_plan"}, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT 1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	write := fc.flushes.Load() - 1 // the statement itself
	t.Logf("replica check: %d round trips; a write transaction besides its statements: %d", check, write)
	if write > 2 || check > 2 {
		t.Errorf("a write transaction costs %d round trips besides its statements, the replica check %d; BEGIN and the SET LOCALs pipelined (with the check's statement), and COMMIT, are 2", write, check)
	}
}

// TestWriteTxCommitOfAnAbortedTransaction: a write transaction whose statement failed (and
// whose caller went on regardless) does not report its COMMIT as a success: the server
// turned it into a ROLLBACK, and RunWriteTx says so, as pgx's own Tx does.
func TestWriteTxCommitOfAnAbortedTransaction(t *testing.T) {
	t.Parallel()
	conn := connect(t, db.Config{Command: "test"})
	ctx := context.Background()
	err := db.RunWriteTx(ctx, conn, nil, func(tx pgx.Tx) error {
		_, _ = tx.Exec(ctx, "SELECT 1/0") // fails; the transaction is aborted
		return nil
	})
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("commit of an aborted transaction = %v, want pgx.ErrTxCommitRollback", err)
	}
	if conn.InTransaction() {
		t.Fatal("the connection is still inside a transaction")
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after it: %d, %v", one, err)
	}
}
