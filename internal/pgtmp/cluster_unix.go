//go:build !windows

package pgtmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say how to start a throwaway cluster.
type Options struct {
	// BinDir holds initdb, pg_ctl and postgres (Resolution.BinDir).
	BinDir string
	// RunAs is the user the server runs as (Resolution.RunAs; nil: ourselves).
	RunAs *User
	// Keep makes the cluster outlive this process (demo up): no watchdog, and Remove(Dir)
	// stops it later. Without Keep it is removed when this process ends, however it ends.
	Keep bool
	// Autovacuum on (demo up's cluster, which people look at with doctor); off for the
	// tests, as on the project's machines and CI, so that their statistics read alike.
	Autovacuum bool
}

// Cluster is a running throwaway PostgreSQL. Its directory holds the data (data/), the unix
// socket, the server's log (log) and its owner (owner).
type Cluster struct {
	Dir  string
	Port int
	// DSN reaches it over TCP on 127.0.0.1 (the proxy and PgBouncer tests need a host and a
	// port): user postgres, database test, trust.
	DSN string
	// SocketDSN reaches it over the unix socket in Dir.
	SocketDSN string
	leash     *leash
}

// Prefix starts the name of every throwaway directory, which Reap looks for.
const Prefix = "outboxctl-pg-"

// base is the directory the throwaway directories go in: /tmp, short enough for a unix
// socket's path (macOS's $TMPDIR is not), else the system's.
func base() string {
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
		return "/tmp"
	}
	return os.TempDir()
}

// Start creates and starts a throwaway cluster: initdb --no-sync -A trust, then the server
// on a free port of 127.0.0.1 and a unix socket in its directory, with fsync off and
// prepared transactions enabled (doctor's tests build one), and a database named test.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	Reap()
	dir, err := os.MkdirTemp(base(), Prefix)
	if err != nil {
		return nil, fmt.Errorf("creating the throwaway cluster's directory: %w", err)
	}
	c := &Cluster{Dir: dir}
	owner := "pid " + strconv.Itoa(os.Getpid()) + "\n"
	if o.Keep {
		owner = "keep\n"
	} else {
		// The watchdog first: a kill at any later step still removes the directory.
		if c.leash, err = watch(filepath.Join(dir, "data", "postmaster.pid"), dir, "QUIT"); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	fail := func(err error) (*Cluster, error) {
		c.Stop()
		if o.Keep {
			_ = Remove(dir)
		}
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(owner), 0o644); err != nil {
		return fail(err)
	}
	if o.RunAs != nil {
		if err := os.Chown(dir, o.RunAs.Uid, o.RunAs.Gid); err != nil {
			return fail(fmt.Errorf("handing the throwaway cluster's directory to %s: %w", o.RunAs.Name, err))
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(ctx, o, filepath.Join(o.BinDir, "initdb"), "--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "-D", data); err != nil {
		return fail(fmt.Errorf("initdb failed: %v: %s", err, lastLines(out, 5)))
	}
	var startErr error
	for try := 0; try < 3; try++ { // another process may take the free port before the server binds it
		if c.Port, err = freePort(); err != nil {
			return fail(err)
		}
		if err := writeConf(data, dir, c.Port, o.Autovacuum); err != nil {
			return fail(err)
		}
		logPath := filepath.Join(dir, "log")
		var out []byte
		out, startErr = c.run(ctx, o, filepath.Join(o.BinDir, "pg_ctl"), "start", "-w", "-t", "60", "-s", "-D", data, "-l", logPath)
		if startErr == nil {
			break
		}
		log, _ := os.ReadFile(logPath)
		startErr = fmt.Errorf("the throwaway server did not start: %v: %s %s", startErr, lastLines(out, 3), lastLines(log, 5))
		if !bytes.Contains(log, []byte("could not bind")) && !bytes.Contains(log, []byte("in use")) {
			break
		}
	}
	if startErr != nil {
		return fail(startErr)
	}
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/test?sslmode=disable", c.Port)
	c.SocketDSN = fmt.Sprintf("postgres://postgres@/test?host=%s&port=%d", dir, c.Port)
	if err := c.createTestDB(ctx, o); err != nil {
		return fail(err)
	}
	return c, nil
}

// writeConf appends the throwaway's settings to postgresql.conf. fsync, full-page writes and
// synchronous commit are off: nothing in a throwaway must survive a crash. The time zone is
// UTC, as on the project's machines and CI.
func writeConf(data, sockDir string, port int, autovacuum bool) error {
	av := "off"
	if autovacuum {
		av = "on"
	}
	conf := fmt.Sprintf(`
# outboxctl's throwaway cluster (internal/pgtmp)
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
fsync = off
full_page_writes = off
synchronous_commit = off
max_prepared_transactions = 20
max_connections = 200
autovacuum = %s
timezone = 'UTC'
log_timezone = 'UTC'
`, port, strings.ReplaceAll(sockDir, "'", "''"), av)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// run runs one of the server's programs as o.RunAs, in the cluster's directory (the
// server's user may not be able to enter ours), in a session of its own: a Ctrl-C at the
// terminal reaches us, and we stop the server ourselves.
func (c *Cluster) run(ctx context.Context, o Options, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if o.RunAs != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(o.RunAs.Uid), Gid: uint32(o.RunAs.Gid)}
		cmd.Env = append(os.Environ(), "HOME="+c.Dir)
	}
	return cmd.CombinedOutput()
}

// createTestDB creates the database the tests and the demo use, with the createdb beside
// the server binaries (else the one on PATH).
func (c *Cluster) createTestDB(ctx context.Context, o Options) error {
	createdb := filepath.Join(o.BinDir, "createdb")
	if _, err := os.Stat(createdb); err != nil {
		if createdb, err = exec.LookPath("createdb"); err != nil {
			return fmt.Errorf("createdb is not beside %s nor on PATH: install PostgreSQL's client programs", o.BinDir)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := c.run(ctx, o, createdb, "-h", c.Dir, "-p", strconv.Itoa(c.Port), "-U", "postgres", "test"); err != nil {
		return fmt.Errorf("creating database test: %v: %s", err, lastLines(out, 3))
	}
	return nil
}

// Stop stops the server and removes its directory (a Keep cluster: Remove(Dir)). It waits
// until both are gone.
func (c *Cluster) Stop() {
	if c != nil && c.leash != nil {
		c.leash.release()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// watchdogScript waits for its standard input (a pipe whose only writer is the owner) to
// end, which happens when the owner closes it or dies in any way, even SIGKILL; then it stops
// the server named by pidfile ($1) with signal $3, waits for it (10 s, then SIGKILL) and
// removes the directory ($2). It runs in a session of its own, so that a signal to the
// owner's process group does not end it too.
const watchdogScript = `read -r _
pid=$(head -n 1 "$1" 2>/dev/null)
if [ -n "$pid" ] && [ "$pid" -gt 1 ] 2>/dev/null; then
  kill -"$3" "$pid" 2>/dev/null
  i=0
  while [ -e "$1" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$1" ] && kill -KILL "$pid" 2>/dev/null
fi
rm -rf "$2"
`

// leash is the owner's end of a watchdog's pipe.
type leash struct {
	w   *os.File
	cmd *exec.Cmd
}

// held keeps every leash reachable until it is released: an *os.File closes its descriptor
// when garbage-collected, which would end the watchdog's wait, and the server with it, while
// the owner still uses it (a test package that keeps only the DSN).
var held sync.Map

func watch(pidfile, dir, signal string) (*leash, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "outboxctl-pgtmp-watchdog", pidfile, dir, signal)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("starting the throwaway's watchdog: %w", err)
	}
	_ = r.Close()
	l := &leash{w: w, cmd: cmd}
	held.Store(l, true)
	return l, nil
}

// release closes the pipe, and waits for the watchdog to have stopped the server and removed
// the directory.
func (l *leash) release() {
	_ = l.w.Close()
	_ = l.cmd.Wait()
	held.Delete(l)
}

// Remove stops a cluster's server, if it runs, and removes its directory: demo down's, and
// Reap's for a directory whose owner is gone.
func Remove(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), Prefix) && !strings.HasPrefix(filepath.Base(dir), RedisPrefix) {
		return fmt.Errorf("%s is not a throwaway cluster's directory", dir)
	}
	for _, pidfile := range []string{filepath.Join(dir, "data", "postmaster.pid"), filepath.Join(dir, "pid")} {
		stopPid(pidfile)
	}
	return os.RemoveAll(dir)
}

func stopPid(pidfile string) {
	pid := readPid(pidfile)
	if pid <= 1 {
		return
	}
	sig := syscall.SIGQUIT // PostgreSQL's immediate shutdown
	if filepath.Base(pidfile) == "pid" {
		sig = syscall.SIGTERM
	}
	_ = syscall.Kill(pid, sig)
	for i := 0; i < 100 && alive(pid) && exists(pidfile); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if exists(pidfile) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func readPid(pidfile string) int {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Reap removes the throwaway directories that a killed run left behind (its watchdog killed
// too, or the machine restarted): an owner process that is gone, or a kept (demo) cluster
// whose server no longer runs. A directory younger than a minute is left alone: its owner
// may still be writing its owner file.
func Reap() {
	for _, prefix := range []string{Prefix, RedisPrefix} {
		dirs, _ := filepath.Glob(filepath.Join(base(), prefix+"*"))
		for _, dir := range dirs {
			if stale(dir) {
				_ = Remove(dir)
			}
		}
	}
}

func stale(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < time.Minute {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "owner"))
	if err != nil {
		return true // never got as far as its owner file: a start killed early
	}
	owner := strings.TrimSpace(string(b))
	if owner == "keep" {
		pid := readPid(filepath.Join(dir, "data", "postmaster.pid"))
		return pid <= 1 || !alive(pid)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(owner, "pid "))
	return err != nil || pid <= 1 || !alive(pid)
}
