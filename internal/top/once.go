package top

import (
	"io"

	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/fanout"
)

// OnceOutcome is top --once's exit after its frame, by the fan-out reads' rule: with one
// context, its error (exit 1, as any read of an unreachable database); with several, one
// "context gone" line on w (stderr) per context that could not be read, and exit 6
// (partial) when others were read, 1 when none was. A frame alone would leave a script's
// exit 0 with a context unread.
func OnceOutcome(w io.Writer, contexts int, failed []Failed) error {
	switch {
	case len(failed) == 0:
		return nil
	case contexts == 1:
		return failed[0].Err
	}
	gone := make([]fanout.Gone, 0, len(failed))
	for _, f := range failed {
		gone = append(gone, fanout.Gone{Name: f.Context, Err: f.Err})
	}
	fanout.PrintGone(w, gone)
	if len(failed) == contexts {
		return &exitcode.Outcome{Means: exitcode.Runtime}
	}
	return &exitcode.Outcome{Means: exitcode.Partial}
}
