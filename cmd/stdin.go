package cmd

import (
	"context"
	"io"
)

// readAllCancellable reads r (at most limit bytes) until EOF, or until ctx is cancelled (the
// first Ctrl-C): a read of a terminal or a pipe no one writes to never returns on its own,
// and the signal only cancels ctx. The read left behind ends with the process.
func readAllCancellable(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
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

// commandContext is the context of the command being run (cancelled by the first signal);
// Background when none runs (a run function called by a test).
func (a *app) commandContext() context.Context {
	if a.cmd != nil && a.cmd.Context() != nil {
		return a.cmd.Context()
	}
	return context.Background()
}
