package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/inspect"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The flags of a whole-table pass (depth's exact count, shards --limit's grouping, inspect
// category), which may answer from the statistics or a sample under a low
// --statement-timeout (inspect.Pass says when and how).

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
	return query.Budget{StatementTimeout: d.db.statementTimeout, RowsPerSecond: o.RowsPerSecond}
}

// pass is command's whole-table pass (inspect.Pass): with full (the flag that asks for it)
// to the end under --pass-timeout (or --statement-timeout when longer); label and what name
// it on its progress line ("inspect category", "reading").
func (o passOptions) pass(ctx context.Context, d factory, full bool, command, label, what string) inspect.Passing {
	return inspect.Pass{Full: full, Timeout: max(o.Timeout, d.db.statementTimeout), Budget: o.budget(d), Stderr: d.term.stderr, TTY: d.term.errTTY,
		Label: label, What: what, Open: func(timeout time.Duration, fn func(*outbox.Snapshot) error) error {
			return d.db.snapshot(ctx, command, readSpec{check: outbox.CheckOutbox, timeout: timeout}, fn)
		}}.Passing(ctx)
}
