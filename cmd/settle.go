package cmd

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// settleArchive marks, before a run appends to the archive at path (--archive, a resume's
// file), the batches it holds whose outcome it does not record (a run killed or out of disk
// between a DELETE and its marker), from what t's table holds of their ids
// (drain.SettleArchive), and says what it found. conn nil: a connection of its own. A settle
// that fails costs the run nothing: restore settles such batches itself.
func (d factory) settleArchive(ctx context.Context, conn *db.Conn, path string, t query.Target) {
	if path == "" {
		return
	}
	if conn == nil {
		c, err := d.connect(ctx, "settle-archive")
		if err != nil {
			d.printer.Warnf("could not settle the archive %s's batches with no marker (%s): restore settles them against the table", render.Escape(path), oneLine(err.Error()))
			return
		}
		defer c.Close(context.WithoutCancel(ctx))
		conn = c
	}
	settled, err := drain.SettleArchive(ctx, conn, path, t)
	if err != nil {
		d.printer.Warnf("could not settle the archive %s's batches with no marker (%s): restore settles them against the table", render.Escape(path), oneLine(err.Error()))
		return
	}
	var committed, rows, not int
	for _, s := range settled {
		if s.Outcome == drain.Committed {
			committed, rows = committed+1, rows+s.Rows
		} else {
			not++
		}
	}
	if len(settled) > 0 {
		d.printer.Notef("%s: %d batch(es) of an earlier run had no marker, settled against the table and marked: %d committed (%d row(s) deleted and archived: restore puts them back), %d not committed (their rows are still in the table)",
			render.Escape(path), len(settled), committed, rows, not)
	}
}
