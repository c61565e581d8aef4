//go:build !windows

package pgtmp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// RedisPrefix starts the name of every throwaway Redis directory.
const RedisPrefix = "outboxctl-redis-"

// Redis is a running throwaway redis-server, without persistence, on a free port of
// 127.0.0.1; it is stopped and its directory removed when its owner ends, however it ends.
type Redis struct {
	Dir   string
	Addr  string
	leash *leash
}

// StartRedis starts binary (RedisResolution.Binary) and waits until it answers PING.
func StartRedis(binary string) (*Redis, error) {
	Reap()
	dir, err := os.MkdirTemp(base(), RedisPrefix)
	if err != nil {
		return nil, err
	}
	r := &Redis{Dir: dir}
	pidfile := filepath.Join(dir, "pid")
	if r.leash, err = watch(pidfile, dir, "TERM"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		r.Stop()
		return nil, err
	}
	var last error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			r.Stop()
			return nil, err
		}
		cmd := exec.Command(binary, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no",
			"--dir", dir, "--logfile", filepath.Join(dir, "log"), "--daemonize", "no")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			r.Stop()
			return nil, fmt.Errorf("starting redis-server: %w", err)
		}
		// The watchdog reads the pid from here; redis-server only writes a pid file when it
		// daemonizes.
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			_ = cmd.Process.Kill()
			r.Stop()
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		addr := "127.0.0.1:" + strconv.Itoa(port)
		if err := waitRedis(addr, exited); err != nil {
			last = fmt.Errorf("%v: %s", err, lastLines(readLog(dir), 3))
			_ = cmd.Process.Kill()
			continue
		}
		r.Addr = addr
		return r, nil
	}
	r.Stop()
	return nil, last
}

// waitRedis waits until addr answers PING, for 10 s, or until the server exited.
func waitRedis(addr string, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if answersRedis(addr) {
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server did not answer at %s within 10 s", addr)
}

func readLog(dir string) []byte {
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	return b
}

// Stop stops the server and removes its directory, and waits until both are gone.
func (r *Redis) Stop() {
	if r != nil && r.leash != nil {
		r.leash.release()
	}
}
