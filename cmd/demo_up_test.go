package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/pgtmp"
	"github.com/outboxctl/outboxctl/internal/render"
)

// demoCLI runs outboxctl with only the environment given (and PATH).
func demoCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := render.Test()
	io.Getenv = func(k string) string {
		if k == "PATH" {
			return os.Getenv(k)
		}
		return env[k]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := cmd.Main(ctx, args, io)
	return code, out.String(), errOut.String()
}

// TestDemoUpAndDown: with OUTBOXCTL_THROWAWAY=1, demo up starts a throwaway cluster and
// prints the export line for it; a second demo up finds the same one; demo seed runs against
// it; demo down stops it and removes its directory; a second demo down has nothing to do.
func TestDemoUpAndDown(t *testing.T) {
	e := pgtmp.MachineEnv()
	if pgtmp.FindBinaries(e) == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL server binaries on this machine")
		}
		t.Skip(pgtmp.InstallHint(e, false))
	}
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), pgtmp.ForceEnv: "1"}
	code, out, errOut := demoCLI(t, env, "demo", "up")
	if code != 0 || !strings.HasPrefix(out, "export OUTBOXCTL_DSN='postgres://postgres@127.0.0.1:") || !strings.Contains(errOut, "started a throwaway PostgreSQL") {
		t.Fatalf("demo up: exit %d\n%s%s", code, out, errOut)
	}
	dsn := strings.Trim(strings.TrimPrefix(strings.TrimSpace(out), "export OUTBOXCTL_DSN="), "'")
	t.Cleanup(func() { demoCLI(t, env, "demo", "down") })
	dir := strings.Fields(strings.SplitN(errOut, " in ", 2)[1])[0]
	dir = strings.TrimSuffix(dir, ";")
	if !strings.HasPrefix(filepath.Base(dir), pgtmp.Prefix) {
		t.Fatalf("no cluster directory in %q", errOut)
	}
	code, again, errOut := demoCLI(t, env, "demo", "up")
	if code != 0 || again != out || !strings.Contains(errOut, "is up already") {
		t.Fatalf("second demo up: exit %d\n%s%s", code, again, errOut)
	}
	withDSN := map[string]string{"XDG_STATE_HOME": env["XDG_STATE_HOME"], "OUTBOXCTL_DSN": dsn}
	if code, _, errOut := demoCLI(t, withDSN, "demo", "seed", "--rows", "1000", "--shards", "100", "--yes"); code != 0 {
		t.Fatalf("demo seed against the throwaway: exit %d\n%s", code, errOut)
	}
	// The DSN set wins: nothing started, nothing on stdout.
	if code, out, errOut := demoCLI(t, withDSN, "demo", "up"); code != 0 || out != "" || !strings.Contains(errOut, "nothing started") {
		t.Fatalf("demo up with OUTBOXCTL_DSN set: exit %d\n%q %s", code, out, errOut)
	}
	code, _, errOut = demoCLI(t, env, "demo", "down")
	if code != 0 || !strings.Contains(errOut, "stopped and removed") {
		t.Fatalf("demo down: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("demo down left %s: %v", dir, err)
	}
	if code, _, errOut := demoCLI(t, env, "demo", "down"); code != 0 || !strings.Contains(errOut, "no demo cluster is running") {
		t.Fatalf("second demo down: exit %d\n%s", code, errOut)
	}
}

// TestDemoUpWithoutBinaries: nothing answers and no binaries: demo up fails (exit 1) with
// the one line saying what to install, and prints no export line.
func TestDemoUpWithoutBinaries(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), pgtmp.ForceEnv: "1", "OUTBOXCTL_PG_BIN": t.TempDir()}
	code, out, errOut := demoCLI(t, env, "demo", "up")
	if code != 1 || out != "" || !strings.Contains(errOut, "apt-get install postgresql") || !strings.Contains(errOut, "--print-sql") {
		t.Fatalf("exit %d\n%q\n%s", code, out, errOut)
	}
}
