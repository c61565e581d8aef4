// Package interrupt is how outboxctl stops on a signal: SIGINT and SIGTERM become
// cancellations of the invocation's context (Notify), a second one abandons a delivery in
// flight (Abandon), and a read of stdin returns on the first (ReadAll).
package interrupt

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// abandonKey is the context key of the context a second signal cancels.
type abandonKey struct{}

// Notify turns SIGINT and SIGTERM into cancellations. The first cancels the returned
// context: every command stops at its next step, and a drain finishes the delivery in
// flight. The second cancels the context Abandon returns: a drain stops waiting for that
// delivery (its handler is killed). After the second, signals get their default handling
// back, so a third ends outboxctl at once.
func Notify(parent context.Context) (context.Context, func()) {
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

// Abandon is the context a second signal cancels (never cancelled when ctx does not come
// from Notify, as in tests that call a run function).
func Abandon(ctx context.Context) context.Context {
	if a, ok := ctx.Value(abandonKey{}).(context.Context); ok {
		return a
	}
	return context.WithoutCancel(ctx)
}

// ReadAll reads r (at most limit bytes) until EOF, or until ctx is cancelled (the first
// Ctrl-C): a read of a terminal or a pipe no one writes to never returns on its own, and
// the signal only cancels ctx. The read left behind ends with the process.
func ReadAll(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, limit))
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
