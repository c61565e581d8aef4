package testdb

import (
	"os"
	"os/exec"
	"testing"
)

// Psql returns the path of the psql client, which tests use to run printed SQL as a DBA
// would. Without it the test is skipped, or fails under CI=true (.ci/run installs it).
func Psql(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("psql is not installed; .ci/run installs postgresql-client")
		}
		t.Skip("psql not installed")
	}
	return path
}
