package cmd_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// Tests of --handler stream: as a user runs it: the real binary, a real co-process (shell
// and Python stand-ins), real signals. Each checks the deliveries against the rows left,
// the exact exit code, and that the co-process's whole process group is gone afterwards.

// streamRun is one drain through a stream: handler with its own log and pid file.
type streamRun struct {
	*drainProc
	log, pidfile string
	// live is stderr too, safe to read while the drain runs.
	live syncBuffer
}

func startStream(t *testing.T, dsn, schema, handler string, env []string, args ...string) *streamRun {
	t.Helper()
	dir := t.TempDir()
	r := &streamRun{drainProc: &drainProc{}, log: filepath.Join(dir, "delivered.log"), pidfile: filepath.Join(dir, "pgid")}
	full := append([]string{"--dsn", dsn, "--schema", schema, "drain", "organization", "1", "--yes", "-o", "json", "--handler", handler}, args...)
	r.cmd = exec.Command(sharedBinary(t), full...)
	r.cmd.Env = append(append(os.Environ(), "LOG="+r.log, "DELIVERED_LOG="+r.log, "PIDFILE="+r.pidfile), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, io.MultiWriter(&r.err, &r.live)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r
}

// delivered is the first word of each line of the handler's log: the ids it acknowledged.
func (r *streamRun) delivered(t *testing.T) []string {
	b, err := os.ReadFile(r.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// checkGroupGone: no process of the co-process's group is left (it wrote its group id).
func (r *streamRun) checkGroupGone(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(r.pidfile)
	if err != nil {
		t.Fatalf("the co-process never wrote its group id: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pgid <= 1 {
		t.Fatalf("group id %q: %v", b, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d of the co-process is still running", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func idStrings(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
	}
	return out
}

func sortedLeft(t *testing.T, schema string, seeded []int64) []string {
	left := remainingIDs(t, schema)
	var out []string
	for _, id := range idStrings(seeded) {
		if left[id] {
			out = append(out, id)
		}
	}
	if len(out) != len(left) {
		t.Fatalf("the table holds rows that were not seeded: %v", left)
	}
	return out
}

// checkSplit: the first n seeded messages were delivered, in order, once each, and are
// gone; the rest are all still there.
func (r *streamRun) checkSplit(t *testing.T, schema string, seeded []int64, n int) {
	t.Helper()
	if got, want := strings.Join(r.delivered(t), " "), strings.Join(idStrings(seeded[:n]), " "); got != want {
		t.Fatalf("delivered %s\nwant      %s\nstderr: %s", got, want, r.err.String())
	}
	if got, want := strings.Join(sortedLeft(t, schema, seeded), " "), strings.Join(idStrings(seeded[n:]), " "); got != want {
		t.Fatalf("left %s, want %s", got, want)
	}
}

const acksHandler = "stream:sh testdata/stream/acks.sh"

// TestStreamDeliversInOrder: every message delivered once, in order, through a shell and
// both Python handlers of docs/handlers, in both modes; nothing left; the co-process gone.
func TestStreamDeliversInOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, mode, handler, env string }{
		{"shell/batch", "batch", acksHandler, ""},
		{"shell/exact", "exact", acksHandler, ""},
		{"example/batch", "batch", "stream:python3 -c 'import os; open(os.environ[\"PIDFILE\"], \"w\").write(str(os.getpgid(0)))' && exec python3 ../docs/handlers/example_stream.py", ""},
		{"sentry-standin/exact", "exact", "stream:python3 -c 'import os; open(os.environ[\"PIDFILE\"], \"w\").write(str(os.getpgid(0)))' && exec python3 ../docs/handlers/sentry_deliver.py", "OUTBOXCTL_SENTRY_STANDIN=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 40)
			var env []string
			if tc.env != "" {
				env = []string{tc.env}
			}
			r := startStream(t, testdb.DSN(), schema, tc.handler, env, "--mode", tc.mode)
			r.wait(t, 0)
			r.checkSplit(t, schema, seeded, len(seeded))
			if !strings.Contains(r.out.String(), `"delivered": 40`) {
				t.Errorf("summary: %s", r.out.String())
			}
			r.checkGroupGone(t)
		})
	}
}

// TestStreamFailures: a negative ack, an ack for another id, garbage, a crash and a hang at
// the sixth message each stop the drain there: the five before are delivered and deleted,
// the sixth and everything after it stay, exit 1, the error says what happened (escaped),
// and the co-process is gone.
func TestStreamFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		{"nack", `refused it: receiver said no\x1b[31m`},
		{"wrongid", "acknowledged message %d while message %d was in flight"},
		{"garbage", `answered "Traceback (most recent call last):" instead of an acknowledgement {"id": %[2]d, "ok": true}`},
		{"crash", `exited (exit status 3) before acknowledging message %[2]d: dying on %[2]d\x1b[2J`},
		{"hang", "timed out after 1s waiting for the acknowledgement of message %[2]d"},
	} {
		for _, mode := range []string{"batch", "exact"} {
			t.Run(tc.mode+"/"+mode, func(t *testing.T) {
				t.Parallel()
				schema, seeded := seedShard(t, 12)
				bad := seeded[5]
				r := startStream(t, testdb.DSN(), schema, acksHandler,
					[]string{"MODE=" + tc.mode, fmt.Sprintf("BAD_ID=%d", bad)}, "--mode", mode, "--handler-timeout", "1s")
				r.wait(t, 1)
				r.checkSplit(t, schema, seeded, 5)
				want := tc.want
				if strings.Contains(want, "%") {
					want = fmt.Sprintf(want, bad+1, bad)
				}
				stderr := r.err.String()
				if !strings.Contains(stderr, fmt.Sprintf("delivery of message %d", bad)) || !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
				if strings.ContainsRune(stderr, 0x1b) {
					t.Errorf("raw escape byte reached stderr: %q", stderr)
				}
				if !strings.Contains(stderr, "the shard stays in backoff") {
					t.Errorf("stderr: %s", stderr)
				}
				r.checkGroupGone(t)
			})
		}
	}
}

// TestStreamAcksAhead: a co-process that reads message 1 and at once acknowledges messages
// 1, 2 and 3 (echoing the one token it knows) delivers message 1 only: the acks of 2 and 3
// were written before their documents, so message 2 fails head-of-line, exit 1, and rows 2
// and 3 stay (on the original main all three were deleted, exit 0).
func TestStreamAcksAhead(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	r := startStream(t, testdb.DSN(), schema, acksHandler, []string{"MODE=ahead", fmt.Sprintf("BAD_ID=%d", seeded[0])})
	r.wait(t, 1)
	r.checkSplit(t, schema, seeded, 1)
	want := fmt.Sprintf(`Error: delivery of message %[2]d (ORGANIZATION_MEMBER_UPDATE, object 1) failed: handler stream:sh testdata/stream/acks.sh broke the stream protocol: it wrote "{\"id\": %[2]d, \"token\": \"`, seeded[0], seeded[1])
	if !strings.Contains(r.err.String(), want) || !strings.Contains(r.err.String(), `on stdout before the document of message `+fmt.Sprint(seeded[1])+` was written`) {
		t.Errorf("stderr does not say %s…:\n%s", want, r.err.String())
	}
	if !strings.Contains(r.out.String(), `"delivered": 1,`) || !strings.Contains(r.out.String(), `"left": 2,`) {
		t.Errorf("summary: %s", r.out.String())
	}
	r.checkGroupGone(t)
}

// TestStreamProtocol1Handler: a handler that answers without the token (stream protocol 1)
// delivers nothing: nothing is deleted, the schedule is put back, and one line says to
// update the handler.
func TestStreamProtocol1Handler(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	before := shardSchedule(t, schema)
	r := startStream(t, testdb.DSN(), schema, acksHandler, []string{"MODE=v1"})
	r.wait(t, 1)
	if left := sortedLeft(t, schema, seeded); len(left) != 3 {
		t.Fatalf("left %v", left)
	}
	if after := shardSchedule(t, schema); after != before {
		t.Errorf("schedule changed:\n%s\n%s", before, after)
	}
	want := fmt.Sprintf("Error: delivery of message %[1]d (ORGANIZATION_MEMBER_UPDATE, object 0) failed: handler stream:sh testdata/stream/acks.sh acknowledged message %[1]d without the document's token: it speaks stream protocol 1; update it to protocol 2, whose ack echoes each document's \"token\" (docs/handlers/README.md); the shard's schedule is back as it was before the claim\n", seeded[0])
	if got := r.err.String(); !strings.HasSuffix(got, want) {
		t.Errorf("stderr:\n%s\nwant it to end with:\n%s", got, want)
	}
	r.checkGroupGone(t)
}

// TestStreamCtrlC: SIGINT to the process group of the drain (a real Ctrl-C) finishes the
// delivery in flight (the co-process, in its own group, never sees the signal), commits,
// exits 130, and closes the co-process.
func TestStreamCtrlC(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"batch", "exact"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 60)
			r := startStream(t, testdb.DSN(), schema, acksHandler, []string{"SLEEP=0.05"}, "--mode", mode)
			deadline := time.Now().Add(20 * time.Second)
			for len(r.delivered(t)) < 5 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
			r.wait(t, 130)
			delivered := r.delivered(t)
			if len(delivered) < 5 || len(delivered) >= 60 {
				t.Fatalf("%d delivered", len(delivered))
			}
			// In order, each once, and exactly the delivered ones are gone.
			r.checkSplit(t, schema, seeded, len(delivered))
			if want := fmt.Sprintf(`"delivered": %d`, len(delivered)); !strings.Contains(r.out.String(), want) {
				t.Errorf("summary does not say %s:\n%s", want, r.out.String())
			}
			r.checkGroupGone(t)
		})
	}
}

// TestStreamUnavailable: a co-process whose command is missing (exit 127 before any ack)
// is an unavailable handler: nothing delivered, the shard's schedule put back.
func TestStreamUnavailable(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	before := shardSchedule(t, schema)
	r := startStream(t, testdb.DSN(), schema, "stream:sh -c 'echo \"$$\" > \"$PIDFILE\"; exec /nonexistent/deliver'", nil)
	r.wait(t, 1)
	if left := sortedLeft(t, schema, seeded); len(left) != 3 {
		t.Fatalf("left %v", left)
	}
	if after := shardSchedule(t, schema); after != before {
		t.Errorf("schedule changed:\n%s\n%s", before, after)
	}
	if want := "exited (exit status 127) before acknowledging message"; !strings.Contains(r.err.String(), want) ||
		!strings.Contains(r.err.String(), "the shard's schedule is back as it was before the claim") {
		t.Errorf("stderr: %s", r.err.String())
	}
	r.checkGroupGone(t)
}

// TestStreamSlowerThanIdleTimeout: a co-process slower than the server's
// idle_in_transaction_session_timeout still drains everything, in both modes: the drain's
// transactions allow --handler-timeout, and the stream handler never waits longer.
func TestStreamSlowerThanIdleTimeout(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"batch", "exact"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 3)
			r := startStream(t, dsnWith("options=-c%20idle_in_transaction_session_timeout%3D500"), schema, acksHandler,
				[]string{"SLEEP=1.2"}, "--mode", mode, "--handler-timeout", "5s")
			r.wait(t, 0)
			r.checkSplit(t, schema, seeded, len(seeded))
			r.checkGroupGone(t)
		})
	}
}

// TestStreamPreflight: a command that does not exist is refused before the claim.
func TestStreamPreflight(t *testing.T) {
	t.Parallel()
	schema, _ := seedShard(t, 1)
	before := shardSchedule(t, schema)
	r := startStream(t, testdb.DSN(), schema, "stream:/nonexistent/deliver --fast", nil)
	r.wait(t, 2)
	if want := "Error: handler command /nonexistent/deliver: no such file or directory; nothing was claimed or changed"; !strings.Contains(r.err.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.err.String())
	}
	if after := shardSchedule(t, schema); after != before {
		t.Errorf("schedule changed")
	}
	if _, err := os.Stat(r.pidfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a co-process started: %v", err)
	}
}

// A stream co-process's stderr reaches the command's own stderr (the streams Main was
// given, shared with the progress line and the notes), escaped, and never the process's
// os.Stderr behind the command's back.
func TestStreamStderrReachesTheCommandsStderr(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	handler := `stream:printf 'hello from the handler\033[31m\n' >&2; LOG=/dev/null exec sh testdata/stream/acks.sh`
	out, errOut := mustRun(t, 0, schema, "drain", "organization", "1", "--yes", "-o", "json", "--handler", handler)
	if !strings.Contains(errOut, `hello from the handler\x1b[31m`) || strings.ContainsRune(errOut, 0x1b) {
		t.Errorf("stderr does not carry the handler's line, escaped:\n%q", errOut)
	}
	if !strings.Contains(out, `"delivered": 3`) {
		t.Errorf("summary: %s", out)
	}
	if left := sortedLeft(t, schema, seeded); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// A co-process that leaves a daemon holding its stderr (setsid: outside the process group
// the drain kills) does not keep the relay running: the drain stops relaying when it ends,
// so nothing is written to the command's stderr after Main returned (-race reads the
// buffer below against the relay's writes), and the daemon's next write finds the pipe
// closed and ends it.
func TestStreamRelayEndsWithTheDrain(t *testing.T) {
	t.Parallel()
	schema, _ := seedShard(t, 2)
	pidfile := filepath.Join(t.TempDir(), "daemon.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidfile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	handler := fmt.Sprintf(`stream:setsid sh -c 'echo $$ > %s; while :; do echo daemon >&2; sleep 0.05; done' & LOG=/dev/null exec sh testdata/stream/acks.sh`, pidfile)
	_, errOut := mustRun(t, 0, schema, "drain", "organization", "1", "--yes", "-o", "json", "--handler", handler)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the daemon never wrote its pid: %v\nstderr:\n%s", err, errOut)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid %q: %v", b, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon (pid %d) still runs: the relay still reads its stderr after the drain ended", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling the process, a condition
	}
}
