package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/inspect"
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

// DefaultPassTimeout is the statement timeout of a full pass asked for by its flag.
const DefaultPassTimeout = 10 * time.Minute

// passOptions are the flags of a command that may answer without its whole-table pass.
type passOptions struct {
	// Timeout bounds the full pass when its flag asks for it (at least --statement-timeout).
	Timeout time.Duration
	// RowsPerSecond is the scan rate the budget assumes (hidden: tests lower it so that a
	// small table exceeds the budget).
	RowsPerSecond float64
}

// addPassFlags registers --pass-timeout and the hidden --pass-rows-per-second; full is the
// flag that asks for the full pass, for the help.
func addPassFlags(c *cobra.Command, o *passOptions, full string) {
	addDurationFlag(c.Flags(), &o.Timeout, "pass-timeout", DefaultPassTimeout, "10m",
		"the statement timeout of the whole-table pass "+full+" asks for (at least --statement-timeout)")
	c.Flags().Float64Var(&o.RowsPerSecond, "pass-rows-per-second", query.DefaultPassRowsPerSecond,
		"the scan rate the whole-table pass's budget assumes")
	_ = c.Flags().MarkHidden("pass-rows-per-second")
}

// budget is the pass budget under d's --statement-timeout.
func (o passOptions) budget(d factory) query.Budget {
	return query.Budget{StatementTimeout: d.statementTimeout, RowsPerSecond: o.RowsPerSecond}
}

// fullPass runs fn in a read snapshot whose statements may take --pass-timeout (or
// --statement-timeout when longer), with a line on a terminal for the pass's duration.
// label names the command on the line ("inspect category"), what the pass does ("counting").
func (o passOptions) fullPass(ctx context.Context, d factory, command, label, what string, fn func(*outbox.Snapshot, *passLine) error) error {
	timeout := max(o.Timeout, d.statementTimeout)
	return d.snapshot(ctx, command, readSpec{check: outbox.CheckOutbox, timeout: timeout}, func(s *outbox.Snapshot) error {
		return fn(s, &passLine{d: d, o: o, timeout: timeout, label: label, what: what})
	})
}

// read runs fn in a read snapshot of the outbox table: with full (the flag that asks for
// the whole pass), fullPass's, fn given the pass's progress line to run it under; else one
// under --statement-timeout, fn given nil (answer by the budget).
func (o passOptions) read(ctx context.Context, d factory, full bool, command, label, what string, fn func(*outbox.Snapshot, inspect.FullPass) error) error {
	if !full {
		return d.snapshot(ctx, command, readSpec{check: outbox.CheckOutbox}, func(s *outbox.Snapshot) error { return fn(s, nil) })
	}
	return o.fullPass(ctx, d, command, label, what, func(s *outbox.Snapshot, line *passLine) error {
		return fn(s, func(rows int64, pass func() error) error { return line.run(ctx, rows, pass) })
	})
}

// passLine draws the progress line of a full pass once its size is known.
type passLine struct {
	d       factory
	o       passOptions
	timeout time.Duration
	label   string
	what    string
}

// run runs the pass over ~rows rows under the line.
func (l *passLine) run(ctx context.Context, rows int64, pass func() error) error {
	expected := time.Duration(l.o.budget(l.d).Seconds(rows) * float64(time.Second))
	label := fmt.Sprintf("%s: %s ~%d rows in one pass (timeout %s, --pass-timeout)", l.label, l.what, rows, l.timeout)
	p := live.NewElapsed(l.d.stderr, l.d.errTTY, time.Now, label, expected)
	p.Tick()
	stop := p.Run(ctx)
	err := pass()
	stop()
	if err == nil {
		p.Finish()
	} else if l.d.errTTY {
		fmt.Fprintln(l.d.stderr) // leave the line as it was, and the error below it
	}
	return err
}
