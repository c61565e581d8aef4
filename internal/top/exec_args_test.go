package top

import (
	"slices"
	"testing"
)

// TestExecArgs: an outboxctl line runs its words, extra appended, on the invocation's --dsn;
// anything else runs nothing; colour is off.
func TestExecArgs(t *testing.T) {
	t.Parallel()
	args, ok := ExecArgs("outboxctl --context us reschedule organization 42", "postgres://x", []string{"--yes"})
	if want := []string{"--dsn", "postgres://x", "--context", "us", "reschedule", "organization", "42", "--yes"}; !ok || !slices.Equal(args, want) {
		t.Errorf("args %q, %v; want %q", args, ok, want)
	}
	for _, bad := range []string{"rm -rf /", "outboxctl", "outboxctl 'unterminated"} {
		if _, ok := ExecArgs(bad, "", nil); ok {
			t.Errorf("%q ran", bad)
		}
	}
	env := ExecEnv(func(name string) string { return "v-" + name })
	if env("NO_COLOR") != "1" || env("PGHOST") != "v-PGHOST" {
		t.Errorf("env: %q %q", env("NO_COLOR"), env("PGHOST"))
	}
}
