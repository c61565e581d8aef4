package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// Tests of how the drain ends a delivery, as a user runs it (the real binary, real
// handlers): by the handler's exit status, whatever it leaves behind.

// killGroupsIn kills, at the end of the test, every process group whose id a handler
// appended to path.
func killGroupsIn(t *testing.T, path string) {
	t.Cleanup(func() {
		b, _ := os.ReadFile(path)
		for _, f := range strings.Fields(string(b)) {
			if pgid, err := strconv.Atoi(f); err == nil && pgid > 1 {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	})
}

// TestExecStrayChildDelivers: an exec handler that exits 0 but leaves a child holding its
// stderr delivered its message: both messages deleted, exit 0, one warning per message.
// The original main reported each as an outage ("WaitDelay expired"), put the schedule
// back and exited 1 with both rows left.
func TestExecStrayChildDelivers(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 2)
	pids := filepath.Join(t.TempDir(), "pgids")
	killGroupsIn(t, pids)
	handler := "exec:cat >/dev/null; echo $$ >> " + pids + "; sleep 30 & exit 0"
	p := startDrain(t, testdb.DSN(), schema, "--handler", handler, "--handler-timeout", "20s")
	p.wait(t, 0)
	if left := remainingIDs(t, schema); len(left) != 0 {
		t.Fatalf("left %v\nstderr: %s", left, p.err.String())
	}
	if !strings.Contains(p.out.String(), `"delivered": 2,`) || !strings.Contains(p.out.String(), `"deleted": 2,`) {
		t.Errorf("summary: %s", p.out.String())
	}
	for _, id := range seeded {
		want := fmt.Sprintf("warning: handler %s exited 0 for message %d but left a process holding its stderr: the message counts as delivered; that process's output is no longer read\n",
			strings.TrimPrefix(handler, "exec:"), id)
		if strings.Count(p.err.String(), want) != 1 {
			t.Errorf("stderr does not say once %q:\n%s", want, p.err.String())
		}
	}
}
