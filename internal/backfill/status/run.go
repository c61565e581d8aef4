package status

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The run of backfill status: its SQL printed, or the status read through one connection
// and returned as the document, with the report for the command's verdict. cmd keeps the
// flags, Validate, the tables' selection and the verdict's meaning.

// Print prints what backfill status would read for selected: the psql script (printText)
// and, as comments, the Redis keys of the cursors (keyPrefix: --redis-key-prefix).
func Print(printText func(string) error, p *render.Printer, schema, keyPrefix string, selected []backfill.Table) error {
	script, err := Script(schema, selected)
	if err != nil {
		return err
	}
	if err := printText(script); err != nil {
		return err
	}
	return p.SQL(RedisComments(keyPrefix, selected))
}

// Run connects (connect), reads the status of selected from s (with every table whose
// cursor is stored added when all: no table was named, each cursor it could not name
// skipped with a warning) and returns its document and the report.
func (s Source) Run(ctx context.Context, connect func(context.Context) (*db.Conn, error), p *render.Printer, selected []backfill.Table, all bool, req Request) (render.Doc, Report, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, Report{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	s.Conn = conn
	if all {
		var skipped []error
		if selected, skipped, err = s.WithCursorTables(ctx, selected); err != nil {
			return nil, Report{}, err
		}
		for _, err := range skipped {
			p.Warnf("skipping a cursor whose %s", err.Error())
		}
	}
	req.Tables = selected
	rep, err := s.Status(ctx, req)
	if err != nil {
		return nil, rep, err
	}
	return Doc(p, rep), rep, nil
}

// Doc is the status's document; it says the notes and warnings.
func Doc(p *render.Printer, rep Report) render.Doc {
	if !p.Structured() {
		p.Notef("options read from %s", StoresText(rep.Schema))
	}
	// Each malformed cursor in full on stderr, in every format: a table cuts the note
	// column, and the verdict may name a malformed option instead.
	for _, r := range rep.Rows {
		if r.Status.State == backfill.StateMalformed {
			p.Warnf("the cursor of %s is malformed: %s", r.Table.Name, r.Status.Note)
		}
	}
	if !p.Structured() && rep.Sampled {
		p.Notef("rates are ids per minute of the cursor; Sentry backfills at most %d rows per minute across all tables", Budget)
	}
	return render.Doc{{Name: "backfill", Title: "Backfill status", Table: rep.Table()}}
}
