package cmdline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// ID parses a shard, object or message id given on the command line; hint is the command
// line the error suggests, as for a negative id (NonNegativeID).
func ID(what, s, hint string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, usagef(hint, "invalid %s %q: want an integer id", what, s)
	}
	return n, nil
}

// NonNegativeID parses a shard, object, message or row id given on the command line.
// Sentry's ids are never negative (killswitch refuses them too), so "-42" is a typo, refused
// before anything connects; hint is the command line the error suggests.
func NonNegativeID(what, s, hint string) (int64, error) {
	n, err := ID(what, s, hint)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, usagef(hint, "invalid %s %q: want a non-negative integer id", what, s)
	}
	return n, nil
}

// IDParser parses a what ("shard id", "message id") as NonNegativeID does, for a service
// that parses a list of them.
func IDParser(what string) func(s, hint string) (int64, error) {
	return func(s, hint string) (int64, error) { return NonNegativeID(what, s, hint) }
}

// NegativeNumber reports whether err is pflag's refusal of an argument such as "-5": pflag
// reads it as the shorthand flags -5, so `inspect shard organization -5` said "unknown
// shorthand flag: '5'". No outboxctl flag is a digit and every number argument is an id,
// which is never negative: the caller says so, as the other negative ids are said
// (NonNegativeID).
func NegativeNumber(err error) (string, bool) {
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

// FirstExample is the first command line of a command's examples (the hint of a bad
// argument), or path's --help when it has none.
func FirstExample(example, path string) string {
	for _, l := range strings.Split(example, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "outboxctl ") {
			return l
		}
	}
	return path + " --help"
}

// usagef is the operator's input (exit 2), with the command line to try.
func usagef(try, format string, args ...any) error {
	return &exitcode.Outcome{Means: exitcode.Usage, Msg: fmt.Sprintf(format, args...), Try: try}
}
