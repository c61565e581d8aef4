package inspect

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/outboxctl/outboxctl/internal/live"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// A whole-table pass (depth's exact count, shards --limit's grouping, inspect category)
// under a low --statement-timeout: before starting one, a command compares the planner's
// estimate of the table's rows with a budget (half of --statement-timeout at an assumed
// scan rate, query.Budget) and, over it, answers from the statistics or a bounded sample,
// labelled so, naming the flag that asks for the full pass. With that flag the pass runs to
// the end under --pass-timeout, with a progress line on a terminal.

// Pass is how a read's whole-table pass runs: Full when its flag asks for it (to the end
// under Timeout, the longer of --pass-timeout and --statement-timeout, with a line on
// Stderr on a terminal), else under --statement-timeout, answered by Budget.
type Pass struct {
	Full    bool
	Timeout time.Duration
	Budget  query.Budget
	// Open opens a read snapshot of the outbox table whose statements may take timeout
	// (0: --statement-timeout).
	Open   func(timeout time.Duration, fn func(*outbox.Snapshot) error) error
	Stderr io.Writer
	TTY    bool
	// Label names the command on the line ("inspect category"), What what the pass does
	// ("counting").
	Label, What string
}

// Passing is p as the reads take it: fn run in a read snapshot, given the full pass's
// progress line to run the pass under when Full, else nil (answer by the budget).
func (p Pass) Passing(ctx context.Context) Passing {
	return func(fn func(*outbox.Snapshot, FullPass) error) error {
		if !p.Full {
			return p.Open(0, func(s *outbox.Snapshot) error { return fn(s, nil) })
		}
		return p.Open(p.Timeout, func(s *outbox.Snapshot) error {
			return fn(s, func(rows int64, pass func() error) error { return p.run(ctx, rows, pass) })
		})
	}
}

// run runs the pass over ~rows rows under the progress line, drawn once its size is known.
func (p Pass) run(ctx context.Context, rows int64, pass func() error) error {
	expected := time.Duration(p.Budget.Seconds(rows) * float64(time.Second))
	label := fmt.Sprintf("%s: %s ~%d rows in one pass (timeout %s, --pass-timeout)", p.Label, p.What, rows, p.Timeout)
	l := live.NewElapsed(p.Stderr, p.TTY, time.Now, label, expected)
	l.Tick()
	stop := l.Run(ctx)
	err := pass()
	stop()
	if err == nil {
		l.Finish()
	} else if p.TTY {
		fmt.Fprintln(p.Stderr) // leave the line as it was, and the error below it
	}
	return err
}
