package cmd

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// factory is what a command takes from outside, built once from the app (the model is gh's
// cmdutil.Factory): fields for what the global flags decided, funcs for what is made on
// demand (the registry, a connection, a snapshot, the config file), and the parts a test
// replaces (the prompter, the audit line, the progress line, the clock, the streams, the
// environment), in groups by what they are for. It is cmd's one dependency type: every run
// function takes it as its dependency parameter and uses the fields it needs
// (cmd/architecture_test.go guards it); a test builds one from an app on test streams with a
// real DSN (app.factory) and swaps the rest.
//
// The run functions take the factory itself rather than copying fields into their options
// (gh's other half): the options stay what the flags and arguments say, so Validate and
// the flag-parsing tests see nothing else, and a run function's signature names one type.
type factory struct {
	printer   *render.Printer
	sql       sqlOutput
	db        database
	registry  func() (*enums.Registry, error)
	buildInfo func() (*debug.BuildInfo, bool)
	change    changeHooks
	term      terminal
	clock     clock
	getenv    func(string) string // a drain handler's $VARS, the contexts' environment
	suggest   commandLines
	format    format
}

// sqlOutput is what a command that prints its SQL needs.
type sqlOutput struct {
	// printSQL is --print-sql: print, connect to nothing. printOnly is printSQL or no
	// database given (a read or a kill-switch change prints its SQL then, with the connect
	// hint).
	printSQL, printOnly bool
	printScript         func(query.Script) error      // prints statements as they would run
	printText           func(string) error            // printScript for a rendered script (psql's)
	preamble            func(command string) []string // BEGIN and the SET LOCALs, for a printed mutation script
	printSchema         query.Schema                  // what printed SQL knows without a database: --deployment
}

// database is the database the flags (or a context) select and how a command reaches it.
type database struct {
	deployment query.Deployment // --deployment (auto when not given)
	schema     string           // --schema: restore's destination when given
	demoSchema string           // the schema demo seed and drop work in
	// target is the outbox table the flags select; the runners resolve it before the run
	// function is called (runOnShard, runWithFactory) and pass it in.
	target    func() (query.Target, error)
	requireDB func(command string) error
	connect   func(ctx context.Context, command string) (*db.Conn, error)
	// snapshot connects and opens a read snapshot (outbox.Open) of what r says: every read
	// command's one way to the database.
	snapshot func(ctx context.Context, command string, r readSpec, fn func(*outbox.Snapshot) error) error
	// statementTimeout is --statement-timeout, which a pass's budget is a share of.
	statementTimeout time.Duration
}

// changeHooks are what a mutation asks for beyond its database: the confirmation, the audit
// line and the name of where it writes.
type changeHooks struct {
	confirm func(command string, p repair.Plan, yes bool) error // shows the plan, asks (cmd/confirm.go)
	audit   func(command string, fields map[string]any)
	// where names the database a mutation writes (context, user@host:port/database), for its plan.
	where func() string
}

// terminal is stderr and what is drawn on it.
type terminal struct {
	stderr   io.Writer // a plan shown without a prompt, the archive's path, a sample's note
	errTTY   bool      // stderr is a terminal: a progress line shows
	progress func(ctx context.Context, label string, total int64, approx bool) *workProgress
}

// clock is the time, and a second sample's wait.
type clock struct {
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
}

// commandLines are the command lines a command suggests (nextcmd.go, cmd/bulk_resume.go).
type commandLines struct {
	// next is a suggested command line: the invocation's --context, --schema, …, the flags
	// naming the table (nil: none) and args; again is the invocation's own command line with
	// words added (fallback + them when unknown), for a Try: line.
	next  func(t *query.Target, args ...string) string
	again func(fallback string, add ...string) string
	// resumeCommand is the line that goes on with bulk run id, againWithout the invocation
	// without some flags ("" when unknown).
	resumeCommand func(command, id string) string
	againWithout  func(drop map[string]bool, add ...string) string
}

// format is what the output format decides beyond the printer.
type format struct {
	// lines is true without -o: enums resolve prints one line per match.
	lines bool
	// wide is -o wide (one context): doctor's compact table with every finding's card below.
	wide bool
	// cards is doctor's findings as cards (a terminal, table or markdown, one context):
	// merged findings are one table.
	cards bool
}

func (a *app) factory() factory {
	printOnly, noDB := a.wantsSQL()
	f, _ := render.ParseFormat(a.g.Output) // validated in PersistentPreRunE
	return factory{
		printer: a.printer(),
		sql: sqlOutput{printSQL: a.g.PrintSQL, printOnly: printOnly, printSchema: a.printSchema(), preamble: a.writePreamble,
			printScript: func(s query.Script) error { return a.printScript(s, noDB) },
			printText:   func(s string) error { return a.printSQLText(s, noDB) }},
		db: database{deployment: a.deployment(), schema: a.g.Schema, demoSchema: a.demoSchema(), target: a.target,
			requireDB: a.requireDatabase, connect: a.connect, snapshot: a.snapshot, statementTimeout: a.g.StatementTimeout},
		registry: a.registry, buildInfo: debug.ReadBuildInfo,
		change: changeHooks{confirm: a.confirm, audit: a.audit, where: a.where},
		term:   terminal{stderr: a.io.Err, errTTY: a.io.ErrTTY, progress: a.progress},
		clock:  clock{now: time.Now, after: time.After},
		getenv: a.getenv,
		// The bulk repairs' resume lines (cmd/bulk_resume.go).
		suggest: commandLines{next: a.nextCommand, again: a.againOr, resumeCommand: a.resumeCommand, againWithout: a.againWithout},
		format: format{lines: a.g.Output == "",
			wide:  !a.merged && f == render.FormatWide,
			cards: !a.merged && (f == render.FormatTable || f == render.FormatMarkdown || (f == render.FormatAuto && a.io.OutTTY))},
	}
}

// sampleAgain says on stderr that what is read again in dur, and waits (or returns on
// Ctrl-C): backfill status's and doctor's second sample of the backfill cursors.
func (f factory) sampleAgain(ctx context.Context, what string, dur time.Duration) error {
	fmt.Fprintf(f.term.stderr, "sampling the %s again in %s…\n", what, dur)
	select {
	case <-f.clock.after(dur):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
