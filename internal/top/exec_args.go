package top

import "github.com/outboxctl/outboxctl/internal/textsafe"

// ExecArgs are the arguments an action's printed command line (command, extra appended)
// runs with in process: its words after "outboxctl", on the invocation's --dsn (dsn) when it
// gave one; false when the line is not an outboxctl command, which runs nothing.
func ExecArgs(command, dsn string, extra []string) ([]string, bool) {
	words, err := textsafe.Words(command)
	if err != nil || len(words) < 2 || words[0] != "outboxctl" {
		return nil, false
	}
	args := append(words[1:], extra...)
	if dsn != "" {
		args = append([]string{"--dsn", dsn}, args...)
	}
	return args, true
}

// ExecEnv is the environment an action's command runs in: getenv with colour off
// (NO_COLOR=1), as its output is drawn in top's pane.
func ExecEnv(getenv func(string) string) func(string) string {
	return func(name string) string {
		if name == "NO_COLOR" {
			return "1"
		}
		return getenv(name)
	}
}
