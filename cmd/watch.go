package cmd

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/live"
)

// defaultWatch is the interval of a bare --watch.
const defaultWatch = "2s"

// watchSpec is a command's --watch: the interval asked for, and what its frames follow from
// frame to frame (the key columns of a row and the numeric columns whose change is shown).
type watchSpec struct {
	every   time.Duration
	key     []string
	columns []string
	// untilDone ends the watch (exit 0) after the first frame whose run succeeds; a run
	// whose answer is "not yet" (meansPending) is a frame like any other.
	untilDone bool
}

// addWatch gives c a --watch [INTERVAL] flag: the command redraws every interval.
func (a *app) addWatch(c *cobra.Command, key, columns []string) *watchSpec {
	if a.watches == nil {
		a.watches = map[*cobra.Command]*watchSpec{}
	}
	w := &watchSpec{key: key, columns: columns}
	a.watches[c] = w
	addDurationFlag(c.Flags(), &w.every, "watch", 0, "2s", "redraw every INTERVAL (bare --watch: "+defaultWatch+
		"), in place on a terminal, with what changed since the last frame; q or Ctrl-C quits")
	c.Flags().Lookup("watch").NoOptDefVal = defaultWatch
	return w
}

// applyWatch checks a command's --watch before it runs; runDocument then redraws the
// command's document (watching) instead of printing it once.
func (a *app) applyWatch(c *cobra.Command) error {
	w := a.watching(c)
	if w == nil {
		return nil
	}
	if w.every < 100*time.Millisecond {
		return usageErrorf(c.CommandPath()+" --watch 2s", "`--watch` must be at least 100ms, got %s", w.every)
	}
	if a.g.PrintSQL {
		return usageErrorf(c.CommandPath()+" --print-sql", "`--watch` redraws results: it has no SQL to print again; drop one of them")
	}
	return nil
}

// watching is c's --watch when it was given, else nil.
func (a *app) watching(c *cobra.Command) *watchSpec {
	w, ok := a.watches[c]
	if !ok || !c.Flags().Changed("watch") {
		return nil
	}
	return w
}

// watch draws frames of run's document until q, Ctrl-C or SIGTERM (exit 0).
func (a *app) watch(ctx context.Context, c *cobra.Command, w *watchSpec, run readRun) error {
	keys, restore := a.io.KeyInput()
	defer restore()
	key := w.key
	if len(a.fan) > 0 {
		key = append([]string{"context"}, key...)
	}
	tr := &live.Tracker{Key: key, Columns: w.columns}
	layout := &live.Layout{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done bool
	lw := &live.Watch{Out: a.io.Out, TTY: a.io.OutTTY, Keys: keys, Interval: w.every,
		Title: strings.TrimPrefix(c.CommandPath(), "outboxctl "), Now: time.Now,
		// A finished watch ends once its last frame is drawn, when it would wait.
		After: func(d time.Duration) <-chan time.Time {
			if done {
				cancel()
			}
			return time.After(d)
		}}
	return lw.Run(ctx, func(ctx context.Context, out io.Writer) error {
		m, err := a.frame(ctx, out, frameView{tr, layout}, w.untilDone, run)
		done = w.untilDone && m == meansOK
		return err
	})
}

// frameView is what a frame's document is drawn with: the changes since the last frame
// (the tracker) and the columns in the order of the frames before (the layout).
type frameView struct {
	tracker *live.Tracker
	layout  *live.Layout
}

// frame runs the read once (a fan-out over contexts included) and prints its document into
// out, with the changes since the last frame and its columns where the last frames had
// them, and what the run meant.
func (a *app) frame(ctx context.Context, out io.Writer, view frameView, untilDone bool, run readRun) (meaning, error) {
	var direct, errs bytes.Buffer
	streams := *a.io
	streams.Out, streams.Err = &direct, &errs
	doc, gone, err := a.fork(&streams).document(ctx, run)
	fanout.PrintGone(&errs, gone)
	streams.Out = out
	if doc != nil {
		if perr := a.printerFor(&streams).Print(view.tracker.Annotate(view.layout.Apply(doc), time.Now())); perr != nil {
			return meansRuntime, perr
		}
	}
	_, _ = io.Copy(out, &direct) // a streamed command (inspect shard) printed directly
	// The notes, footers, the verdict and the contexts that failed: on a terminal the frame
	// is the screen, so they go under the rows; on a pipe they stay off the data.
	notes := a.io.Err
	if a.io.OutTTY {
		notes = out
	}
	m := meaningOf(ctx, err)
	switch {
	case m == meansOK, m == meansPending && untilDone:
		_, _ = io.Copy(notes, &errs)
	case m == meansPartial || slices.Contains(fanout.Verdicts, m):
		_, _ = io.Copy(notes, &errs)
		if msg := err.Error(); msg != "" {
			_, _ = io.WriteString(notes, "Error: "+oneLine(msg)+"\n")
		}
	default:
		return m, err
	}
	return m, nil
}
