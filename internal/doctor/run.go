package doctor

import (
	"context"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/render"
)

// RunChecks is doctor's run through r: the checks' SQL printed (both outbox tables unless
// inv names one), or the checks run in one snapshot and their findings returned, most
// severe first. inv's Target (the table the flags select), Registry, Now and Prefix are
// filled in from r. With sample, the cursors of
// the walks in progress are read again sample after the snapshot closed (a snapshot held
// open while waiting would itself pin the xmin horizon), after wait says so and waits.
func RunChecks(ctx context.Context, r outbox.Reader, inv Invocation, names []string, sample time.Duration, wait func(context.Context, time.Duration) error) ([]Finding, error) {
	reg, err := r.Registry()
	if err != nil {
		return nil, err
	}
	if inv.Target, err = r.Target(); err != nil {
		return nil, err
	}
	if r.PrintOnly {
		targets, _ := Targets(inv.Target, inv.Named, nil) // nil: to print, both; never an error
		return nil, r.Print(Script(targets, inv.SchemaName, names, inv.Config))
	}
	var findings []Finding
	var cursors map[string]backfill.Cursor
	err = r.Open(outbox.CheckNothing, func(s *outbox.Snapshot) error {
		inv.Registry, inv.Now, inv.Prefix = reg, r.Now(), r.Next(nil)
		findings, cursors, err = InSnapshot(ctx, s, inv, names)
		return err
	})
	if err != nil {
		return nil, err
	}
	if sample <= 0 || len(cursors) == 0 {
		return findings, nil
	}
	if err := wait(ctx, sample); err != nil {
		return nil, err
	}
	err = r.Open(outbox.CheckNothing, func(s *outbox.Snapshot) (err error) {
		findings, err = Resample(s, findings, cursors, sample, r.Next(nil))
		return err
	})
	Sort(findings)
	return findings, err
}

// Doc is the findings' document: one table, or (wide, -o wide) the compact table with
// every finding's card below, or (cards, a terminal) the compact table whose details are
// the command wide writes.
func Doc(fs []Finding, wide, cards bool, wideCommand func() string) render.Doc {
	doc := Table(fs)
	switch {
	case wide:
		doc = append(Compact(fs, "below, and with -o json"), Cards(fs)...)
	case cards:
		doc = Compact(fs, wideCommand())
	}
	return doc
}
