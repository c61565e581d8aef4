package outbox

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/query"
)

// MonolithCell is the cell name of a monolith's mappings: Sentry's SENTRY_MONOLITH_REGION.
const MonolithCell = "--monolith--"

// SplitSide is one silo of a split verify or replicate (--context CELL,CONTROL): its
// context's name, its database (Side: the connection, nil when only printing, and the
// schema), its cell setting (or --cell) and the silo its settings under the flags say
// (--silo's default: cell).
type SplitSide struct {
	Context string
	Side
	Cell string
	Silo string
}

// SplitSides are the cell's and the control silo's sides.
type SplitSides struct {
	Cell, Control SplitSide
}

// Close closes what was opened.
func (s *SplitSides) Close(ctx context.Context) {
	for _, side := range []SplitSide{s.Cell, s.Control} {
		if side.Conn != nil {
			side.Conn.Close(context.WithoutCancel(ctx))
		}
	}
}

// CellName is the name the cell's replica rows carry (region_name): the cell context's
// cell setting (or --cell), else the context's name.
func (s *SplitSides) CellName() string {
	if s.Cell.Cell != "" {
		return s.Cell.Cell
	}
	return s.Cell.Context
}

// CheckAssumedCell checks the cell a split command assumed from the cell context's name (it
// has no cell: setting and no --cell was given) against the control silo's organization
// mappings (CheckAssumedCell): a note, or a usage error when none names it.
func (s *SplitSides) CheckAssumedCell(ctx context.Context, notef func(string, ...any), command string) error {
	if s.Cell.Cell != "" {
		return nil
	}
	return CheckAssumedCell(ctx, s.Control.Conn, s.Control.Schema, s.Cell.Context, s.Control.Context, command, notef)
}

// VerifyCell is the cell verify compares: the one given (--cell, or a context's cell
// setting); else, on two contexts (s), the cell context's, checked against the control
// silo's mappings unless only printing (check false); else the monolith's.
func VerifyCell(ctx context.Context, s *SplitSides, given string, check bool, notef func(string, ...any)) (string, error) {
	switch {
	case given != "":
		return given, nil
	case s == nil:
		return MonolithCell, nil
	case check:
		if err := s.CheckAssumedCell(ctx, notef, "verify"); err != nil {
			return "", err
		}
	}
	return s.CellName(), nil
}

// OnSides has v compare the two contexts of s, each one's next lines written by nextOn
// (its context rather than both: an outbox command reads or writes one silo's outbox).
func (v *Verify) OnSides(s *SplitSides, nextOn func(side SplitSide, t *query.Target, args ...string) string) {
	of := func(side SplitSide) *VerifyContext {
		return &VerifyContext{Name: side.Context, Side: side.Side,
			Next: func(t *query.Target, args ...string) string { return nextOn(side, t, args...) }}
	}
	v.Cell, v.Control = of(s.Cell), of(s.Control)
}
