package cmd_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestShardsWatchInTmux runs `shards --watch 1s` on a real terminal (tmux) against a test
// schema: a frame with the shard and when it was taken, then, after rows are added, the
// change since the last frame; q quits with exit status 0 and the main screen comes back.
func TestShardsWatchInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 7})
	dir := t.TempDir()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary runs as outboxctl under that name (testscript.Main in script_test.go).
	if err := os.Symlink(bin, filepath.Join(dir, "outboxctl")); err != nil {
		t.Fatal(err)
	}
	sock, rc := filepath.Join(dir, "sock"), filepath.Join(dir, "rc")
	tm := func(args ...string) string {
		c := exec.Command(tmux, append([]string{"-S", sock}, args...)...)
		c.Env = append(os.Environ(), "TMUX=")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("printf 'main screen\\n'; NO_COLOR=1 %q --dsn %q --schema %q shards --watch 1s; echo rc=$? > %q; sleep 60",
		filepath.Join(dir, "outboxctl"), testdb.DSN(), schema, rc)
	tm("new-session", "-d", "-x", "200", "-y", "20", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

	screen := waitScreen(t, func() (string, bool) {
		s := tm("capture-pane", "-p")
		return s, strings.Contains(s, "ORGANIZATION_SCOPE")
	})
	if !strings.Contains(screen, "Every 1s: shards") || !strings.Contains(screen, "taken 20") || strings.Contains(screen, "main screen") {
		t.Fatalf("no frame on the alternate screen saying when it was taken:\n%s", screen)
	}
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 8},
		testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 9})
	// The shard's row: scope, shard, depth 3, Δ +2 since the last frame, then the rate.
	waitScreen(t, func() (string, bool) {
		s := tm("capture-pane", "-p")
		for _, line := range strings.Split(s, "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[0] == "ORGANIZATION_SCOPE" && f[1] == "42" && f[2] == "3" && f[3] == "+2" {
				return s, true
			}
		}
		return s, false
	})
	tm("send-keys", "q")
	got := waitScreen(t, func() (string, bool) {
		b, _ := os.ReadFile(rc)
		return string(b), len(b) > 0
	})
	if got != "rc=0\n" {
		t.Fatalf("exit status %q, want rc=0", got)
	}
	if screen := tm("capture-pane", "-p"); !strings.Contains(screen, "main screen") || strings.Contains(screen, "Every 1s") {
		t.Fatalf("main screen not restored:\n%s", screen)
	}
}

func waitScreen(t *testing.T, check func() (string, bool)) string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s, ok := check()
		if ok {
			return s
		}
		last = s
	}
	t.Fatalf("timed out; last:\n%s", last)
	return ""
}
