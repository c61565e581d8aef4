//go:build !windows

package pgtmp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// machine resolves this machine's binaries for a throwaway, as make test would with
// OUTBOXCTL_THROWAWAY=1; it skips where there are none (fails under CI=true).
func machine(t *testing.T) Resolution {
	t.Helper()
	r := Resolve(forced(), "")
	if r.Source != FromThrowaway {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no throwaway PostgreSQL on this machine: %s", r.Install)
		}
		t.Skip(r.Install)
	}
	return r
}

// forced is this machine with OUTBOXCTL_THROWAWAY=1.
func forced() Env {
	e := MachineEnv()
	e.Getenv = func(k string) string {
		if k == ForceEnv {
			return "1"
		}
		return os.Getenv(k)
	}
	return e
}

// gone waits until the directory and the process are both gone.
func gone(t *testing.T, dir string, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if !exists(dir) && (pid == 0 || !alive(pid)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("after %s: directory %s exists = %v, server %d alive = %v", within, dir, exists(dir), pid, pid != 0 && alive(pid))
}

func TestThrowawayCluster(t *testing.T) {
	t.Parallel()
	r := machine(t)
	ctx := context.Background()
	c, err := Start(ctx, Options{BinDir: r.BinDir, RunAs: r.RunAs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	pid := readPid(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if pid <= 1 || !alive(pid) {
		t.Fatalf("no server running: pid %d", pid)
	}
	if !strings.HasPrefix(c.Dir, "/tmp/"+Prefix) {
		t.Errorf("directory %s, want a short one under /tmp (a unix socket's path is at most 103 bytes on macOS)", c.Dir)
	}
	for _, dsn := range []string{c.DSN, c.SocketDSN} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		var prepared, fsync, db, user string
		if err := conn.QueryRow(ctx, "SELECT current_setting('max_prepared_transactions'), current_setting('fsync'), current_database(), current_user").Scan(&prepared, &fsync, &db, &user); err != nil {
			t.Fatal(err)
		}
		_ = conn.Close(ctx)
		if prepared != "20" || fsync != "off" || db != "test" || user != "postgres" {
			t.Fatalf("%s: max_prepared_transactions %s, fsync %s, database %s, user %s", dsn, prepared, fsync, db, user)
		}
	}
	// As root, the server runs as the postgres user (or nobody), never root.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		if os.Geteuid() == 0 && strings.Contains(string(st), "\nUid:\t0\t") {
			t.Fatalf("the server runs as root:\n%s", st)
		}
	}
	c.Stop()
	gone(t, c.Dir, pid, 15*time.Second)
}

// TestThrowawayRemovedAfterSIGKILL: the owner is killed with SIGKILL (no cleanup of its own
// can run); its watchdog stops the server and removes the directory.
func TestThrowawayRemovedAfterSIGKILL(t *testing.T) {
	t.Parallel()
	r := machine(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PGTMP_TEST_OWNER=1", "PGTMP_TEST_BINDIR="+r.BinDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	var pid int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "CLUSTER %s %d", &dir, &pid); err == nil {
			break
		}
	}
	if dir == "" || !alive(pid) {
		_ = cmd.Process.Kill()
		t.Fatalf("the owner started no cluster (dir %q, pid %d)", dir, pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gone(t, dir, pid, 20*time.Second)
}

// TestMain runs, when asked, TestThrowawayRemovedAfterSIGKILL's owner: it starts a cluster,
// says where, and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("PGTMP_TEST_OWNER") != "1" {
		os.Exit(m.Run())
	}
	var runAs *User
	if r := Resolve(forced(), ""); r.Source == FromThrowaway {
		runAs = r.RunAs
	}
	c, err := Start(context.Background(), Options{BinDir: os.Getenv("PGTMP_TEST_BINDIR"), RunAs: runAs})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("CLUSTER %s %d\n", c.Dir, readPid(filepath.Join(c.Dir, "data", "postmaster.pid")))
	time.Sleep(time.Minute)
	os.Exit(1) // never reached: killed
}

// TestKeptClusterOutlivesItsOwnerUntilRemoved: demo up's cluster has no watchdog; Remove
// stops it and removes its directory.
func TestKeptClusterOutlivesItsOwnerUntilRemoved(t *testing.T) {
	t.Parallel()
	r := machine(t)
	c, err := Start(context.Background(), Options{BinDir: r.BinDir, RunAs: r.RunAs, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPid(filepath.Join(c.Dir, "data", "postmaster.pid"))
	t.Cleanup(func() { _ = Remove(c.Dir) })
	c.Stop() // no watchdog: nothing happens
	if !alive(pid) || !exists(c.Dir) {
		t.Fatal("a kept cluster stopped with its owner")
	}
	if stale(c.Dir) {
		t.Fatal("Reap would remove a kept cluster whose server runs")
	}
	if err := Remove(c.Dir); err != nil {
		t.Fatal(err)
	}
	gone(t, c.Dir, pid, 15*time.Second)
	if err := Remove("/tmp"); err == nil {
		t.Fatal("Remove accepted a directory that is no throwaway's")
	}
}

// TestReapStaleDirectory: a directory whose owner is gone is removed; one whose owner runs,
// or a young one, is left.
func TestReapStaleDirectory(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Minute)
	mk := func(owner string, mtime time.Time) string {
		d, err := os.MkdirTemp(base(), Prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(d) })
		if err := os.WriteFile(filepath.Join(d, "owner"), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return d
	}
	staleDir := mk(fmt.Sprintf("pid %d\n", dead.Process.Pid), old)
	ownedDir := mk(fmt.Sprintf("pid %d\n", os.Getpid()), old)
	youngDir := mk(fmt.Sprintf("pid %d\n", dead.Process.Pid), time.Now())
	deadKept := mk("keep\n", old)
	Reap()
	if exists(staleDir) || exists(deadKept) {
		t.Fatalf("stale directories left: %v %v", exists(staleDir), exists(deadKept))
	}
	if !exists(ownedDir) || !exists(youngDir) {
		t.Fatalf("live or young directories removed: %v %v", exists(ownedDir), exists(youngDir))
	}
}

func TestThrowawayRedis(t *testing.T) {
	t.Parallel()
	r := ResolveRedis(forced(), "")
	if r.Source != FromThrowaway {
		t.Skip("redis-server is not on PATH")
	}
	rd, err := StartRedis(r.Binary)
	if err != nil {
		t.Fatal(err)
	}
	pid := readPid(filepath.Join(rd.Dir, "pid"))
	if !answersRedis(rd.Addr) {
		t.Fatalf("no PONG from %s", rd.Addr)
	}
	rd.Stop()
	gone(t, rd.Dir, pid, 15*time.Second)
}

// TestThrowawayOutlivesItsHandle: a package that keeps only the DSN (testdb) still has its
// server after the garbage collector ran: the watchdog's pipe is not closed under it.
func TestThrowawayOutlivesItsHandle(t *testing.T) {
	t.Parallel()
	r := machine(t)
	c, err := Start(context.Background(), Options{BinDir: r.BinDir, RunAs: r.RunAs})
	if err != nil {
		t.Fatal(err)
	}
	dir, dsn := c.Dir, c.DSN
	t.Cleanup(func() { _ = Remove(dir) })
	c = nil
	for i := 0; i < 5; i++ {
		runtime.GC() // and the finalizers it queued run meanwhile
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("the server is gone once its handle was collected: %v", err)
	}
	_ = conn.Close(ctx)
	if !exists(dir) {
		t.Fatalf("%s removed once its handle was collected", dir)
	}
}
