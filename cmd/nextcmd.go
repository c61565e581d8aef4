package cmd

import (
	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The command lines the tool suggests are made by internal/cmdline; these are its calls on
// this invocation's words and flags.

// prefixWords are "outboxctl" and the flags of this invocation that say which database and
// schema it acts on, as the user gave them (cmdline.Prefix): --context is the one context
// this run is for, when the flags chose it.
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

// prefixOn is prefixWords for context name ("": none).
func (a *app) prefixOn(name string) []string {
	return cmdline.Prefix(name, a.flagGiven)
}

// flagGiven is the value of the flag name when it was given on the command line.
func (a *app) flagGiven(name string) (string, bool) {
	if a.cmd == nil || a.cmd.Flag(name) == nil || !a.cmd.Flag(name).Changed {
		return "", false
	}
	return a.cmd.Flag(name).Value.String(), true
}

// nextCommand is the command line of a next step: the prefix, the flags naming t (nil: none)
// and args, one quoted line.
func (a *app) nextCommand(t *query.Target, args ...string) string {
	return cmdline.Next(a.prefixWords(), a.g.Silo, t, args)
}

// nextOnSide is the command line of a next step on one side of a split verify or replicate:
// side's context (which carries its schema and dsn) rather than both, the flags naming t
// (nil: none) and args. An outbox command (inspect shard, reschedule) reads or writes one
// silo's outbox, so it must name the context that holds it.
func (a *app) nextOnSide(side outbox.SplitSide, t *query.Target, args ...string) string {
	return cmdline.Next(a.prefixOn(side.Context), side.Silo, t, args)
}

// againOr is this invocation's command line with add appended (cmdline.Again), or fallback
// + add when the invocation is unknown.
func (a *app) againOr(fallback string, add ...string) string {
	return cmdline.AgainOr(a.args, fallback, add...)
}

// argsWithout is "outboxctl" and this invocation's words without the flags named in drop (true:
// the flag takes a value, written as --flag=v or as the next word).
func (a *app) argsWithout(drop map[string]bool) []string { return cmdline.Without(a.args, drop) }
