package session

import "testing"

func TestEveryStatementFills(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		Begin():                                "BEGIN",
		BeginRead():                            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
		BeginWrite():                           "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE",
		BeginWriteSnapshot():                   "BEGIN ISOLATION LEVEL REPEATABLE READ READ WRITE",
		Commit():                               "COMMIT",
		Rollback():                             "ROLLBACK",
		PrimaryCheck():                         "SELECT pg_is_in_recovery()",
		Savepoint("sp_2"):                      "SAVEPOINT sp_2",
		ReleaseSavepoint("sp_2"):               "RELEASE SAVEPOINT sp_2",
		RollbackToSavepoint("sp_2"):            "ROLLBACK TO SAVEPOINT sp_2",
		IdleTimeoutSetting():                   "SELECT setting::bigint FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'",
		SetLocal("jit", "off"):                 "SET LOCAL jit = off",
		SetLocal("lock_timeout", Quote("2'0")): "SET LOCAL lock_timeout = '2''0'",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
