package live

import (
	"context"
	"io"
	"time"
)

// Work is a live progress line for long work (drain, compact, restore, demo seed):
// done/total, percentage, rate and ETA on a terminal's stderr, redrawn several times a second
// (so it moves while a statement runs), then a one-line summary; on a pipe nothing at all.
type Work struct {
	*Progress
	stop func()
}

// StartWork starts a progress line of total units on w (tty: a terminal; approx marks an
// estimate "~").
func StartWork(ctx context.Context, w io.Writer, tty bool, label string, total int64, approx bool) *Work {
	p := NewProgress(w, tty, time.Now, label, total, approx)
	p.Tick() // draw at once: the first unit may take a while
	return &Work{Progress: p, stop: p.Run(ctx)}
}

// Done stops the redraws and replaces the line with its summary.
func (w *Work) Done() {
	w.stop()
	w.Finish()
}
