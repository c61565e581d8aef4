package cmd

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/interrupt"
)

// abandonContext is the context a second signal cancels (interrupt.Abandon): a drain's
// delivery in flight is abandoned on it.
func abandonContext(ctx context.Context) context.Context { return interrupt.Abandon(ctx) }

// commandContext is the context of the command being run (cancelled by the first signal);
// Background when none runs (a run function called by a test).
func (a *app) commandContext() context.Context {
	if a.cmd != nil && a.cmd.Context() != nil {
		return a.cmd.Context()
	}
	return context.Background()
}
