package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The flags every mutating command shares are registered here, once, so their names and help
// texts cannot drift between commands.

// addYesFlag registers --yes: the confirmation a mutation needs off a terminal.
func addYesFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "yes", false, "do not ask for confirmation")
}

// addReasonFlag registers --reason: why, written into the SQL as a comment and the audit line.
// Without one the audit line and pg_stat_activity cannot say why a change was made, so every
// mutation's help says the same: strongly recommended.
func addReasonFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "reason", "", "why: written into the SQL as a comment and into the audit line (strongly recommended)")
}

// addDryRunFlag registers --dry-run: print the plan and stop.
func addDryRunFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "dry-run", false, "print the plan and stop")
}

// addArchiveFlag registers --archive: where a deleting command appends its archive.
func addArchiveFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "archive", "", "JSONL file to append this operation's archive to (default: a file of its own, $XDG_STATE_HOME/outboxctl/archive-OPERATION.jsonl)")
}

// enumAnnotation marks a string flag whose value must be one of a fixed list; enumHint is
// the example the usage error suggests.
const (
	enumAnnotation = "outboxctl_enum"
	enumHint       = "outboxctl_enum_hint"
)

// addEnumFlag registers a string flag that takes one of values (the first is the default),
// with shell completion; checkEnumFlags, run before every command, refuses anything else.
func addEnumFlag(c *cobra.Command, p *string, name, help, hint string, values ...string) {
	c.Flags().StringVar(p, name, values[0], help)
	_ = c.Flags().SetAnnotation(name, enumAnnotation, values)
	_ = c.Flags().SetAnnotation(name, enumHint, []string{hint})
	_ = c.RegisterFlagCompletionFunc(name, fixedCompletion(values...))
}

// checkEnumFlags checks every enum flag of c (declared with addEnumFlag).
func checkEnumFlags(c *cobra.Command) error {
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		values, ok := f.Annotations[enumAnnotation]
		if !ok || err != nil || slices.Contains(values, f.Value.String()) {
			return
		}
		var hint string
		if h := f.Annotations[enumHint]; len(h) > 0 {
			hint = h[0]
		}
		err = usageErrorf(hint, "invalid `--%s` %q: valid values are %s", f.Name, f.Value.String(), oneOf(values))
	})
	return err
}

// oneOf lists values as prose: "a, b and c".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return fmt.Sprintf("%s and %s", strings.Join(values[:len(values)-1], ", "), values[len(values)-1])
}

// nonNegativeID parses a shard, object, message or row id given on the command line. Sentry's
// ids are never negative (killswitch refuses them too), so "-42" is a typo, refused before
// anything connects; hint is the command line the error suggests.
func nonNegativeID(what, s, hint string) (int64, error) {
	n, err := idArg(what, s, hint)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, usageErrorf(hint, "invalid %s %q: want a non-negative integer id", what, s)
	}
	return n, nil
}

// durationValue is the type of every duration flag of the tool (timeouts, --sample,
// --handler-timeout, --watch, doctor's thresholds): a Go duration that is never negative.
// pflag's own duration type takes "-5s", and each command checking its flags by hand left
// some unchecked (backfill status --sample -5s ran), so the refusal lives in the type.
type durationValue struct {
	p             *time.Duration
	name, example string
}

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration: write one such as --%s %s", d.name, d.example)
	}
	if v < 0 {
		return fmt.Errorf("a duration must not be negative: write one such as --%s %s", d.name, d.example)
	}
	*d.p = v
	return nil
}

func (d *durationValue) Type() string   { return "duration" }
func (d *durationValue) String() string { return d.p.String() }

// addDurationFlag registers a duration flag (see durationValue); example is a value the
// error suggests ("30s").
func addDurationFlag(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, example, help string) *pflag.Flag {
	*p = def
	f := fs.VarPF(&durationValue{p: p, name: name, example: example}, name, "", help)
	if def == 0 {
		// pflag hides a zero default from the help only for its own duration type, as "0s";
		// for another type it must read "0".
		f.DefValue = "0"
	}
	return f
}

// addSizeFlag registers a --max-…-bytes cap (byteSize) with its default.
func addSizeFlag(fs *pflag.FlagSet, p *byteSize, name string, def int64, help string) {
	*p = byteSize(def)
	fs.Var(p, name, help)
}
