package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query/session"
)

// A ROLLBACK TO SAVEPOINT the server cancels for the statement timeout (a loaded server,
// --statement-timeout 10ms: CI saw shards --stuck fail with "current transaction is
// aborted" after its pass timed out) is sent again, and the transaction goes on; a rollback
// cancelled every time is an error, after a bounded number of tries. The cancels are
// injected in front of a real server's transaction.
func TestRollbackToRetriesTheStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, db.Config{Command: "test"})
	cancelled := &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}
	for _, tc := range []struct {
		name     string
		cancels  int
		wantSent int
		wantErr  bool
	}{
		{"two cancels, then the rollback runs", 2, 3, false},
		{"cancelled every time", 1000, 5, true},
	} {
		err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := sp.Exec(ctx, "SELECT 1/0"); err == nil {
				t.Fatalf("%s: SELECT 1/0 did not fail", tc.name)
			}
			sent := 0
			exec := func(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
				sent++
				if sent <= tc.cancels {
					return pgconn.CommandTag{}, cancelled
				}
				return tx.Exec(ctx, sql, args...)
			}
			err = db.RollbackTo(ctx, exec, session.RollbackToSavepoint("sp_1"))
			if sent != tc.wantSent || (err != nil) != tc.wantErr || (tc.wantErr && !errors.Is(err, cancelled)) {
				t.Fatalf("%s: %d sent, err %v; want %d sent, an error %v", tc.name, sent, err, tc.wantSent, tc.wantErr)
			}
			var one int
			err = tx.QueryRow(ctx, "SELECT 1").Scan(&one)
			if tc.wantErr {
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "25P02" {
					t.Fatalf("%s: after the failed rollback: %v, want the aborted transaction (25P02)", tc.name, err)
				}
				return nil
			}
			if err != nil || one != 1 {
				t.Fatalf("%s: the transaction after the rollback: %d, %v", tc.name, one, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}
