package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/cmdline"
)

// The flags every mutating command shares are registered here, once, so their names and help
// texts cannot drift between commands.

// addYesFlag registers --yes: the confirmation a mutation needs off a terminal.
func addYesFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "yes", false, "do not ask for confirmation")
}

// addMutationFlags registers --yes and --dry-run (into a.dryRun: confirm prints the plan
// and stops) for a mutation whose plan is its confirmation.
func addMutationFlags(a *app, fs *pflag.FlagSet, yes *bool) {
	addYesFlag(fs, yes)
	addDryRunFlag(fs, &a.dryRun)
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
	fs.StringVar(p, "archive", "", "JSONL file to append this operation's archive to, zstd-compressed when its name ends in .zst (default: a file of its own, $XDG_STATE_HOME/outboxctl/archive-OPERATION.jsonl.zst)")
}

// enumFlag declares an enum flag: its name (and shorthand), help, the valid use its hint
// shows, its words and, for a flag with a parser of its own (aliases, its own message),
// that parser; without one a word outside words is refused as
// "invalid `--NAME` "x": valid values are a, b and c".
type enumFlag struct {
	name, short, help, example string
	words                      []string
	parse                      func(string) error
}

// addEnumFlag registers f on fs (a command's flags or the root's persistent ones, c their
// command) storing its word in p, def until the flag is given.
func addEnumFlag(c *cobra.Command, fs *pflag.FlagSet, p *string, def string, f enumFlag) {
	*p = def
	parse := f.parse
	if parse == nil {
		parse = func(s string) error {
			if !slices.Contains(f.words, s) {
				return fmt.Errorf("invalid `--%s` %q: valid values are %s", f.name, s, oneOf(f.words))
			}
			return nil
		}
	}
	addEnumValue(c, fs, f, "string", func() string { return *p }, func(s string) error {
		if err := parse(s); err != nil {
			return err
		}
		*p = s
		return nil
	})
}

// addEnumValue registers an enum flag (cmdline.Enum: refused as parsed) stored by set, read back by get, whose help calls its
// type typ (a flag storing a typed value: --time).
func addEnumValue(c *cobra.Command, fs *pflag.FlagSet, f enumFlag, typ string, get func() string, set func(string) error) {
	fs.VarP(&cmdline.Enum{Words: f.words, Typ: typ, Example: f.example, Get: get, Put: set}, f.name, f.short, f.help)
	_ = c.RegisterFlagCompletionFunc(f.name, fixedCompletion(f.words...))
}

// enumHint is the command line to try after a refused enum word: the command and the
// arguments typed before the flag, when they are complete (else the command's first
// example), with the flag's valid use.
func enumHint(c *cobra.Command, example string) string {
	line := c.CommandPath()
	if args := c.Flags().Args(); c.ValidateArgs(args) == nil {
		line = strings.Join(append([]string{line}, args...), " ")
	} else if ex := cmdline.FirstExample(c.Example, c.CommandPath()); strings.HasPrefix(ex, "outboxctl ") && !strings.HasSuffix(ex, " --help") {
		line = ex
	}
	return line + " " + example
}

// oneOf lists values as prose: "a, b and c".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return fmt.Sprintf("%s and %s", strings.Join(values[:len(values)-1], ", "), values[len(values)-1])
}

// addDurationFlag registers a duration flag (cmdline.Duration: never negative); example is a value the
// error suggests ("30s").
func addDurationFlag(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, example, help string) *pflag.Flag {
	*p = def
	f := fs.VarPF(&cmdline.Duration{P: p, Name: name, Example: example}, name, "", help)
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
