package config

import (
	"strings"
	"time"
)

// Flags are the global flags a context's settings go under: what the operator typed wins
// over the context, the context over the environment and the defaults.
type Flags struct {
	DSN, Schema, Silo, Cell, Table                string
	StatementTimeout, LockTimeout, ConnectTimeout time.Duration
}

// Overrides are the flags of f the operator typed (changed says which, by flag name): they
// win over a context.
func (f *Flags) Overrides(changed func(flag string) bool) Overrides {
	var o Overrides
	for name, x := range map[string]struct {
		dst **string
		v   *string
	}{"dsn": {&o.DSN, &f.DSN}, "schema": {&o.Schema, &f.Schema}, "silo": {&o.Silo, &f.Silo}, "cell": {&o.Cell, &f.Cell}, "table": {&o.Table, &f.Table}} {
		if changed(name) {
			*x.dst = x.v
		}
	}
	for name, x := range map[string]struct {
		dst **time.Duration
		v   *time.Duration
	}{"statement-timeout": {&o.StatementTimeout, &f.StatementTimeout}, "lock-timeout": {&o.LockTimeout, &f.LockTimeout}, "connect-timeout": {&o.ConnectTimeout, &f.ConnectTimeout}} {
		if changed(name) {
			*x.dst = x.v
		}
	}
	return o
}

// Layered is one context's settings under the flags: the flags a command then runs with,
// the environment it reads, and where its database came from (Settings.Source).
type Layered struct {
	Flags     Flags
	Getenv    func(string) string
	DSNSource string
}

// Layer layers one context's settings under the flags f (changed says which the operator
// typed): the context's schema, silo, cell and table where it sets them, its timeouts, and
// an environment in which the context's dsn (its replica-dsn for a read) stands in for
// $OUTBOXCTL_DSN and its redis-url for $OUTBOXCTL_REDIS_URL, so --dsn still wins and every
// connection of the command, wherever it is made, goes where the context says.
func Layer(one *Context, f Flags, changed func(string) bool, env func(string) string, read bool) (Layered, error) {
	s := Resolve(one, f.Overrides(changed), env)
	l := Layered{Flags: f, DSNSource: s.Source(KeyDSN)}
	dsn, given, err := s.Connection(!read)
	if err != nil {
		return l, err
	}
	for _, x := range []struct {
		key      string
		dst      *string
		resolved string
	}{
		{KeySchema, &l.Flags.Schema, s.Schema}, {KeySilo, &l.Flags.Silo, s.Silo},
		{KeyCell, &l.Flags.Cell, s.Cell}, {KeyTable, &l.Flags.Table, s.Table},
	} {
		if _, _, ok := one.Get(x.key); ok {
			*x.dst = x.resolved
		}
	}
	l.Flags.StatementTimeout, l.Flags.LockTimeout, l.Flags.ConnectTimeout = s.StatementTimeout, s.LockTimeout, s.ConnectTimeout
	_, _, hasRedis := one.Get(KeyRedisURL)
	l.Getenv = func(k string) string {
		switch {
		case k == "OUTBOXCTL_DSN" && given && dsn != "":
			return dsn
		case k == "OUTBOXCTL_REDIS_URL" && hasRedis:
			return s.RedisURL
		}
		return env(k)
	}
	return l, nil
}

// Kind is what a command does with the contexts selected.
type Kind struct {
	// Multi: every context selected, each layered by the command itself (exporter, metrics).
	Multi bool
	// Several: two or more are each read on their own (a split verify or replicate, top);
	// one goes the way of any command.
	Several bool
	// FanOut: a read whose document is merged over several contexts.
	FanOut bool
	// Read: the command only reads (it may go to a replica-dsn); one that streams a single
	// context's rows refuses several (OneError).
	Read bool
}

// Picked are the contexts a command runs against: Several, or One, or neither (no context:
// the command runs as it did before contexts).
type Picked struct {
	Several []*Context
	One     *Context
}

// OneError is a read that takes one context given several (Got): its message names the
// command, which the caller knows.
type OneError struct{ Got []*Context }

func (e *OneError) Error() string { return "several contexts given to a command that takes one" }

// Pick is the contexts spec, all ($OUTBOXCTL_CONTEXT, current-context) select for a command
// of kind k: every one for Multi, two or more for Several and FanOut, else exactly one (a
// mutation, a read that streams: Select's refusal of several, or OneError).
func (f *File) Pick(spec string, all bool, getenv func(string) string, k Kind) (Picked, error) {
	if k.Multi {
		cs, err := f.Select(spec, all, getenv)
		return Picked{Several: cs}, err
	}
	if k.Several {
		if cs, err := f.Select(spec, all, getenv); err == nil && len(cs) > 1 {
			return Picked{Several: cs}, nil
		}
	}
	if k.FanOut {
		cs, err := f.Select(spec, all, getenv)
		switch {
		case err != nil:
			return Picked{}, err
		case len(cs) > 1:
			return Picked{Several: cs}, nil
		case len(cs) == 1:
			return Picked{One: cs[0]}, nil
		}
		return Picked{}, nil
	}
	if cs, err := f.Select(spec, all, getenv); err == nil && len(cs) > 1 && k.Read {
		return Picked{}, &OneError{Got: cs}
	}
	one, err := f.One(spec, all, getenv)
	return Picked{One: one}, err
}

// ShowTarget is context show's context: name, else the one $OUTBOXCTL_CONTEXT or
// current-context selects (none when the environment's database overrules current-context,
// as a command runs).
func (f *File) ShowTarget(name string, getenv func(string) string) (*Context, error) {
	cs, err := f.Select(name, false, getenv)
	if cur, env := f.Overruled(name, false, getenv); err == nil && cur != "" && env != "" {
		return nil, nil
	}
	switch {
	case err != nil:
		return nil, err
	case len(cs) == 0 && f.Exists:
		return nil, &Error{Msg: "no context given and " + f.Path + " sets no current-context",
			Hint: "outboxctl context list"}
	case len(cs) == 0:
		return nil, &Error{Msg: "no context given and no config file at " + f.Path,
			Hint: "write the file (see docs/README.md#contexts) or set " + EnvConfig}
	case len(cs) > 1:
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.Name
		}
		return nil, &Error{Msg: "context show takes one context, got " + strings.Join(names, ","),
			Hint: "outboxctl context show " + cs[0].Name}
	}
	return cs[0], nil
}
