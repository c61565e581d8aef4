package exporter

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// Say is where outboxctl exporter tells the operator what it does (a printer's Notef and
// Warnf, on stderr).
type Say struct {
	Notef, Warnf func(format string, args ...any)
}

// Listen is the run of outboxctl exporter: it listens on listen, then collects in the
// background and serves until ctx ends (a signal), which is a clean stop (RunServing).
func Listen(ctx context.Context, listen string, sources []Source, o Options, say Say) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return failure("cannot listen on %s: %v", listen, err)
	}
	e := New(sources, o)
	say.Notef("serving http://%s/metrics for %d context(s)", ln.Addr().String(), len(sources))
	err = e.RunServing(ctx, ln, func(err error) { say.Warnf("first collection failed: %s", exitcode.OneLine(db.RedactDSN(err.Error()))) })
	if err != nil && ctx.Err() == nil {
		return failure("serving on %s: %v", listen, err)
	}
	return nil
}

// Once is the run of outboxctl metrics: it collects once and writes the families to
// textfile (atomically) or, without one, hands their text to print; the verdict follows
// what failed (Verdict).
func Once(ctx context.Context, sources []Source, o Options, textfile string, print func([]byte) error) error {
	e := New(sources, o)
	collectErr := e.CollectOnce(ctx)
	if ctx.Err() != nil {
		return &exitcode.Outcome{Means: exitcode.Interrupted, Msg: "interrupted while collecting"}
	}
	if textfile != "" {
		if err := e.WriteTextfile(textfile); err != nil {
			return failure("writing %s: %v", textfile, err)
		}
	} else {
		text, err := e.Text()
		if err != nil {
			return err
		}
		if err := print(text); err != nil {
			return err
		}
	}
	return Verdict(collectErr, len(sources))
}

// Verdict is metrics' exit: 1 when every context failed (or the one did), 6 when some did;
// each failed tier is said on stderr by the caller's error line.
func Verdict(err error, contexts int) error {
	if err == nil {
		return nil
	}
	failed, msgs := Failures(err)
	for i := range msgs {
		msgs[i] = exitcode.OneLine(msgs[i])
	}
	msg := strings.Join(msgs, "; ")
	if len(failed) < contexts {
		return &exitcode.Outcome{Means: exitcode.Partial, Msg: msg}
	}
	return &exitcode.Outcome{Means: exitcode.Runtime, Msg: msg}
}

// failure is a runtime failure that says its own account (not reworded as an interrupt).
func failure(format string, args ...any) error {
	return &exitcode.Outcome{Means: exitcode.Runtime, Msg: fmt.Sprintf(format, args...)}
}
