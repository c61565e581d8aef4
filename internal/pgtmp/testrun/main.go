//go:build !windows

// Command testrun runs a command (make test's go test) with the servers the tests need: it
// resolves PostgreSQL and Redis once for the whole run (internal/pgtmp's order), starts a
// throwaway of each when needed, hands them to every package through OUTBOXCTL_TEST_DSN and
// OUTBOXCTL_TEST_REDIS_ADDR, and removes them when the command ends, on Ctrl-C, or when its
// own parent (make) dies; a SIGKILL of this process leaves the removal to their watchdogs.
//
//	go run ./internal/pgtmp/testrun -- go test ./... -count=1
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/outboxctl/outboxctl/internal/pgtmp"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testrun -- COMMAND [ARGS...]  (go run ./internal/pgtmp/testrun -- go test ./...)")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func say(format string, a ...any) { fmt.Fprintf(os.Stderr, "== "+format+"\n", a...) }

func run(args []string) int {
	ci := os.Getenv("CI") == "true"
	e := pgtmp.MachineEnv()
	pgtmp.Reap()

	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	env := os.Environ()

	r := pgtmp.Resolve(e, os.Getenv("OUTBOXCTL_TEST_DSN"))
	dsn := r.DSN
	switch r.Source {
	case pgtmp.FromThrowaway:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c, err := pgtmp.Start(ctx, pgtmp.Options{BinDir: r.BinDir, RunAs: r.RunAs})
		cancel()
		if err != nil {
			say("PostgreSQL: could not start a throwaway cluster from %s: %v", r.BinDir, err)
			if ci {
				return 1
			}
			say("the database tests skip (under CI=true this fails the run)")
			dsn = pgtmp.LocalDSN
			break
		}
		stops = append(stops, c.Stop)
		dsn = c.DSN
	case pgtmp.FromNone:
		if ci {
			say("CI=true: %s", r.Install)
			return 1
		}
		dsn = pgtmp.LocalDSN // unreachable: the tests skip, and no package tries a throwaway of its own
	}
	say("%s", r.Describe(dsn))
	env = append(env, "OUTBOXCTL_TEST_DSN="+dsn)

	rr := pgtmp.ResolveRedis(e, os.Getenv("OUTBOXCTL_TEST_REDIS_ADDR"))
	addr := rr.Addr
	switch rr.Source {
	case pgtmp.FromThrowaway:
		rd, err := pgtmp.StartRedis(rr.Binary)
		if err != nil {
			say("Redis: could not start a throwaway redis-server: %v", err)
			if ci {
				return 1
			}
			addr = pgtmp.LocalRedis
			break
		}
		stops = append(stops, rd.Stop)
		addr = rd.Addr
		say("Redis: a throwaway redis-server at %s (removed at the end)", addr)
	case pgtmp.FromNone:
		if ci {
			say("CI=true: %s", pgtmp.RedisInstallHint)
			return 1
		}
		say("Redis: none (%s)", pgtmp.RedisInstallHint)
		addr = pgtmp.LocalRedis
	default:
		say("Redis: %s", addr)
	}
	env = append(env, "OUTBOXCTL_TEST_REDIS_ADDR="+addr)
	return child(args, env)
}

// child runs the command in a process group of its own, passes it Ctrl-C and SIGTERM, and
// ends it when our parent dies (make killed): then the deferred stops still run.
func child(args, env []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		say("%v", err)
		return 127
	}
	// Killed with SIGKILL, we can pass nothing on: a watchdog in a session of its own ends the
	// command's process group (go test and every test binary it started) when we are gone.
	if r, w, err := os.Pipe(); err == nil {
		dog := exec.Command("/bin/sh", "-c", `read -r _; kill -TERM -"$1" 2>/dev/null && { sleep 3; kill -KILL -"$1" 2>/dev/null; }; exit 0`,
			"outboxctl-testrun-watchdog", strconv.Itoa(cmd.Process.Pid))
		dog.Stdin = r
		dog.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if dog.Start() == nil {
			defer func() { _ = w.Close(); _ = dog.Wait() }()
		}
		_ = r.Close()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	parent := os.Getppid()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	group := func(s syscall.Signal) { _ = syscall.Kill(-cmd.Process.Pid, s) }
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ee.ExitCode() < 0 {
					return 130
				}
				return ee.ExitCode()
			}
			if err != nil {
				return 1
			}
			return 0
		case s := <-sigs:
			group(s.(syscall.Signal))
		case <-tick.C:
			if os.Getppid() != parent {
				say("the parent process is gone: stopping the tests")
				group(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					group(syscall.SIGKILL)
					<-done
				}
				return 1
			}
		}
	}
}
