package cmd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// Fault tests of the drain as a user runs it: the real binary, real signals, a killed
// server connection, timeouts. Each counts the rows and the deliveries before and after and
// asserts the exact exit code: nothing lost (every row is delivered or still there), nothing
// deleted that was not delivered, and the summary tells the truth.

// sharedBinary is the package's one build of outboxctl (cmd.SharedBinary).
func sharedBinary(t testing.TB) string {
	t.Helper()
	return cmd.SharedBinary(t)
}

func uniqueApp(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "outboxctl-test-" + hex.EncodeToString(b[:])
}

// dsnWith adds libpq parameters to the test DSN.
func dsnWith(params string) string {
	d := testdb.DSN()
	if strings.Contains(d, "?") {
		return d + "&" + params
	}
	return d + "?" + params
}

// drainProc is a drain started in its own process group, as a shell would start it in the
// foreground: a signal to the group reaches outboxctl and everything it started in its group.
type drainProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

func startDrain(t *testing.T, dsn, schema string, args ...string) *drainProc {
	t.Helper()
	p := &drainProc{}
	full := append([]string{"--dsn", dsn, "--schema", schema, "drain", "organization", "1", "--yes", "-o", "json"}, args...)
	p.cmd = exec.Command(sharedBinary(t), full...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *drainProc) wait(t *testing.T, want int) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("drain still running after 60 s\nstdout: %s\nstderr: %s", p.out.String(), p.err.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, want, p.out.String(), p.err.String())
	}
}

// deliveryLog is a handler that appends each document's id to a file, then sleeps.
func deliveryLog(t *testing.T, sleep string) (handler, path string) {
	path = filepath.Join(t.TempDir(), "delivered.log")
	return fmt.Sprintf(`exec:grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2 >> %s; sleep %s`, path, sleep), path
}

func deliveredIDs(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// remainingIDs lists the shard's ids left in the table.
func remainingIDs(t *testing.T, schema string) map[string]bool {
	rows, err := testdb.Pool(t).Query(context.Background(), "SELECT id::text FROM "+schema+".sentry_regionoutbox")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

// checkNothingLost: every seeded row was delivered or is still there, and every row that
// is gone was delivered.
func checkNothingLost(t *testing.T, seeded []int64, delivered []string, left map[string]bool) {
	t.Helper()
	got := map[string]int{}
	for _, d := range delivered {
		got[d]++
	}
	for _, id := range seeded {
		s := fmt.Sprint(id)
		if !left[s] && got[s] == 0 {
			t.Errorf("row %s was deleted but never delivered", s)
		}
	}
}

func seedShard(t *testing.T, n int) (string, []int64) {
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for i := range n {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: int64(i), Payload: testdb.Str(fmt.Sprintf(`{"i": %d}`, i))})
	}
	return schema, testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
}

// TestDrainSignals: SIGINT to the process group (a real Ctrl-C) and SIGTERM, in both modes:
// the delivery in flight finishes (the handler, in its own group, never sees the signal),
// what was delivered is committed and deleted, the summary is printed, exit 130.
func TestDrainSignals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  string
		sig   syscall.Signal
		group bool
	}{{"batch", syscall.SIGINT, true}, {"exact", syscall.SIGINT, true}, {"batch", syscall.SIGTERM, false}} {
		t.Run(tc.mode+"/"+tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 60)
			handler, log := deliveryLog(t, "0.05")
			p := startDrain(t, testdb.DSN(), schema, "--mode", tc.mode, "--handler", handler)
			deadline := time.Now().Add(20 * time.Second)
			for len(deliveredIDs(t, log)) < 5 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			pid := p.cmd.Process.Pid
			if tc.group {
				pid = -pid
			}
			_ = syscall.Kill(pid, tc.sig)
			p.wait(t, 130)
			delivered := deliveredIDs(t, log)
			left := remainingIDs(t, schema)
			checkNothingLost(t, seeded, delivered, left)
			if len(delivered) >= 60 || len(left) == 0 {
				t.Fatalf("the drain did not stop: %d delivered, %d left", len(delivered), len(left))
			}
			// Every delivered message is deleted: the one in flight finished and committed.
			for _, id := range delivered {
				if left[id] {
					t.Errorf("message %s was delivered but is still in the table", id)
				}
			}
			if want := fmt.Sprintf(`"delivered": %d`, len(delivered)); !strings.Contains(p.out.String(), want) {
				t.Errorf("summary does not say %s:\n%s", want, p.out.String())
			}
			if want := fmt.Sprintf(`"left": %d`, len(left)); !strings.Contains(p.out.String(), want) {
				t.Errorf("summary does not say %s:\n%s", want, p.out.String())
			}
			if !strings.Contains(p.err.String(), "interrupted after") {
				t.Errorf("stderr: %s", p.err.String())
			}
		})
	}
}

// TestDrainRateWaitInterruptible: a --rate wait of hours ends at once on Ctrl-C.
func TestDrainRateWaitInterruptible(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	handler, log := deliveryLog(t, "0")
	p := startDrain(t, testdb.DSN(), schema, "--handler", handler, "--rate", "0.0001")
	deadline := time.Now().Add(20 * time.Second)
	for len(deliveredIDs(t, log)) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
	p.wait(t, 130)
	delivered, left := deliveredIDs(t, log), remainingIDs(t, schema)
	checkNothingLost(t, seeded, delivered, left)
	if len(delivered) != 1 || len(left) != 2 {
		t.Fatalf("%d delivered, %d left; want 1 and 2", len(delivered), len(left))
	}
}

// TestDrainRateSlowerThanIdleTimeout: a rate slower than the server's
// idle_in_transaction_session_timeout still drains everything (waits are outside
// transactions), and so does a handler slower than that timeout (the drain raises it for its
// own transactions to cover --handler-timeout).
func TestDrainRateSlowerThanIdleTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, rate, sleep string }{{"rate", "1.5", "0"}, {"slow-handler", "0", "1.5"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema, seeded := seedShard(t, 3)
			handler, log := deliveryLog(t, tc.sleep)
			p := startDrain(t, dsnWith("options=-c%20idle_in_transaction_session_timeout%3D500"), schema,
				"--handler", handler, "--rate", tc.rate, "--handler-timeout", "5s")
			p.wait(t, 0)
			delivered, left := deliveredIDs(t, log), remainingIDs(t, schema)
			checkNothingLost(t, seeded, delivered, left)
			if len(delivered) != 3 || len(left) != 0 {
				t.Fatalf("%d delivered (%v), %d left; want 3 and 0\n%s", len(delivered), delivered, len(left), p.err.String())
			}
		})
	}
}

// TestDrainConnectionKilled: pg_terminate_backend mid-batch stops the drain at once (no more
// deliveries on a dead connection), exits 1, and the summary counts what is really left
// (read on a fresh connection) and the deliveries that were not committed.
func TestDrainConnectionKilled(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 40)
	app := uniqueApp(t)
	handler, log := deliveryLog(t, "0.1")
	p := startDrain(t, dsnWith("application_name="+app), schema, "--handler", handler)
	deadline := time.Now().Add(20 * time.Second)
	for len(deliveredIDs(t, log)) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var killed int
	if err := testdb.Pool(t).QueryRow(context.Background(),
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d backends: %v", killed, err)
	}
	p.wait(t, 1)
	time.Sleep(200 * time.Millisecond) // a delivery still running when the connection died
	delivered, left := deliveredIDs(t, log), remainingIDs(t, schema)
	checkNothingLost(t, seeded, delivered, left)
	if len(delivered) > 10 {
		t.Errorf("%d deliveries: the drain went on delivering on a dead connection", len(delivered))
	}
	if want := fmt.Sprintf(`"left": %d`, len(left)); !strings.Contains(p.out.String(), want) {
		t.Errorf("summary does not say %s:\n%s", want, p.out.String())
	}
	if !strings.Contains(p.err.String(), "were not committed and will be delivered again") {
		t.Errorf("stderr: %s", p.err.String())
	}
}

// shardSchedule reads every row's schedule of shard 1, as text (exact).
func shardSchedule(t *testing.T, schema string) string {
	var s string
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT string_agg(id || ' ' || scheduled_from || ' ' || scheduled_for, ', ' ORDER BY id) FROM "+
		schema+".sentry_regionoutbox WHERE shard_identifier = 1").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDrainHandlerPreflight: a handler that cannot work is refused before the claim (exit 2,
// schedule untouched), and a first delivery that fails for a handler-level reason puts the
// schedule back exactly as it was (exit 1).
func TestDrainHandlerPreflight(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	_ = closed.Close()
	for _, tc := range []struct {
		name, handler string
		exit          int
		stderr        string
	}{
		{"missing-exec", "exec:./nonexistent.sh", 2, "handler command ./nonexistent.sh: no such file or directory; nothing was claimed or changed"},
		{"not-on-path", "exec:no-such-command-xyz --flag", 2, "handler command no-such-command-xyz not found on PATH; nothing was claimed or changed"},
		{"refused", "http://" + addr + "/hook?token=s3cr3t", 2, "connection refused; nothing was claimed or changed"},
		{"exit-127", "exec:sh -c 'exit 127'", 1, "the shard's schedule is back as it was before the claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema, _ := seedShard(t, 3)
			if _, err := testdb.Pool(t).Exec(context.Background(), "UPDATE "+schema+
				".sentry_regionoutbox SET scheduled_from = now() - interval '1 hour', scheduled_for = now() - interval '1 hour' + interval '8 minutes' WHERE id = (SELECT min(id) FROM "+schema+".sentry_regionoutbox)"); err != nil {
				t.Fatal(err)
			}
			before := shardSchedule(t, schema)
			p := startDrain(t, testdb.DSN(), schema, "--handler", tc.handler)
			p.wait(t, tc.exit)
			if !strings.Contains(p.err.String(), tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, p.err.String())
			}
			if strings.Contains(p.err.String()+p.out.String(), "s3cr3t") {
				t.Errorf("the token in the handler URL was printed:\n%s", p.err.String())
			}
			if after := shardSchedule(t, schema); after != before {
				t.Errorf("schedule changed:\nbefore %s\nafter  %s", before, after)
			}
			if n := len(remainingIDs(t, schema)); n != 3 {
				t.Errorf("%d rows left, want 3", n)
			}
		})
	}
}

// TestDrainPrintedScript: the printed script, run by psql as printed, deletes nothing and
// changes no schedule; run with -v delivered=<the newest row of the head group> it deletes
// that group up to the row, and nothing else.
func TestDrainPrintedScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Fatal("psql is needed (.ci/run installs postgresql-client)")
	}
	schema := testdb.Schema(t, fixture.Options{})
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 7, Payload: testdb.Str(`{"v": 1}`)},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: testdb.Str(`{"org": 1}`)},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 7, Payload: testdb.Str(`{"v": 2}`)},
		testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: 7, Payload: testdb.Str(`{"other": 1}`)})
	out, err := exec.Command(sharedBinary(t), "--schema", schema, "drain", "organization", "1", "--print-sql").Output()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "drain.sql")
	if err := os.WriteFile(script, out, 0o600); err != nil {
		t.Fatal(err)
	}
	before := shardSchedule(t, schema)
	psql := func(args ...string) (string, error) {
		b, err := exec.Command("psql", append([]string{"-X", "-q", "-d", testdb.DSN(), "-f", script}, args...)...).CombinedOutput()
		return string(b), err
	}
	got, err := psql()
	if err != nil {
		t.Fatalf("as printed: %v\n%s", err, got)
	}
	if want := fmt.Sprintf("deliver row %d (category 3, object 7)", ids[2]); !strings.Contains(got, want) {
		t.Fatalf("as printed, psql said:\n%s\nwant %q", got, want)
	}
	if n := len(remainingIDs(t, schema)); n != 4 || shardSchedule(t, schema) != before {
		t.Fatalf("run as printed it changed the table: %d rows left", n)
	}
	// The older row of the group is not the newest: nothing is deleted.
	if got, err := psql("-v", fmt.Sprintf("delivered=%d", ids[0])); err != nil || !strings.Contains(got, "nothing deleted") {
		t.Fatalf("delivered=older id: %v\n%s", err, got)
	}
	if got, err := psql("-v", "delivered=1); DROP TABLE x; --"); err == nil || len(remainingIDs(t, schema)) != 4 {
		t.Fatalf("a hostile delivered value ran or deleted: %v\n%s", err, got)
	}
	if got, err := psql("-v", fmt.Sprintf("delivered=%d", ids[2])); err != nil || !strings.Contains(got, "deleted the group") {
		t.Fatalf("delivered=newest: %v\n%s", err, got)
	}
	left := remainingIDs(t, schema)
	if len(left) != 2 || !left[fmt.Sprint(ids[1])] || !left[fmt.Sprint(ids[3])] {
		t.Fatalf("left %v, want the other group (%d) and the other shard (%d)", left, ids[1], ids[3])
	}
}

// TestDrainHandlerHeader: --handler-header values come from the environment, reach the
// receiver, and are never printed; the URL's query values are redacted in the plan.
func TestDrainHandlerHeader(t *testing.T) {
	t.Parallel()
	schema, _ := seedShard(t, 2)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var auth []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	c := exec.Command(sharedBinary(t), "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1", "--yes",
		"--handler", "http://"+ln.Addr().String()+"/hook?token=qs-secret", "--handler-header", "Authorization: Bearer $OUTBOXCTL_TEST_TOKEN")
	c.Env = append(os.Environ(), "OUTBOXCTL_TEST_TOKEN=env-secret")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "secret") {
		t.Fatalf("a secret was printed:\n%s", out)
	}
	if !strings.Contains(string(out), "handler headers: Authorization (values not shown)") || !strings.Contains(string(out), "token=xxxxx") {
		t.Fatalf("plan:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 2 || auth[0] != "Bearer env-secret" {
		t.Fatalf("receiver saw Authorization %q", auth)
	}
	// A variable that is not set is an error before anything happens.
	c = exec.Command(sharedBinary(t), "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1", "--yes",
		"--handler", "http://"+ln.Addr().String()+"/hook", "--handler-header", "Authorization: Bearer $OUTBOXCTL_UNSET_VAR")
	out, err = c.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "environment variable OUTBOXCTL_UNSET_VAR is not set") {
		t.Fatalf("unset variable: %v\n%s", err, out)
	}
}

// TestDrainDiscardRestoresAsBefore: rows a discard drain deleted come back from its archive
// exactly as they were before the drain, schedule included (the claim rewrote it first).
func TestDrainDiscardRestoresAsBefore(t *testing.T) {
	t.Parallel()
	schema, _ := seedShard(t, 4)
	if _, err := testdb.Pool(t).Exec(context.Background(), "UPDATE "+schema+
		".sentry_regionoutbox SET scheduled_from = now() - interval '2 hours', scheduled_for = now() - interval '2 hours' + interval '16 minutes'"); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		var s string
		if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT string_agg(concat_ws(' ', id, scheduled_from, scheduled_for, date_added, payload::text), ', ' ORDER BY id) FROM "+
			schema+".sentry_regionoutbox").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snapshot()
	archive := filepath.Join(t.TempDir(), "discard.jsonl")
	p := startDrain(t, testdb.DSN(), schema, "--handler", "discard", "--archive", archive, "--reason", "INC-9")
	p.wait(t, 0)
	if n := len(remainingIDs(t, schema)); n != 0 {
		t.Fatalf("%d rows left after the discard drain", n)
	}
	// restore --all leaves a discard out (poison messages come back only when named).
	out, err := exec.Command(sharedBinary(t), "--dsn", testdb.DSN(), "--schema", schema, "restore", archive, "--all", "--yes").CombinedOutput()
	if err != nil || len(remainingIDs(t, schema)) != 0 {
		t.Fatalf("restore --all: %v\n%s", err, out)
	}
	out, err = exec.Command(sharedBinary(t), "--dsn", testdb.DSN(), "--schema", schema, "restore", archive, "--include-skipped", "--yes").CombinedOutput()
	if err != nil {
		t.Fatalf("restore --include-skipped: %v\n%s", err, out)
	}
	if after := snapshot(); after != before {
		t.Fatalf("restored rows differ:\nbefore %s\nafter  %s", before, after)
	}
}

// A claim that keeps meeting rows changed under it (testdb.SerializationFailures: every
// try's UPDATE fails with 40001) gives up after its tries: exit 1, one error line saying so with its hint, and
// nothing delivered or deleted.
func TestDrainClaimGivesUp(t *testing.T) {
	t.Parallel()
	schema, seeded := seedShard(t, 3)
	testdb.SerializationFailures(t, schema, "sentry_regionoutbox")
	_, errOut := mustRun(t, 1, schema, "drain", "organization", "1", "--yes", "--handler", "discard")
	if !strings.Contains(errOut, "the shard's rows changed under the claim 5 times in a row (in drain-claim)") ||
		!strings.Contains(errOut, "find it in pg_stat_activity, then drain again") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if left := sortedLeft(t, schema, seeded); len(left) != len(seeded) {
		t.Errorf("left %v, want every seeded row", left)
	}
}
