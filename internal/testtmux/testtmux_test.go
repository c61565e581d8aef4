package testtmux

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestCommandWaitsForThePrompt types a line while the previous command still runs: it must
// wait for the shell's next prompt, so that its echo follows that prompt and its output has
// lines of its own. Typed at once (as the terminal tests did), the line is echoed under the
// running command and its output lands after the prompt: "…-2$ rc=0".
func TestCommandWaitsForThePrompt(t *testing.T) {
	t.Parallel()
	s := Shell(t, 80, 20)
	// The second line comes while the first still runs: typing it takes milliseconds.
	s.Command("sleep 1")
	s.Command("echo rc=$?")
	screen := s.WaitDone()
	want := regexp.MustCompile(fmt.Sprintf(`(?m)^%[1]s-1\$ sleep 1\n%[1]s-2\$ echo rc=\$\?\nrc=0\n%[1]s-3\$ ?$`, s.marker))
	if !want.MatchString(screen) {
		t.Fatalf("the second line was not typed at its own prompt; want %s:\n%s", want, screen)
	}
}

// TestWaitForDumpsThePane: a condition that never comes fails the test with what it waited
// for and the pane.
func TestWaitForDumpsThePane(t *testing.T) {
	t.Parallel()
	s := Shell(t, 80, 20)
	s.Command("echo visible")
	s.WaitDone()
	ft := &fakeT{TB: t}
	s.t, s.timeout = ft, 200*time.Millisecond
	func() {
		defer func() { _ = recover() }() // fakeT.Fatalf stops the wait, as t.Fatalf would
		s.WaitFor("never", func(string) bool { return false })
	}()
	if !regexp.MustCompile(`(?s)^timed out after 200ms waiting for never; screen:\n.*\nvisible\n`).MatchString(ft.msg) {
		t.Fatalf("failure message:\n%s", ft.msg)
	}
}

// fakeT records a Fatalf and stops the caller there, as testing.T does.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
