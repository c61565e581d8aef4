package cmd_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// syncBuffer is a bytes.Buffer a running process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, at most 30 s; false (and the test failed) if it never did.
func waitFor(t *testing.T, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("still waiting for %s after 30 s", what)
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestSecondSignalAbandonsDelivery: a handler hangs on the sixth message, well within a
// --handler-timeout of 50 s. A Ctrl-C (SIGINT to the drain's process group) makes the
// drain say what it waits for and how to abandon it; a SIGTERM then kills the handler's
// process group at once: the five messages before are delivered and deleted, the sixth and
// all after it stay, the summary is printed and names the abandoned message, exit 130.
// The original main ignored both signals until the timeout, then exited 1.
func TestSecondSignalAbandonsDelivery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, handler, mode string }{
		{"stream/batch", acksHandler, "batch"},
		{"stream/exact", acksHandler, "exact"},
		{"exec/batch", "exec:sh testdata/stream/acks.sh", "batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 12)
			bad := seeded[5]
			r := startStream(t, testdb.DSN(), schema, tc.handler, []string{"MODE=hang", fmt.Sprintf("BAD_ID=%d", bad), "HANG=60"},
				"--mode", tc.mode, "--handler-timeout", "50s")
			if !waitFor(t, "the handler to hang", func() bool { _, err := os.Stat(r.log + ".hang"); return err == nil }) {
				t.FailNow()
			}
			start := time.Now()
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
			// Without the note (the original main), the second signal goes anyway: the exit
			// code then says what it did.
			waitFor(t, "the first signal's note", func() bool { return strings.Contains(r.live.String(), "press Ctrl-C again") })
			_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
			r.wait(t, 130)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the abandon took %s", d)
			}
			r.checkSplit(t, schema, seeded, 5)
			note := fmt.Sprintf("interrupted: waiting for the handler to finish message %d (ORGANIZATION_MEMBER_UPDATE, object 5), at most ", bad)
			// The last line says the shard's schedule as the summary's delay does (never
			// "keeps its backoff" under "delay: due now").
			last := regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf("Error: interrupted after 5 delivered message(s): the delivery of message %d was abandoned (its handler stopped); it stays at the shard's head, nothing of it deleted, and ", bad)) +
				`the shard (is due now|keeps its backoff \(next attempt in \S+\))\n$`)
			if got := r.live.String(); !strings.Contains(got, note) || !strings.Contains(got, "more (--handler-timeout 50s), then committing and stopping; press Ctrl-C again or send SIGTERM to abandon it: the handler is stopped and nothing of the message is deleted\n") || !last.MatchString(got) {
				t.Errorf("stderr:\n%s\nwant the note %q… and the last line %q", got, note, last)
			}
			if out := r.out.String(); !strings.Contains(out, `"delivered": 5,`) || !strings.Contains(out, fmt.Sprintf(`"abandoned_message": %d`, bad)) {
				t.Errorf("summary: %s", out)
			}
			r.checkGroupGone(t)
		})
	}
}
