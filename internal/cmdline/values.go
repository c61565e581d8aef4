package cmdline

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/bytesize"
)

// Enum is the type of every flag that takes one word of a fixed list (-o, --silo,
// --deployment, --time, --store, --order, --value-type, --mode, --payload). Four mechanisms
// did this (an annotation checked before the run, each command's Validate, the global
// flags' parsers in the root's hook, a Value of its own for --time), so a word was refused
// at different moments with differently built hints; here it is refused as the flag is
// parsed, with the flag's one-line message and a hint of the command line with a valid
// word, and its words are the shell completion.
type Enum struct {
	Words   []string // what completion offers
	Typ     string   // the help's type name: "string", as pflag's own string flags say
	Example string   // the valid use the hint shows: "--order oldest"
	Get     func() string
	Put     func(string) error // stores a word, or says why it is not one (the flag's message)
}

func (e *Enum) Set(s string) error {
	if err := e.Put(s); err != nil {
		return &EnumError{Err: err, Example: e.Example}
	}
	return nil
}

func (e *Enum) Type() string   { return e.Typ }
func (e *Enum) String() string { return e.Get() }

// EnumError is an Enum's refusal; cmd's flag error func makes it a usage error whose hint
// is the command line typed so far with the example.
type EnumError struct {
	Err     error
	Example string
}

func (e *EnumError) Error() string { return e.Err.Error() }
func (e *EnumError) Unwrap() error { return e.Err }

// Duration is the type of every duration flag of the tool (timeouts, --sample,
// --handler-timeout, --watch, doctor's thresholds): a Go duration that is never negative.
// pflag's own duration type takes "-5s", and each command checking its flags by hand left
// some unchecked (backfill status --sample -5s ran), so the refusal lives in the type.
type Duration struct {
	P             *time.Duration
	Name, Example string
}

func (d *Duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration: write one such as --%s %s", d.Name, d.Example)
	}
	if v < 0 {
		return fmt.Errorf("a duration must not be negative: write one such as --%s %s", d.Name, d.Example)
	}
	*d.P = v
	return nil
}

func (d *Duration) Type() string   { return "duration" }
func (d *Duration) String() string { return d.P.String() }

// Size is the value of a --max-…-bytes flag: a cap on one input, in bytes, written 256MiB
// (KiB, MiB, GiB, or a plain number of bytes). Every input cap of outboxctl is such a flag on
// the command that reads the input, and its refusal names the flag (docs/security.md).
type Size int64

func (b *Size) String() string { return bytesize.Format(int64(*b)) }

func (b *Size) Set(s string) error {
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	*b = Size(n)
	return nil
}

func (b *Size) Type() string { return "size" }
