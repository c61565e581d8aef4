package outbox

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// VerifyContext is one context of a verify across two (--context CELL,CONTROL): its name,
// its database (Side) and how a next line is written on it.
type VerifyContext struct {
	Name string
	Side
	Next func(t *query.Target, args ...string) string
}

// Verify is verify's run: the request (its Cell the cell the control silo's rows are the
// cell's), in one database (Cell and Control nil: Connect, Schema, Next) or across the two
// contexts.
type Verify struct {
	Request VerifyRequest
	// Schema is --schema, the monolith's.
	Schema string
	// GivenCell is --cell (or a context's cell setting) as given: the cell a next replicate
	// must write for ("": none).
	GivenCell     string
	Cell, Control *VerifyContext
	Connect       func(ctx context.Context) (*db.Conn, error)
	Next          func(t *query.Target, args ...string) string
}

// split is the two contexts' sides as the printed script names them (nil: one database).
func (v Verify) split() *replica.Split {
	if v.Cell == nil {
		return nil
	}
	return &replica.Split{Cell: replica.Where{Context: v.Cell.Name, Schema: v.Cell.Schema},
		Control: replica.Where{Context: v.Control.Name, Schema: v.Control.Schema}}
}

// Script is what verify would run (replica.VerifyScript): in one database, or on the two
// contexts' sides.
func (v Verify) Script() query.Script {
	r := v.Request
	return replica.VerifyScript(r.Pairs, v.split(), v.Schema, r.Cell, r.IDs, r.Limit)
}

// Run runs every pair's comparison (VerifyMonolith, VerifySplit): in one read-only snapshot
// of the monolith, or in one of each side; it returns the document with its next lines and
// the results, for the verdict.
func (v Verify) Run(ctx context.Context) (render.Doc, []replica.Result, error) {
	results, err := v.results(ctx)
	if err != nil {
		return nil, nil, err
	}
	return replica.Doc(results, v.Request.Limit, v.commands()), results, nil
}

func (v Verify) results(ctx context.Context) ([]replica.Result, error) {
	if v.Cell != nil {
		return VerifySplit(ctx, v.Cell.Side, v.Control.Side, v.Request)
	}
	conn, err := v.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return VerifyMonolith(ctx, conn, v.Schema, v.Request)
}

// commands make verify's next lines: replicate on this invocation's database (both
// contexts when split), with the --cell verify was given (GivenCell; "": none), which
// names the cell a control model's rows are written for; an outbox command on the silo's
// outbox, which in a split deployment is the cell context's (the cell outbox) or the
// control context's (the control outbox, its rows for the cell), each context carrying its
// own schema.
func (v Verify) commands() replica.Commands {
	return replica.Commands{
		Repair: func(args ...string) string { return v.Next(nil, withCell(v.GivenCell, args)...) },
		Outbox: func(silo query.Silo, cell string, args ...string) string {
			t := query.Target{Silo: silo}
			if silo == query.SiloControl {
				t.Cell = cell
			}
			if v.Cell == nil {
				return v.Next(&t, args...)
			}
			side := v.Cell
			if silo == query.SiloControl {
				side = v.Control
			}
			return side.Next(&t, args...)
		},
	}
}

// withCell is args with --cell cell first ("": args alone): the cell a verify or replicate
// ran for, repeated in the one it suggests.
func withCell(cell string, args []string) []string {
	if cell == "" {
		return args
	}
	return append([]string{"--cell", cell}, args...)
}
