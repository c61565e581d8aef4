package cmd

import (
	"fmt"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// The error vocabulary of cmd: what a command's failure or verdict means, never which number
// the process exits with. internal/exitcode alone maps a meaning to its exit code (Codes), so a
// command cannot pick a number, and docs/exit-codes.md has one table to agree with. A verdict
// (a --fail-if-… threshold, "not yet", drift, the worst finding) is said by the service that
// reads the answer (exitcode.Verdictf).

// meaning is why a command ended as it did (exitcode.Meaning).
type meaning = exitcode.Meaning

const (
	meansOK          = exitcode.OK          // success, including an empty result: the meaning of nil
	meansRuntime     = exitcode.Runtime     // it failed: database, Redis, I/O, a missing row
	meansUsage       = exitcode.Usage       // the command line is wrong: fix it (with a hint)
	meansDeclined    = exitcode.Declined    // the operator said no at the prompt: nothing changed
	meansThreshold   = exitcode.Threshold   // a --fail-if-… threshold was crossed
	meansWarning     = exitcode.Warning     // a verdict: the worst finding is a warning
	meansCritical    = exitcode.Critical    // a verdict: a finding is critical
	meansPartial     = exitcode.Partial     // fan-out: some contexts answered, some failed; a bulk repair: some shards failed; restore: rows left out
	meansPending     = exitcode.Pending     // a verdict: ran fine, the answer is "not yet"
	meansInterrupted = exitcode.Interrupted // SIGINT or SIGTERM
	meansDrift       = exitcode.Drift       // a verdict: verify found replicas out of sync (--fail-on-drift)
	meansReadOnly    = exitcode.ReadOnly    // the context does not let this command write (readonly, allow)
	meansNoRoom      = exitcode.NoRoom      // refused: a repair's archive would not fit where it goes
)

// cmdError is every error cmd itself makes: a meaning, the one line said for it (empty when
// the output already said everything) and, for a usage error, the command line to try.
type cmdError struct {
	means meaning
	msg   string
	hint  string
}

func (e *cmdError) Error() string { return e.msg }

// Meaning and TryLine say what the error means and the command line to try
// (exitcode.Said).
func (e *cmdError) Meaning() meaning { return e.means }
func (e *cmdError) TryLine() string  { return e.hint }

// UsageError lets errors.As-style checks in other packages recognise usage errors.
func (e *cmdError) UsageError() bool { return e.means == meansUsage }

// usageErrorf is the operator's input, not a failure, with the command line to try.
func usageErrorf(hint, format string, args ...any) error {
	return &cmdError{means: meansUsage, msg: fmt.Sprintf(format, args...), hint: hint}
}

// noRoomf is a repair refused before it changed anything: its archive would not fit in the
// free space where it goes. The line names the command that points --archive elsewhere.
func noRoomf(format string, args ...any) error {
	return &cmdError{means: meansNoRoom, msg: fmt.Sprintf(format, args...)}
}

// failuref is a runtime failure that says its own account of what happened; unlike a plain
// error it is not reworded as "interrupted" after a signal (the account is worth more).
func failuref(format string, args ...any) error {
	return &cmdError{means: meansRuntime, msg: fmt.Sprintf(format, args...)}
}

// readOnlyf is a write refused by its context (readonly: true, or allow without it), said
// in one line: the command line is fine, the context forbids it.
func readOnlyf(format string, args ...any) error {
	return &cmdError{means: meansReadOnly, msg: fmt.Sprintf(format, args...)}
}

// interruptedf is a signal that stopped the command, said with the command's own account
// ("interrupted after 7 messages").
func interruptedf(format string, args ...any) error {
	return &cmdError{means: meansInterrupted, msg: fmt.Sprintf(format, args...)}
}

// declined is a declined prompt: the command line was fine, so no hint follows it.
func declined() error { return &cmdError{means: meansDeclined, msg: "cancelled: nothing was changed"} }

// silent is an outcome whose output already said everything (the rows, the "context gone"
// lines): it exits as m and prints no Error: line.
func silent(m meaning) error { return &cmdError{means: m} }
