package config

import (
	"fmt"
	"slices"
	"strings"
)

// The keys that limit what a context lets outboxctl change (issue 42's cockpit builds on
// them): readonly: true refuses every command that writes to the context's database;
// allow: [reschedule, compact] permits only those (with or without readonly: true).
const (
	KeyReadOnly = "readonly"
	KeyAllow    = "allow"
)

// WriteCommands are the commands that write to a database, as allow names them: the command
// path without "outboxctl ". "killswitch" and "demo" in allow stand for all of theirs.
// cmd's tests check that it is exactly the commands that take --yes.
var WriteCommands = []string{ //nolint:gochecknoglobals // constant list
	"reschedule", "compact", "skip", "drain", "restore", "replicate",
	"killswitch add", "killswitch remove", "killswitch gate", "demo seed", "demo drop",
}

// allowWords are what allow may list: a write command, or a group of them.
func allowWords() []string { return append(slices.Clone(WriteCommands), "killswitch", "demo") }

// Restricted reports whether the context limits its writes (readonly: true, or allow).
func (c *Context) Restricted() bool {
	if c == nil {
		return false
	}
	v, _, _ := c.Get(KeyReadOnly)
	_, _, allow := c.Get(KeyAllow)
	return v == "true" || allow
}

// Allowed are the write commands the context's allow lists ("" entries dropped).
func (c *Context) Allowed() []string {
	v, _, ok := c.Get(KeyAllow)
	if !ok {
		return nil
	}
	return strings.Split(v, ",")
}

// Permits is nil when the context lets command (a WriteCommands entry) write, else the one
// line that says why not.
func (c *Context) Permits(command string) error {
	if !c.Restricted() {
		return nil
	}
	group, _, _ := strings.Cut(command, " ")
	allowed := c.Allowed()
	if slices.Contains(allowed, command) || slices.Contains(allowed, group) {
		return nil
	}
	if len(allowed) == 0 {
		_, line, _ := c.Get(KeyReadOnly)
		return fmt.Errorf("context %s is read-only (readonly: true, line %d): %s would write to its database", c.Name, line, command)
	}
	_, line, _ := c.Get(KeyAllow)
	return fmt.Errorf("context %s allows only %s (allow, line %d): %s would write to its database", c.Name, strings.Join(allowed, ", "), line, command)
}
