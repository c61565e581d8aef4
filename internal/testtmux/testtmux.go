// Package testtmux runs programs on a real terminal (tmux) for tests and waits for what the
// screen shows, never for time. It is for tests only.
//
// Keys sent before a program reads them still arrive, but the terminal echoes them where
// the cursor happens to be: typed before a shell prints its prompt, a command's echo lands
// above the prompt and its output after it ("$ rc=0"), so a screen assertion fails about
// one run in ten on a loaded machine. A Shell's prompt therefore carries a token and a
// number, and Command types a line only once the shell has printed the prompt that reads
// it.
package testtmux

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Timeout bounds every wait: far above what a loaded machine needs, so that reaching it
// means the condition never came.
const Timeout = 30 * time.Second

// Session is a tmux server with one pane of a fixed size, killed when the test ends.
type Session struct {
	t    testing.TB
	bin  string
	sock string
	// marker starts every prompt of a Shell ("" for a pane that runs a program); prompts is
	// the number of the prompt that reads the next command.
	marker  string
	prompts int
	timeout time.Duration // Timeout; shorter in this package's own tests
}

// Require skips a real-terminal test, or fails it under CI=true, when there is no tmux, and
// skips it under -short (make test/race): make test runs every real-terminal test, and
// under the race detector they would only repeat it (the models they drive are raced by
// their own packages' tests), at a third of the race pass's time in cmd. A test calls it
// first, before it seeds anything: the race pass spent ~70 s seeding for tests that then
// skipped at Start.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("a real-terminal test: make test runs it (-short, as make test/race runs, skips it)")
	}
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	return bin
}

// Start runs argv in a detached pane of width × height columns, after Require.
func Start(t testing.TB, width, height int, argv ...string) *Session {
	t.Helper()
	bin := Require(t)
	s := &Session{t: t, bin: bin, sock: filepath.Join(t.TempDir(), "sock"), timeout: Timeout}
	s.Tmux(append([]string{"new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height)}, argv...)...)
	t.Cleanup(func() { _ = exec.Command(bin, "-S", s.sock, "kill-server").Run() })
	return s
}

// Shell starts an interactive sh (with env, NAME=value, added) and waits for its first
// prompt. The prompt is "READY-<token>-<n>$ ": sh expands PS1 each time it prints it, and
// the arithmetic counts the prompts, so prompt n shows on the screen exactly when the
// shell is ready to read the n-th line.
func Shell(t testing.TB, width, height int, env ...string) *Session {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	marker := "READY-" + hex.EncodeToString(b[:])
	// ENV empty: an interactive sh would source the file it names, which could set PS1.
	argv := append([]string{"env", "ENV=", "PS1=" + marker + "-$((outboxctl_prompt=outboxctl_prompt+1))$ "}, env...)
	s := Start(t, width, height, append(argv, "sh")...)
	s.marker, s.prompts = marker, 1
	s.waitPrompt()
	return s
}

// Tmux runs a tmux command against the session's server and returns its output.
func (s *Session) Tmux(args ...string) string {
	s.t.Helper()
	c := exec.Command(s.bin, append([]string{"-S", s.sock}, args...)...)
	c.Env = append(os.Environ(), "TMUX=") // a test run inside tmux starts a server of its own
	out, err := c.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Screen is the pane and its last 200 lines of history, wrapped lines joined (-J): a line
// too wide for the terminal shows as one long line instead of passing as two.
func (s *Session) Screen() string { return s.Tmux("capture-pane", "-p", "-J", "-S", "-200") }

// WaitFor polls the screen until ok holds and returns it; after Timeout the test fails
// with what it waited for and the last screen.
func (s *Session) WaitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	var last string
	for deadline := time.Now().Add(s.timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if last = s.Screen(); ok(last) {
			return last
		}
	}
	s.t.Fatalf("timed out after %s waiting for %s; screen:\n%s", s.timeout, what, last)
	return ""
}

// Wait waits until the screen matches re.
func (s *Session) Wait(re *regexp.Regexp) string {
	s.t.Helper()
	return s.WaitFor(re.String(), re.MatchString)
}

// Keys sends keys by name ("q", "Enter", "C-c") to whatever reads the pane: call it once
// the program shows it is reading (its first frame, its question).
func (s *Session) Keys(keys ...string) {
	s.t.Helper()
	s.Tmux(append([]string{"send-keys"}, keys...)...)
}

// Type types text literally, then Enter, for a program that has shown it is reading (a
// confirmation prompt, say); Command types the shell's lines.
func (s *Session) Type(text string) {
	s.t.Helper()
	s.Tmux("send-keys", "-l", text)
	s.Keys("Enter")
}

// Command waits until the shell prints the prompt that reads the next line, then types
// line and Enter. Two Commands in a row run one after the other.
func (s *Session) Command(line string) {
	s.t.Helper()
	if s.marker == "" {
		s.t.Fatal("testtmux: Command needs a Shell")
	}
	s.waitPrompt()
	s.Type(line)
	s.prompts++
}

// WaitDone waits until the last Command has ended (the shell printed its next prompt) and
// returns the screen.
func (s *Session) WaitDone() string {
	s.t.Helper()
	return s.waitPrompt()
}

func (s *Session) waitPrompt() string {
	s.t.Helper()
	// Without the space that follows it, which capture-pane may trim at the end of a line;
	// "-7$" is not in "-17$": the token and the dash before the number make it unique.
	prompt := fmt.Sprintf("%s-%d$", s.marker, s.prompts)
	return s.WaitFor(fmt.Sprintf("prompt %q", prompt), func(screen string) bool { return strings.Contains(screen, prompt) })
}
