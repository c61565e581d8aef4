package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Exit codes: internal/exitcode is the only place errors become exit codes (exitcode.Codes);
// docs/exit-codes.md documents them and the end-to-end tests check them. These are its
// numbers under cmd's names, for the tests that check a run's exit.
const (
	ExitOK          = exitcode.ExitOK
	ExitError       = exitcode.ExitError
	ExitUsage       = exitcode.ExitUsage
	ExitThreshold   = exitcode.ExitThreshold
	ExitWarn        = exitcode.ExitWarn
	ExitCritical    = exitcode.ExitCritical
	ExitPartial     = exitcode.ExitPartial
	ExitNoRoom      = exitcode.ExitNoRoom
	ExitPending     = exitcode.ExitPending
	ExitDrift       = exitcode.ExitDrift
	ExitReadOnly    = exitcode.ExitReadOnly
	ExitInterrupted = exitcode.ExitInterrupted
)

// exitCodes is the one table from a meaning (cmd/errors.go) to its exit code.
var exitCodes = exitcode.Codes //nolint:gochecknoglobals // the constant table

// usage is implemented by every error that means "fix your command line" (cmd's own, and
// the packages' that know their input came from the operator: config, db, enums).
type usage interface{ UsageError() bool }

// exitCode maps an error to the process exit code.
func exitCode(ctx context.Context, err error) int { return exitcode.Code(ctx, err) }

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
		if arg, ok := cmdline.NegativeNumber(err); ok {
			return usageErrorf(cmdline.FirstExample(c.Example, c.CommandPath()), "invalid id %q: want a non-negative integer id", arg)
		}
		// A refused enum word is said in the flag's own words, not pflag's wrapper.
		if ee := (*cmdline.EnumError)(nil); errors.As(err, &ee) {
			return usageErrorf(enumHint(c, ee.Example), "%s", ee.Error())
		}
		return usageErrorf(c.CommandPath()+" --help", "%s", err.Error())
	})
	walk(c, func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error { return asUsage(args(c, a)) }
		}
	})
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

// printError prints an error once, on stderr, as one line (plus a hint line for usage
// errors), its secrets hidden (exitcode.Print).
func printError(ctx context.Context, io *render.Streams, err error, commandPath string, secrets ...string) {
	exitcode.Print(ctx, io.Err, err, commandPath, secrets...)
}

// oneLine makes a message fit the one line it is promised (exitcode.OneLine).
func oneLine(s string) string { return exitcode.OneLine(s) }
