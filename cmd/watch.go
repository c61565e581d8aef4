package cmd

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/live"
	"github.com/outboxctl/outboxctl/internal/render"
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

// watch draws frames of run's document until q, Ctrl-C or SIGTERM (exit 0): live.Read, each
// frame's run on a fork of the app writing to the frame's buffers.
func (a *app) watch(ctx context.Context, c *cobra.Command, w *watchSpec, run readRun) error {
	keys, restore := a.io.KeyInput()
	defer restore()
	key := w.key
	if len(a.fan) > 0 {
		key = append([]string{"context"}, key...)
	}
	return live.Read{Key: key, Columns: w.columns, UntilDone: w.untilDone, Interval: w.every,
		Title: strings.TrimPrefix(c.CommandPath(), "outboxctl "), Out: a.io.Out, Err: a.io.Err, TTY: a.io.OutTTY, Keys: keys,
		Run: func(ctx context.Context, direct, errs io.Writer) (render.Doc, []fanout.Gone, error) {
			return a.frameApp(direct, errs).document(ctx, run)
		},
		Print: func(out, errs io.Writer, doc render.Doc) error { return a.frameApp(out, errs).printer().Print(doc) },
	}.Watch(ctx)
}

// frameApp is a fork of the app writing a frame: its output to out, its notes to errs.
func (a *app) frameApp(out, errs io.Writer) *app {
	streams := *a.io
	streams.Out, streams.Err = out, errs
	return a.fork(&streams)
}
