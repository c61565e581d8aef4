package cmd

import (
	"context"
	"io"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// factory is what a command takes from outside, built once from the app (the model is gh's
// cmdutil.Factory): fields for what the global flags decided, funcs for what is made on
// demand (the registry, a connection, a snapshot on it), and the parts a test replaces (the
// prompter, the audit line, the progress line, the clock, the streams, the environment). A
// run function takes the factory and uses the fields it needs; a test builds one from an
// app on test streams with a real DSN and swaps the rest.
//
// The repairs (reschedule, compact, skip, restore), the drain, the kill-switch changes and
// demo seed and drop take it; the read commands still take readDeps (see docs/architecture.md).
type factory struct {
	printer *render.Printer
	// printSQL is --print-sql: print, connect to nothing. printOnly is printSQL or no
	// database given (a kill-switch change prints its SQL then, with the connect hint).
	printSQL, printOnly bool
	printScript         func(query.Script) error // prints statements as they would run
	printSchema         query.Schema             // what printed SQL knows without a database: --deployment
	schema              string                   // --schema: restore's destination when given
	demoSchema          string                   // the schema demo seed and drop work in
	requireDB           func(command string) error
	connect             func(ctx context.Context, command string) (*db.Conn, error)
	// session opens a read-only snapshot with the catalog on the connection the command
	// holds: one connection per command.
	session  func(ctx context.Context, conn *db.Conn, fn func(*session) error) error
	registry func() (*enums.Registry, error)
	confirm  func(command string, plan []string, yes bool) error
	audit    func(command string, fields map[string]any)
	progress func(ctx context.Context, label string, total int64, approx bool) *workProgress
	now      func() time.Time
	stderr   io.Writer           // a plan shown without a prompt, the archive's path
	getenv   func(string) string // a drain handler's $VARS
}

func (a *app) factory() factory {
	printOnly, noDB := a.wantsSQL()
	return factory{
		printer: a.printer(), printSQL: a.g.PrintSQL, printOnly: printOnly, schema: a.g.Schema, demoSchema: a.demoSchema(), printSchema: a.printSchema(),
		printScript: func(s query.Script) error { return a.printScript(s, noDB) },
		requireDB:   a.requireDatabase, connect: a.connect, session: a.readSessionOn, registry: a.registry,
		confirm: a.confirm, audit: a.audit, progress: a.progress, now: time.Now,
		stderr: a.io.Err, getenv: a.getenv,
	}
}
