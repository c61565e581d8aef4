// Package exitcode is the only place an error becomes an exit code: what an outcome means
// (Meaning, said by cmd's error vocabulary, cmd/errors.go, or read from another package's
// error), the one table from a meaning to its number (Codes; docs/exit-codes.md documents
// them and the end-to-end tests check them), and the one Error: line printed for it (Print).
package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Meaning is why a command ended as it did.
type Meaning int

const (
	OK          Meaning = iota // success, including an empty result: the meaning of nil
	Runtime                    // it failed: database, Redis, I/O, a missing row
	Usage                      // the command line is wrong: fix it (with a hint)
	Declined                   // the operator said no at the prompt: nothing changed
	Threshold                  // a --fail-if-… threshold was crossed
	Warning                    // a verdict: the worst finding is a warning
	Critical                   // a verdict: a finding is critical
	Partial                    // fan-out: some contexts answered, some failed; a bulk repair: some shards failed; restore: rows left out
	Pending                    // a verdict: ran fine, the answer is "not yet"
	Interrupted                // SIGINT or SIGTERM
	Drift                      // a verdict: verify found replicas out of sync (--fail-on-drift)
	ReadOnly                   // the context does not let this command write (readonly, allow)
	NoRoom                     // refused: a repair's archive would not fit where it goes
)

// The exit codes.
const (
	ExitOK          = 0   // success, including an empty result
	ExitError       = 1   // runtime failure: database, Redis, I/O
	ExitUsage       = 2   // bad flags, arguments or names; a mutation without --yes off a TTY
	ExitThreshold   = 3   // a --fail-if-… threshold was crossed
	ExitWarn        = 4   // doctor: the worst finding is a warning
	ExitCritical    = 5   // doctor: at least one finding is critical
	ExitPartial     = 6   // fan-out: some contexts answered (rows printed), some failed; a bulk repair: some shards failed; restore: rows left out (left_out)
	ExitNoRoom      = 7   // refused: a repair's archive would not fit in the free space where it goes (nothing changed)
	ExitPending     = 8   // ran fine, the answer is "not yet" (--exit-status)
	ExitDrift       = 9   // verify --fail-on-drift: replicas out of sync with their sources
	ExitReadOnly    = 10  // the context does not let this command write (readonly: true, allow)
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

// Codes is the one table from a meaning to its exit code.
var Codes = map[Meaning]int{ //nolint:gochecknoglobals // constant table
	OK:          ExitOK,
	Runtime:     ExitError,
	Usage:       ExitUsage,
	Declined:    ExitUsage,
	Threshold:   ExitThreshold,
	Warning:     ExitWarn,
	Critical:    ExitCritical,
	Partial:     ExitPartial,
	Pending:     ExitPending,
	Interrupted: ExitInterrupted,
	Drift:       ExitDrift,
	ReadOnly:    ExitReadOnly,
	NoRoom:      ExitNoRoom,
}

// Said is an error that says what it means (cmd's cmdError): its meaning, its one line
// (Error, empty when the output already said everything) and, for a usage error, the
// command line to try.
type Said interface {
	error
	Meaning() Meaning
	TryLine() string
}

// usage is implemented by every error that means "fix your command line" (cmd's own, and
// the packages' that know their input came from the operator: config, db, enums).
type usage interface{ UsageError() bool }

// account is an error of another package that says its own account of what happened (a
// repair's settled COMMIT, internal/repair.Failure): a runtime failure, never reworded as
// an interrupt, as cmd's failuref's.
type account interface{ Account() bool }

// outcome is an account (internal/repair.Failure) that says more than a failure: a bulk
// repair a signal stopped, or one that did only part of its shards.
type outcome interface {
	Interrupted() bool
	Partial() bool
}

// isAccount reports whether err is an account.
func isAccount(err error) bool {
	var a account
	return errors.As(err, &a) && a.Account()
}

// Code maps an error to the process exit code.
func Code(ctx context.Context, err error) int { return Codes[Of(ctx, err)] }

// Of is what err means. A Said error says so itself, except that a usage error after a
// signal is the interrupt's doing; any other error is a runtime failure, or the interrupt's.
func Of(ctx context.Context, err error) Meaning {
	if err == nil {
		return OK
	}
	var s Said
	if errors.As(err, &s) && s.Meaning() != Usage {
		return s.Meaning()
	}
	var o outcome
	if errors.As(err, &o) && o.Interrupted() {
		return Interrupted
	}
	if errors.As(err, &o) && o.Partial() {
		return Partial
	}
	if isAccount(err) {
		return Runtime
	}
	// The context is cancelled only by SIGINT/SIGTERM: whatever error followed, the cause
	// was the interrupt.
	if errors.Is(ctx.Err(), context.Canceled) {
		return Interrupted
	}
	var u usage
	if errors.As(err, &u) && u.UsageError() {
		return Usage
	}
	return Runtime
}

// Print prints an error once, on w (stderr), as one line (plus a hint line for usage
// errors). secrets are what the invocation was given as secret (the DSNs' passwords,
// PGPASSWORD, REDISCLI_AUTH): hidden from its error, whatever the error's path, as a last
// guard.
func Print(ctx context.Context, w io.Writer, err error, commandPath string, secrets ...string) {
	if err == nil {
		return
	}
	var s Said
	if errors.As(err, &s) && s.Error() == "" {
		return
	}
	// A usage error, or a foreign one, after an interrupt is the interrupt's doing; a
	// command's own account of it ("interrupted after 7 messages") is worth more than the
	// generic word.
	own := s != nil && s.Meaning() != Usage || isAccount(err)
	if errors.Is(ctx.Err(), context.Canceled) && !own {
		fmt.Fprintln(w, "Error: interrupted")
		return
	}
	fmt.Fprintf(w, "Error: %s\n", OneLine(db.Redact(err.Error(), append(db.Secrets(err.Error()), secrets...)...)))
	switch {
	case s != nil && s.TryLine() != "":
		fmt.Fprintf(w, "Try: %s\n", OneLine(s.TryLine()))
	// A declined prompt already said what happened, and a --dsn that does not parse (a
	// db.Error) is said in full by its own hint: no usage line.
	case !own && !errors.As(err, new(*db.Error)) && Code(ctx, err) == ExitUsage && commandPath != "":
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", commandPath)
	}
}

// OneLine makes a message fit the one line it is promised: runs of white space (a
// handler's multi-line stderr) become one space, and any other control character, which
// could retitle or redraw the terminal, is shown escaped (render.Escape).
func OneLine(s string) string {
	return render.Escape(strings.Join(strings.Fields(s), " "))
}

// Outcome is a service's Said error: a meaning, its one line (empty when the output
// already said everything: the rows, the "context gone" lines) and, for a usage error, the
// command line to try.
type Outcome struct {
	Means Meaning
	Msg   string
	Try   string
}

func (o *Outcome) Error() string    { return o.Msg }
func (o *Outcome) Meaning() Meaning { return o.Means }
func (o *Outcome) TryLine() string  { return o.Try }
func (o *Outcome) UsageError() bool { return o.Means == Usage }

// Verdictf is a finished run's verdict, said in one line: a crossed --fail-if-… threshold
// (Threshold), "not yet" (Pending: --exit-status), replicas out of sync (Drift), the worst
// finding (Warning, Critical). The service that reads the answer says what it means.
func Verdictf(m Meaning, format string, args ...any) error {
	return &Outcome{Means: m, Msg: fmt.Sprintf(format, args...)}
}
