package repair

import (
	"context"
	"io"
)

// The optional capabilities of a Mutation, which cmd's one runner (runMutation) asks for:
// what differs between mutations is said by the mutation, never by a branch of the runner
// on its kind.

// Lifetime is a mutation that holds something for the whole run, begun once a database is
// known to be given and before the connection, ended on every path out: drain's handler (a
// stream: co-process is one process for the run; a typo in --handler is refused before
// anything connects). Not for --print-sql: a printed script delivers nothing.
type Lifetime interface {
	Hold(ctx context.Context) (end func(), err error)
}

// Opener is a mutation that opens its own connections (replicate: with two contexts, the
// cell's and the control silo's) and reads before it can print its script: the runner
// opens it, plans, then prints (--print-sql) or confirms and applies. It asks for a
// database itself, for --print-sql too (a split replicate's are its contexts').
type Opener interface {
	Open(ctx context.Context) (closeAll func(), err error)
}

// Preparer is a mutation that reads input of its own before it connects (restore: the
// archive file), for --print-sql too, and otherwise once a database is known to be given:
// a file it refuses is refused before any connection. false means there is nothing to do,
// said already.
type Preparer interface{ Prepare() (bool, error) }

// Prepare runs m's Prepare, when it has one.
func Prepare(m Mutation) (bool, error) {
	if p, ok := m.(Preparer); ok {
		return p.Prepare()
	}
	return true, nil
}

// ScriptWriter is a mutation whose script is written as it is rendered, never held whole:
// restore's INSERTs carry payloads of up to hundreds of MiB.
type ScriptWriter interface {
	WriteScript(preamble []string, w io.Writer) error
}

// PrintScript prints m's script, each text with print.
func PrintScript(m Mutation, preamble []string, print func(string) error) error {
	texts, err := m.Script(preamble)
	if err != nil {
		return err
	}
	for _, text := range texts {
		if err := print(text); err != nil {
			return err
		}
	}
	return nil
}
