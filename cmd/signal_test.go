package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// buildBinary is the package's one build of outboxctl (sharedBinary): each test building
// its own cost a link apiece, seconds on a loaded machine.
func buildBinary(t *testing.T) string {
	t.Helper()
	return sharedBinary(t)
}

func seedGroups(t *testing.T, schema string, n int) {
	t.Helper()
	var rows []testdb.Row
	for i := range n {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: int64(i), Payload: testdb.Str(`{"i": 1}`)})
	}
	testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
}

func countRows(t *testing.T, schema string) int64 {
	t.Helper()
	var n int64
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".sentry_regionoutbox").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDrainInterrupted: SIGINT finishes the current message, prints the summary and exits
// 130; what was delivered is deleted, the rest stays.
func TestDrainInterrupted(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 40)
	var out, errOut bytes.Buffer
	c := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1", "--mode", "exact",
		"--handler", "exec:cat >/dev/null; sleep 0.1", "--yes", "-o", "json")
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the drain has delivered (a row is gone), not after a fixed time: under
	// load the drain may not have claimed yet after 800 ms.
	for deadline := time.Now().Add(60 * time.Second); countRows(t, schema) == 40 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Process.Signal(os.Interrupt)
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), `"delivered":`) || !strings.Contains(errOut.String(), "interrupted after") {
		t.Fatalf("no summary:\n%s\n%s", out.String(), errOut.String())
	}
	left := countRows(t, schema)
	if left == 0 || left == 40 {
		t.Fatalf("%d rows left: want some delivered and some not", left)
	}
	// The last line says the schedule the summary shows, never "keeps its backoff" under
	// "delay: due now".
	var sum struct{ Delay string }
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	want := "the shard is due now"
	if sum.Delay != "due now" {
		want = "the shard keeps its backoff (next attempt in " + sum.Delay + ")"
	}
	if !strings.HasSuffix(errOut.String(), want+"\n") {
		t.Fatalf("delay %q, but stderr ends:\n%s", sum.Delay, errOut.String())
	}
}

// TestDrainKilled: the process killed outright mid-drain loses nothing: rows are only ever
// deleted in the transaction that delivered them, and a re-run completes the shard.
func TestDrainKilled(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 40)
	log := filepath.Join(t.TempDir(), "delivered.log")
	handler := "exec:cat >/dev/null; echo x >> " + log + "; sleep 0.05"
	app := uniqueApp(t)
	c := exec.Command(bin, "--dsn", dsnWith("application_name="+app), "--schema", schema, "drain", "organization", "1", "--mode", "exact", "--handler", handler, "--yes")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
	// The server ends the killed client's session, and drops its row lock, only when it
	// notices the socket closed: a re-run started before that is rightly refused ("another
	// drainer holds this shard"), so wait for the session to be gone (CI's race pass met it).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := testdb.Pool(t).QueryRow(context.Background(),
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed drain's session is still open after 60 s")
		}
	}
	before, _ := os.ReadFile(log)
	deliveredBefore := int64(bytes.Count(before, []byte("x")))
	if left := countRows(t, schema); left+deliveredBefore < 40 {
		t.Fatalf("after the kill: %d rows left and %d deliveries: rows were lost", left, deliveredBefore)
	}
	// Let the claim's backoff pass: a re-run drains regardless of the schedule.
	re := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1", "--handler", handler, "--yes")
	if out, err := re.CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if left := countRows(t, schema); left != 0 {
		t.Fatalf("%d rows left after the re-run", left)
	}
	after, _ := os.ReadFile(log)
	if n := bytes.Count(after, []byte("x")); n < 40 {
		t.Fatalf("%d deliveries for 40 groups: some were never delivered", n)
	}
}

// readingStdin reports whether a thread of process pid is in a read(2) of its stdin.
func readingStdin(pid int) bool {
	nr := map[string]string{"amd64": "0", "arm64": "63"}[runtime.GOARCH]
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	for _, p := range tasks {
		if b, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(b), nr+" 0x0 ") {
			return true
		}
	}
	return false
}

// TestShardsFromStdinStopsAtTheFirstSignal (#36 Medium 6): while --shards-from - waits on a
// stdin no one writes to, the first SIGINT ends outboxctl (exit 130, one line), where it used
// to take three.
func TestShardsFromStdinStopsAtTheFirstSignal(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("reads /proc/PID/task/*/syscall of linux/amd64 or arm64 to see the read of stdin")
	}
	bin := buildBinary(t)
	schema := testdb.Schema(t, fixture.Options{})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // held open: stdin never ends
	var out, errOut bytes.Buffer
	c := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "skip", "--category", "ORGANIZATION_UPDATE", "--shards-from", "-", "--yes")
	c.Stdin, c.Stdout, c.Stderr = r, &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	waitFor(t, "outboxctl reading its stdin", func() bool { return readingStdin(c.Process.Pid) })
	_ = c.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second): // a bound on a hang, not a wait for a condition
		_ = c.Process.Kill()
		<-exited
		t.Fatalf("still running 30 s after the first SIGINT\n%s", errOut.String())
	}
	if code := c.ProcessState.ExitCode(); code != 130 || errOut.String() != "Error: interrupted\n" {
		t.Fatalf("exit %d, want 130 and one line\n%s", code, errOut.String())
	}
}
