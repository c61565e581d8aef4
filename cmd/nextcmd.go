package cmd

import (
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// The one place a command line the tool suggests is made: every "next:" command and every
// Try: line that repeats the invocation. Each word is quoted by textsafe.ShellQuote, so
// untrusted text (a schema, a cell, a reason) is one word of one line whatever it holds.

// prefixWords are "outboxctl" and the flags of this invocation that say which database and
// schema it acts on, as the user gave them: --context (the one context this run is for, when
// the flags chose it), --schema, --deployment and --enums when given on the command line.
// --dsn is not repeated: it may hold a password, and the environment that supplied it
// supplies it again.
//
// A split verify or replicate (two contexts) repeats both, cell's first: its next commands
// (replicate, verify) read both silos.
func (a *app) prefixWords() []string {
	if len(a.split) == 2 {
		return a.prefixOn(a.split[0].Name + "," + a.split[1].Name)
	}
	if a.contextName != "" && (a.g.Context != "" || a.g.AllContexts) {
		return a.prefixOn(a.contextName)
	}
	return a.prefixOn("")
}

// prefixOn is prefixWords for context name ("": none): "outboxctl", --context name and the
// flags of this invocation that say the schema and the deployment.
func (a *app) prefixOn(name string) []string {
	words := []string{"outboxctl"}
	if name != "" {
		words = append(words, "--context", name)
	}
	for _, name := range []string{"schema", "deployment", "enums"} {
		if a.flagChanged(name) {
			words = append(words, "--"+name, a.cmd.Flag(name).Value.String())
		}
	}
	return words
}

func (a *app) flagChanged(name string) bool {
	if a.cmd == nil {
		return false
	}
	f := a.cmd.Flag(name)
	return f != nil && f.Changed
}

// targetWords are the flags that name outbox table t: --silo control and its --cell, --table.
func targetWords(t query.Target) []string {
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

// nextCommand is the command line of a next step: the prefix, the flags naming t (nil: none)
// and args, one quoted line.
func (a *app) nextCommand(t *query.Target, args ...string) string {
	return nextLine(a.prefixWords(), a.g.Silo, t, args)
}

// nextOnSide is the command line of a next step on one side of a split verify or replicate:
// side's context (which carries its schema and dsn) rather than both, the flags naming t
// (nil: none) and args. An outbox command (inspect shard, reschedule) reads or writes one
// silo's outbox, so it must name the context that holds it.
func (a *app) nextOnSide(side splitSide, t *query.Target, args ...string) string {
	return nextLine(a.prefixOn(side.context), side.silo, t, args)
}

// nextLine is prefix, the flags naming t (nil: none) under a context or flag whose silo is
// silo, and args, one quoted line.
func nextLine(prefix []string, silo string, t *query.Target, args []string) string {
	words := prefix
	if t != nil {
		// A cell target under a context (or flag) whose silo is control must say so, or the
		// pasted command reads the control outbox.
		if !t.Control() && silo == "control" {
			words = append(words, "--silo", "cell")
		}
		words = append(words, targetWords(*t)...)
	}
	return textsafe.Command(append(words, args...)...)
}

// again is this invocation's command line with add appended (a flag it lacked, such as
// --yes), every argument kept but --dsn and its value; "" when there is none (a run function
// called by a test).
func (a *app) again(add ...string) string {
	if len(a.args) == 0 {
		return ""
	}
	// A flag added with its value replaces the invocation's own (--archive elsewhere).
	drop := map[string]bool{"dsn": true}
	for i, w := range add {
		if strings.HasPrefix(w, "--") && i+1 < len(add) && !strings.HasPrefix(add[i+1], "--") {
			drop[strings.TrimPrefix(w, "--")] = true
		}
	}
	words := a.argsWithout(drop)
	for _, w := range add {
		if !hasWord(words, w) || !strings.HasPrefix(w, "--") {
			words = append(words, w)
		}
	}
	return textsafe.Command(words...)
}

func hasWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// againOr is again(add...), or fallback + add when the invocation is unknown.
func (a *app) againOr(fallback string, add ...string) string {
	if s := a.again(add...); s != "" {
		return s
	}
	return strings.TrimSpace(fallback + " " + strings.Join(add, " "))
}

// argsWithout is "outboxctl" and this invocation's words without the flags named in drop (true:
// the flag takes a value, written as --flag=v or as the next word).
func (a *app) argsWithout(drop map[string]bool) []string {
	words := []string{"outboxctl"}
	for i := 0; i < len(a.args); i++ {
		w := a.args[i]
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
