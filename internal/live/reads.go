package live

import (
	"bytes"
	"context"
	"io"
	"slices"
	"time"

	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Read is a read command's --watch: its document redrawn every Interval (Watch), with what
// changed since the last frame, until q, Ctrl-C or SIGTERM (exit 0).
type Read struct {
	// Key are the key columns of a row (a fan-out's led by context), Columns the numeric
	// columns whose change is shown (Tracker).
	Key, Columns []string
	// UntilDone ends the watch (exit 0) after the first frame whose run succeeds; a run
	// whose answer is "not yet" (Pending) is a frame like any other.
	UntilDone bool
	Interval  time.Duration
	Title     string
	// Out is stdout (TTY: a terminal), Err stderr, Keys the key presses (nil: none).
	Out, Err io.Writer
	TTY      bool
	Keys     io.Reader
	// Run runs the read once (a fan-out over contexts included): what a command printed
	// directly (a streamed one: inspect shard) into direct, its notes into errs. Print
	// renders a frame's document into out, its notes into errs.
	Run   func(ctx context.Context, direct, errs io.Writer) (render.Doc, []fanout.Gone, error)
	Print func(out, errs io.Writer, doc render.Doc) error
}

// Watch draws frames of r's document until q, Ctrl-C or SIGTERM (exit 0).
func (r Read) Watch(ctx context.Context) error {
	tr := &Tracker{Key: r.Key, Columns: r.Columns}
	layout := &Layout{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done bool
	w := &Watch{Out: r.Out, TTY: r.TTY, Keys: r.Keys, Interval: r.Interval, Title: r.Title, Now: time.Now,
		// A finished watch ends once its last frame is drawn, when it would wait.
		After: func(d time.Duration) <-chan time.Time {
			if done {
				cancel()
			}
			return time.After(d)
		}}
	return w.Run(ctx, func(ctx context.Context, out io.Writer) error {
		m, err := r.frame(ctx, out, tr, layout)
		done = r.UntilDone && m == exitcode.OK
		return err
	})
}

// frame runs the read once and prints its document into out, with the changes since the
// last frame (tr) and its columns where the last frames had them (layout), and what the run
// meant.
func (r Read) frame(ctx context.Context, out io.Writer, tr *Tracker, layout *Layout) (exitcode.Meaning, error) {
	var direct, errs bytes.Buffer
	doc, gone, err := r.Run(ctx, &direct, &errs)
	fanout.PrintGone(&errs, gone)
	if doc != nil {
		if perr := r.Print(out, &errs, tr.Annotate(layout.Apply(doc), time.Now())); perr != nil {
			return exitcode.Runtime, perr
		}
	}
	_, _ = io.Copy(out, &direct) // a streamed command (inspect shard) printed directly
	// The notes, footers, the verdict and the contexts that failed: on a terminal the frame
	// is the screen, so they go under the rows; on a pipe they stay off the data.
	notes := r.Err
	if r.TTY {
		notes = out
	}
	m := exitcode.Of(ctx, err)
	switch {
	case m == exitcode.OK, m == exitcode.Pending && r.UntilDone:
		_, _ = io.Copy(notes, &errs)
	case m == exitcode.Partial || slices.Contains(fanout.Verdicts, m):
		_, _ = io.Copy(notes, &errs)
		if msg := err.Error(); msg != "" {
			_, _ = io.WriteString(notes, "Error: "+exitcode.OneLine(msg)+"\n")
		}
	default:
		return m, err
	}
	return m, nil
}
