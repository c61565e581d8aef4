package cmd

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
)

// splitSides opens the two contexts of --context CELL,CONTROL (outbox.SplitSides), each
// with its settings under the flags (useContext) on a connection of its own (connect false:
// the settings only, to print the SQL); nil when the command was given one target.
func (a *app) splitSides(ctx context.Context, command string, connect bool) (*outbox.SplitSides, error) {
	if len(a.split) != 2 {
		return nil, nil
	}
	out := &outbox.SplitSides{}
	for i, one := range a.split {
		sub, err := a.on(one, a.io)
		if err != nil {
			out.Close(ctx)
			return nil, err
		}
		side := outbox.SplitSide{Context: one.Name, Side: outbox.Side{Schema: sub.g.Schema}, Cell: sub.g.Cell, Silo: sub.g.Silo}
		if connect {
			conn, err := sub.connect(ctx, command)
			if err != nil {
				out.Close(ctx)
				return nil, failuref("context %s: %s", one.Name, oneLine(db.RedactDSN(err.Error())))
			}
			side.Conn = conn
		}
		if i == 0 {
			out.Cell = side
		} else {
			out.Control = side
		}
	}
	return out, nil
}
