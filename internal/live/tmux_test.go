package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testtmux"
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
	testtmux.Require(t)
	// The exit status goes to the screen after the child's last byte: once it shows, the
	// child's leaving the alternate screen has been drawn too.
	script := fmt.Sprintf("printf 'main screen\\n'; %s=1 %q; echo rc=$?; sleep 60", childEnv, os.Args[0])
	s := testtmux.Start(t, 100, 20, "sh", "-c", script)
	screen := s.WaitFor("frame 3", func(screen string) bool { return strings.Contains(screen, "frame 3") })
	if !strings.Contains(screen, "Every 200ms: live child") || strings.Contains(screen, "main screen") ||
		strings.Contains(screen, "frame 2") {
		t.Fatalf("not one frame redrawn in place on the alternate screen:\n%s", screen)
	}
	s.Keys("q") // the child reads raw keys from before its first frame
	screen = s.Wait(regexp.MustCompile(`(?m)^rc=[0-9]+$`))
	if !strings.Contains(screen, "main screen\nrc=0\n") || strings.Contains(screen, "live child") {
		t.Fatalf("not exit 0 with the main screen restored:\n%s", screen)
	}
}
