package repair

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
)

// ReplicateConnsOf opens the silos' connections for replicate: with two contexts
// (--context CELL,CONTROL: split opens them) each one's, else the invocation's database
// (one: checked to be given, then connected). cell is --cell: without it the cell
// context's name, or the monolith's.
func ReplicateConnsOf(ctx context.Context, split func(ctx context.Context) (*outbox.SplitSides, error), one func(ctx context.Context) (*db.Conn, error), schema, cell string) (ReplicateConns, error) {
	sides, err := split(ctx)
	if err != nil {
		return ReplicateConns{}, err
	}
	if sides != nil {
		if cell == "" {
			cell = sides.CellName()
		}
		return ReplicateConns{Cell: sides.Cell.Conn, Control: sides.Control.Conn, CellSchema: sides.Cell.Schema,
			ControlSchema: sides.Control.Schema, CellName: cell, Close: func() { sides.Close(ctx) }}, nil
	}
	conn, err := one(ctx)
	if err != nil {
		return ReplicateConns{}, err
	}
	if cell == "" {
		cell = outbox.MonolithCell
	}
	return ReplicateConns{Cell: conn, Control: conn, CellSchema: schema, ControlSchema: schema, CellName: cell,
		Close: func() { conn.Close(context.WithoutCancel(ctx)) }}, nil
}
