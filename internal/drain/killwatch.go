package drain

import (
	"context"
	"sync"
	"time"
)

// killWatch calls kill once, at deadline (if not zero) or when ctx is cancelled, whichever
// comes first, unless stop was called before. stop says why kill was called: errTimeout or
// errAbandoned, nil when it was not. Once stop has returned, kill is never called.
//
// It is the stream exchange's timeout where pipes take no deadline (proc_windows.go): the
// kill closes the co-process's pipes, which ends the blocked write or read. A delivery
// whose ack was read in the instant the deadline fired counts as timed out, since its
// co-process was killed. On Unix the pipes' deadlines do this and killWatch is not used.
func killWatch(ctx context.Context, deadline time.Time, kill func()) (stop func() error) {
	var (
		mu     sync.Mutex
		done   bool
		reason error
	)
	fire := func(why error) {
		mu.Lock()
		defer mu.Unlock()
		if done || reason != nil {
			return
		}
		reason = why
		kill()
	}
	var timer *time.Timer
	if !deadline.IsZero() {
		timer = time.AfterFunc(time.Until(deadline), func() { fire(errTimeout) })
	}
	unwatch := context.AfterFunc(ctx, func() { fire(errAbandoned) })
	return func() error {
		unwatch()
		if timer != nil {
			timer.Stop()
		}
		mu.Lock()
		defer mu.Unlock()
		done = true
		return reason
	}
}
