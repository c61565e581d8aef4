package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Exit codes. This file is the only place errors become exit codes; docs/exit-codes.md
// documents them and the end-to-end tests check them.
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

// exitCodes is the one table from a meaning (cmd/errors.go) to its exit code.
var exitCodes = map[meaning]int{ //nolint:gochecknoglobals // constant table
	meansOK:          ExitOK,
	meansRuntime:     ExitError,
	meansUsage:       ExitUsage,
	meansDeclined:    ExitUsage,
	meansThreshold:   ExitThreshold,
	meansWarning:     ExitWarn,
	meansCritical:    ExitCritical,
	meansPartial:     ExitPartial,
	meansPending:     ExitPending,
	meansInterrupted: ExitInterrupted,
	meansDrift:       ExitDrift,
	meansReadOnly:    ExitReadOnly,
	meansNoRoom:      ExitNoRoom,
}

// usage is implemented by every error that means "fix your command line" (cmd's own, and
// the packages' that know their input came from the operator: config, db, enums).
type usage interface{ UsageError() bool }

// account is an error of another package that says its own account of what happened (a
// repair's settled COMMIT, internal/repair.Failure): a runtime failure, never reworded as
// an interrupt, as failuref's.
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

// exitCode maps an error to the process exit code.
func exitCode(ctx context.Context, err error) int { return exitCodes[meaningOf(ctx, err)] }

// meaningOf is what err means. A cmdError says so itself, except that a usage error after a
// signal is the interrupt's doing; any other error is a runtime failure, or the interrupt's.
func meaningOf(ctx context.Context, err error) meaning {
	if err == nil {
		return meansOK
	}
	var ce *cmdError
	if errors.As(err, &ce) && ce.means != meansUsage {
		return ce.means
	}
	var o outcome
	if errors.As(err, &o) && o.Interrupted() {
		return meansInterrupted
	}
	if errors.As(err, &o) && o.Partial() {
		return meansPartial
	}
	if isAccount(err) {
		return meansRuntime
	}
	// The context is cancelled only by SIGINT/SIGTERM: whatever error followed, the cause
	// was the interrupt.
	if errors.Is(ctx.Err(), context.Canceled) {
		return meansInterrupted
	}
	var u usage
	if errors.As(err, &u) && u.UsageError() {
		return meansUsage
	}
	return meansRuntime
}

// asUsage marks err as the operator's input (exit 2, "Run … --help"). Cobra's own argument,
// flag and command-name errors are plain errors: they are wrapped where cobra returns them
// (the flag error func, every Args validator, the flag-group check, an unknown command),
// so no message is ever matched.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	var u usage
	if errors.As(err, &u) && u.UsageError() {
		return err
	}
	return &cmdError{means: meansUsage, msg: err.Error()}
}

// wrapCobraErrors makes every command's argument check and flag check return usage errors.
func wrapCobraErrors(c *cobra.Command) {
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if arg, ok := negativeNumber(err); ok {
			return usageErrorf(firstExample(c), "invalid id %q: want a non-negative integer id", arg)
		}
		// A refused enum word is said in the flag's own words, not pflag's wrapper.
		if ee := (*enumError)(nil); errors.As(err, &ee) {
			return usageErrorf(enumHint(c, ee.example), "%s", ee.Error())
		}
		return usageErrorf(c.CommandPath()+" --help", "%s", err.Error())
	})
	walk(c, func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error { return asUsage(args(c, a)) }
		}
	})
}

// negativeNumber reports whether err is pflag's refusal of an argument such as "-5": pflag
// reads it as the shorthand flags -5, so `inspect shard organization -5` said "unknown
// shorthand flag: '5'". No outboxctl flag is a digit and every number argument is an id,
// which is never negative: the error says so, as the other negative ids do (nonNegativeID).
func negativeNumber(err error) (string, bool) {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return "", false
	}
	digits := ne.GetSpecifiedShortnames() // "5" of -5: the argument after its dash
	if _, perr := strconv.ParseUint(digits, 10, 64); perr != nil {
		return "", false
	}
	return "-" + digits, true
}

// firstExample is the first command line of c's examples (the hint of a bad argument), or
// its --help when it has none.
func firstExample(c *cobra.Command) string {
	for _, l := range strings.Split(c.Example, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "outboxctl ") {
			return l
		}
	}
	return c.CommandPath() + " --help"
}

// walk calls fn on c and every command below it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// commandLineError reports, after cobra returned err, whether the command line named no
// command: cobra's Find fails only then (an unknown command under the root), and returns
// before anything runs.
func commandLineError(root *cobra.Command, args []string, err error) error {
	if err == nil {
		return nil
	}
	if _, _, ferr := root.Find(args); ferr != nil {
		return asUsage(err)
	}
	return err
}

// printError prints an error once, on stderr, as one line (plus a hint line for usage errors).
// secrets are what the invocation was given as secret (the DSNs' passwords, PGPASSWORD,
// REDISCLI_AUTH): hidden from its error, whatever the error's path, as a last guard.
func printError(ctx context.Context, io *render.Streams, err error, commandPath string, secrets ...string) {
	if err == nil {
		return
	}
	var ce *cmdError
	if errors.As(err, &ce) && ce.msg == "" {
		return
	}
	// A usage error, or a foreign one, after an interrupt is the interrupt's doing; a
	// command's own account of it ("interrupted after 7 messages") is worth more than the
	// generic word.
	own := ce != nil && ce.means != meansUsage || isAccount(err)
	if errors.Is(ctx.Err(), context.Canceled) && !own {
		fmt.Fprintln(io.Err, "Error: interrupted")
		return
	}
	fmt.Fprintf(io.Err, "Error: %s\n", oneLine(db.Redact(err.Error(), append(db.Secrets(err.Error()), secrets...)...)))
	switch {
	case ce != nil && ce.hint != "":
		fmt.Fprintf(io.Err, "Try: %s\n", oneLine(ce.hint))
	// A declined prompt already said what happened, and a --dsn that does not parse (a
	// db.Error) is said in full by its own hint: no usage line.
	case !own && !errors.As(err, new(*db.Error)) && exitCode(ctx, err) == ExitUsage && commandPath != "":
		fmt.Fprintf(io.Err, "Run '%s --help' for usage.\n", commandPath)
	}
}

// oneLine makes a message fit the one line it is promised: runs of white space (a
// handler's multi-line stderr) become one space, and any other control character, which
// could retitle or redraw the terminal, is shown escaped (render.Escape).
func oneLine(s string) string {
	return render.Escape(strings.Join(strings.Fields(s), " "))
}
