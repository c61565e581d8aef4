// Package cmdline is the one place a command line the tool suggests is made: every "next:"
// command and every Try: line that repeats the invocation. Each word is quoted by
// textsafe.ShellQuote, so untrusted text (a schema, a cell, a reason) is one word of one line
// whatever it holds. It takes the invocation as plain values (its words, the flags given), so
// cmd's app and a service build the same lines.
package cmdline

import (
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Prefix is "outboxctl", --context name ("": none) and the flags of the invocation that say
// the schema and the deployment: --schema, --deployment and --enums when given on the
// command line (flag says a flag's value and whether it was given). --dsn is not repeated:
// it may hold a password, and the environment that supplied it supplies it again.
func Prefix(name string, flag func(name string) (string, bool)) []string {
	words := []string{"outboxctl"}
	if name != "" {
		words = append(words, "--context", name)
	}
	for _, name := range []string{"schema", "deployment", "enums"} {
		if v, given := flag(name); given {
			words = append(words, "--"+name, v)
		}
	}
	return words
}

// TargetWords are the flags that name outbox table t: --silo control and its --cell, --table.
func TargetWords(t query.Target) []string {
	var words []string
	if t.Control() {
		words = append(words, "--silo", "control")
		if t.Cell != "" {
			words = append(words, "--cell", t.Cell)
		}
	}
	if t.Table != "" {
		words = append(words, "--table", t.Table)
	}
	return words
}

// Next is prefix, the flags naming t (nil: none) under a context or flag whose silo is
// silo, and args, one quoted line.
func Next(prefix []string, silo string, t *query.Target, args []string) string {
	words := prefix
	if t != nil {
		// A cell target under a context (or flag) whose silo is control must say so, or the
		// pasted command reads the control outbox.
		if !t.Control() && silo == "control" {
			words = append(words, "--silo", "cell")
		}
		words = append(words, TargetWords(*t)...)
	}
	return textsafe.Command(append(words, args...)...)
}

// Again is the command line args (the invocation's words, without "outboxctl") with add
// appended (a flag it lacked, such as --yes), every argument kept but --dsn and its value;
// "" when there is none (a run function called by a test).
func Again(args []string, add ...string) string {
	if len(args) == 0 {
		return ""
	}
	// A flag added with its value replaces the invocation's own (--archive elsewhere).
	drop := map[string]bool{"dsn": true}
	for i, w := range add {
		if strings.HasPrefix(w, "--") && i+1 < len(add) && !strings.HasPrefix(add[i+1], "--") {
			drop[strings.TrimPrefix(w, "--")] = true
		}
	}
	words := Without(args, drop)
	for _, w := range add {
		if !slices.Contains(words, w) || !strings.HasPrefix(w, "--") {
			words = append(words, w)
		}
	}
	return textsafe.Command(words...)
}

// AgainOr is Again(args, add...), or fallback + add when the invocation is unknown.
func AgainOr(args []string, fallback string, add ...string) string {
	if s := Again(args, add...); s != "" {
		return s
	}
	return strings.TrimSpace(fallback + " " + strings.Join(add, " "))
}

// Without is "outboxctl" and args without the flags named in drop (true: the flag takes a
// value, written as --flag=v or as the next word).
func Without(args []string, drop map[string]bool) []string {
	words := []string{"outboxctl"}
	for i := 0; i < len(args); i++ {
		w := args[i]
		name, _, inline := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		takesValue, dropped := drop[name]
		if !strings.HasPrefix(w, "--") || !dropped {
			words = append(words, w)
			continue
		}
		if takesValue && !inline {
			i++ // the flag's value
		}
	}
	return words
}

// Targeted gives a Try line the invocation's target. A hint written as a bare command line
// ("outboxctl shards --min-depth 100") gets the invocation's --context and --schema (from
// prefix, the invocation's Prefix words), so that pasted it runs where the mistaken line
// would have, not on the default schema or context. A hint that names any of them is built
// from the invocation's own words already and is returned as it is.
func Targeted(hint string, prefix []string) string {
	rest, bare := strings.CutPrefix(hint, "outboxctl ")
	if !bare || strings.HasPrefix(rest, "-") {
		return hint
	}
	for _, f := range []string{"--context", "--all-contexts", "--schema", "--deployment", "--enums"} {
		if strings.Contains(" "+rest, " "+f) {
			return hint
		}
	}
	// Only where it runs: --enums and --deployment stay out (a hint about a broken --enums
	// file, `enums lint FILE`, must not load that file first).
	words := []string{"outboxctl"}
	for i := 1; i+1 < len(prefix); i += 2 {
		if prefix[i] == "--context" || prefix[i] == "--schema" {
			words = append(words, prefix[i], prefix[i+1])
		}
	}
	if len(words) == 1 {
		return hint
	}
	return textsafe.Command(words...) + " " + rest
}
