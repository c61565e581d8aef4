package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// readRun is a read command's run function bound to its options: given the app of one
// target (the invocation's, one context's of a fan-out, one frame's of a watch) it builds
// its dependencies from it and returns the document to render, and the verdict (threshold,
// warning, critical, pending) or error the command ends with. The document is nil when the command printed its
// SQL instead (--print-sql, no database) or streamed its rows itself (inspect shard): a
// read that prints as it reads cannot hand its rows over whole.
//
// Returning the document rather than printing it is what lets one runner render it, redraw
// it under --watch and merge it across contexts without running the command tree again.
type readRun func(ctx context.Context, on *app) (render.Doc, error)

// runDocument is the one runner of the read commands: it runs run against the target the
// flags select (or each selected context, merged), renders the document, and returns the
// verdict; under --watch it redraws the document every interval instead. opts are the
// command's validated options, which a.runF (a flag test's seam) takes in place of the run.
func (a *app) runDocument(c *cobra.Command, opts any, run readRun) error {
	if a.runF != nil {
		return a.runF(opts)
	}
	ctx := c.Context()
	if w := a.watching(c); w != nil {
		return a.watch(ctx, c, w, run)
	}
	doc, gone, err := a.document(ctx, run)
	if doc != nil {
		if perr := a.printer().Print(doc); perr != nil {
			return perr
		}
	}
	fanout.PrintGone(a.io.Err, gone)
	return err
}

// document is run's document for the target the flags select, or the merge of every
// selected context's (fanDocument), with the contexts that did not answer.
func (a *app) document(ctx context.Context, run readRun) (render.Doc, []fanout.Gone, error) {
	if len(a.fan) > 0 {
		return a.fanDocument(ctx, run)
	}
	doc, err := run(ctx, a)
	return doc, nil, err
}

// fork is a copy of the app writing to other streams: a context's run or a watch frame
// gets its own settings and output without touching the invocation's.
func (a *app) fork(s *render.Streams) *app {
	f := *a
	f.io = s
	return &f
}

// runWithFactory is runDocument for a read of the outbox table the flags select: the
// factory and the target are built from the app each run is for (the invocation's, one
// context's, one frame's), the target first, so that a usage error in it is said before
// anything is read.
func (a *app) runWithFactory(c *cobra.Command, opts any, run func(context.Context, factory, query.Target) (render.Doc, error)) error {
	return a.runDocument(c, opts, func(ctx context.Context, on *app) (render.Doc, error) {
		t, err := on.target()
		if err != nil {
			return nil, err
		}
		return run(ctx, on.factory(), t)
	})
}
