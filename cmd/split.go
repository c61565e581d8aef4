package cmd

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
)

// splitSide is one silo of a split verify or replicate: its context's connection (nil when
// only printing), schema and cell name.
type splitSide struct {
	context string
	conn    *db.Conn
	schema  string
	cell    string
	silo    string // the silo its settings under the flags say (--silo's default: cell)
}

// splitSides are the cell's and the control silo's sides; close closes what was opened.
type splitSides struct {
	cell, control splitSide
}

func (s *splitSides) close(ctx context.Context) {
	for _, c := range []*db.Conn{s.cell.conn, s.control.conn} {
		if c != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}
}

// cellName is the name the cell's replica rows carry (region_name): the cell context's
// cell setting (or --cell), else the context's name.
func (s *splitSides) cellName() string {
	if s.cell.cell != "" {
		return s.cell.cell
	}
	return s.cell.context
}

// checkAssumedCell checks the cell a split command assumed from the cell context's name (it
// has no cell: setting and no --cell was given) against the control silo's organization
// mappings (outbox.CheckAssumedCell): a note, or a usage error when none names it.
func (s *splitSides) checkAssumedCell(ctx context.Context, p interface{ Notef(string, ...any) }, command string) error {
	if s.cell.cell != "" {
		return nil
	}
	return outbox.CheckAssumedCell(ctx, s.control.conn, s.control.schema, s.cell.context, s.control.context, command, p.Notef)
}

// splitSides opens the two contexts of --context CELL,CONTROL, each with its settings under
// the flags (useContext) on a connection of its own (connect false: the settings only, to
// print the SQL); nil when the command was given one target.
func (a *app) splitSides(ctx context.Context, command string, connect bool) (*splitSides, error) {
	if len(a.split) != 2 {
		return nil, nil
	}
	out := &splitSides{}
	for i, one := range a.split {
		sub := a.fork(a.io)
		sub.split = nil
		if err := sub.useContext(a.cmd, one); err != nil {
			out.close(ctx)
			return nil, err
		}
		side := splitSide{context: one.Name, schema: sub.g.Schema, cell: sub.g.Cell, silo: sub.g.Silo}
		if connect {
			conn, err := sub.connect(ctx, command)
			if err != nil {
				out.close(ctx)
				return nil, failuref("context %s: %s", one.Name, oneLine(db.RedactDSN(err.Error())))
			}
			side.conn = conn
		}
		if i == 0 {
			out.cell = side
		} else {
			out.control = side
		}
	}
	return out, nil
}
