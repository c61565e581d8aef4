package repair

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// DemoSeed creates the demo schema and fills it (outboxctl demo seed), through the runner
// like every mutation. Its plan reads nothing, so it is an opener whose Open opens nothing:
// the confirmation (and a dry run) needs no server, and Apply connects once it is given,
// as demo seed always has. It has no script: cmd refuses --print-sql before the runner.
type DemoSeed struct {
	Env
	Options fixture.DemoOptions
	// Notes is where the closing line goes, written as it stands (its schema and its
	// command are quoted by textsafe.Command, to be pasted).
	Notes io.Writer
}

// DemoDrop drops the demo schema (outboxctl demo drop); fixture.Drop refuses a schema demo
// seed did not create. Like DemoSeed, its plan reads nothing and Apply connects.
type DemoDrop struct {
	Env
	DemoSchema string // the schema to drop (--schema, else the demo's default)
	Notes      io.Writer
}

// errNoScript is a demo's Script: cmd refuses --print-sql first, so it is never printed.
var errNoScript = errors.New("a demo command cannot print its work as SQL") //nolint:gochecknoglobals // sentinel

// Open opens nothing: Apply connects after the confirmation.
func (*DemoSeed) Open(context.Context) (func(), error) { return func() {}, nil }

// Script is none: see errNoScript.
func (*DemoSeed) Script([]string) ([]string, error) { return nil, errNoScript }

// Plan says what the seed creates; it reads nothing.
func (s *DemoSeed) Plan(context.Context, *db.Conn) (Plan, error) {
	return Plan{Lines: fixture.DemoPlan(s.Options)}, nil
}

// Apply connects, seeds under a progress line of the rows written, and says where.
func (s *DemoSeed) Apply(ctx context.Context, _ *db.Conn, _ Plan) (Summary, error) {
	conn, err := s.Connect(ctx, "demo")
	if err != nil {
		return Summary{}, err
	}
	defer conn.Close(ctx)
	do := s.Options
	var progress Progress = noProgress{}
	if s.Progress != nil {
		progress = s.Progress(ctx, "seeded rows", fixture.DemoRows(do), false)
	}
	do.Progress = progress.Set
	err = fixture.Seed(ctx, conn, do)
	progress.Done()
	if err != nil {
		return Summary{}, db.Classify(err, "demo seed")
	}
	// The schema is the operator's text: quoted as one word, so the line can be pasted.
	fmt.Fprintf(s.Notes, "seeded schema %s; try: %s\n", textsafe.Command(do.Schema), textsafe.Command("outboxctl", "--schema", do.Schema, "shards", "--stuck"))
	return Summary{}, nil
}

// Open opens nothing: Apply connects after the confirmation.
func (*DemoDrop) Open(context.Context) (func(), error) { return func() {}, nil }

// Script is none: see errNoScript.
func (*DemoDrop) Script([]string) ([]string, error) { return nil, errNoScript }

// Plan says what the drop removes; it reads nothing.
func (d *DemoDrop) Plan(context.Context, *db.Conn) (Plan, error) {
	return Plan{Lines: []string{"drop schema " + d.DemoSchema + " and everything in it"}}, nil
}

// Apply connects and drops the schema, if demo seed created it.
func (d *DemoDrop) Apply(ctx context.Context, _ *db.Conn, _ Plan) (Summary, error) {
	conn, err := d.Connect(ctx, "demo")
	if err != nil {
		return Summary{}, err
	}
	defer conn.Close(ctx)
	if err := fixture.Drop(ctx, conn, d.DemoSchema); err != nil {
		return Summary{}, db.Classify(err, "demo drop")
	}
	fmt.Fprintf(d.Notes, "dropped schema %s\n", d.DemoSchema)
	return Summary{}, nil
}
