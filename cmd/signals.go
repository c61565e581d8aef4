package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// abandonKey is the context key of the context a second signal cancels.
type abandonKey struct{}

// notifySignals turns SIGINT and SIGTERM into cancellations. The first cancels the returned
// context: every command stops at its next step, and a drain finishes the delivery in
// flight. The second cancels the context abandonContext returns: a drain stops waiting for
// that delivery (its handler is killed). After the second, signals get their default
// handling back, so a third ends outboxctl at once.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	abandon, abandonNow := context.WithCancel(context.WithoutCancel(parent))
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for _, stop := range []context.CancelFunc{cancel, abandonNow} {
			select {
			case <-ch:
				stop()
			case <-done:
				return
			}
		}
		signal.Stop(ch)
	}()
	return context.WithValue(ctx, abandonKey{}, abandon), func() {
		close(done)
		signal.Stop(ch)
		cancel()
		abandonNow()
	}
}

// abandonContext is the context a second signal cancels (never cancelled when ctx does not
// come from notifySignals, as in tests that call a run function).
func abandonContext(ctx context.Context) context.Context {
	if a, ok := ctx.Value(abandonKey{}).(context.Context); ok {
		return a
	}
	return context.WithoutCancel(ctx)
}
