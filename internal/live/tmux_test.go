package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

// childEnv makes the test binary a watched program instead of running the tests: the
// real-terminal test starts it inside tmux.
const childEnv = "OUTBOXCTL_LIVE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(watchChild())
	}
	os.Exit(m.Run())
}

// watchChild watches a counter on the real terminal until q, like a --watch command.
func watchChild() int {
	s := render.System()
	keys, restore := s.KeyInput()
	defer restore()
	n := 0
	w := &Watch{Out: s.Out, TTY: s.OutTTY, Keys: keys, Interval: 200 * time.Millisecond, Title: "live child", Now: time.Now, After: time.After}
	err := w.Run(context.Background(), func(_ context.Context, out io.Writer) error {
		n++
		_, err := fmt.Fprintf(out, "frame %d\n", n)
		return err
	})
	if err != nil {
		return 1
	}
	return 0
}

// TestWatchInTmux runs a watch on a real terminal (tmux): it draws on the alternate screen
// and redraws in place, q quits with exit status 0, and the main screen comes back.
func TestWatchInTmux(t *testing.T) {
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	sock, rc := filepath.Join(dir, "sock"), filepath.Join(dir, "rc")
	run := func(args ...string) string {
		cmd := exec.Command(tmux, append([]string{"-S", sock}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("printf 'main screen\\n'; %s=1 %q; echo rc=$? > %q; sleep 60", childEnv, os.Args[0], rc)
	run("new-session", "-d", "-x", "100", "-y", "20", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

	screen := waitFor(t, func() (string, bool) {
		s := run("capture-pane", "-p")
		return s, strings.Contains(s, "frame 3")
	})
	if !strings.Contains(screen, "Every 200ms: live child") || strings.Contains(screen, "main screen") ||
		strings.Contains(screen, "frame 2") {
		t.Fatalf("not one frame redrawn in place on the alternate screen:\n%s", screen)
	}
	run("send-keys", "q")
	got := waitFor(t, func() (string, bool) {
		b, _ := os.ReadFile(rc)
		return string(b), len(b) > 0
	})
	if got != "rc=0\n" {
		t.Fatalf("exit status %q, want rc=0", got)
	}
	screen = run("capture-pane", "-p")
	if !strings.Contains(screen, "main screen") || strings.Contains(screen, "live child") {
		t.Fatalf("main screen not restored:\n%s", screen)
	}
}

func waitFor(t *testing.T, check func() (string, bool)) string {
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
