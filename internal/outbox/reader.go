package outbox

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Reader is what a read command's service takes of its invocation: whether it prints its
// SQL instead of running it, how a script is printed, and the one way it reaches the
// database, a read snapshot opened by cmd (the flags' connection, budget and --deployment
// applied; cmd's factory.reader). A service builds its script, opens its snapshot, reads
// and returns its document: cmd keeps its flags, Validate and the one call.
type Reader struct {
	// PrintOnly is --print-sql, or no database given: the service prints its script.
	PrintOnly bool
	// Print prints statements as they would run (with the connect hint when no database
	// was given).
	Print func(query.Script) error
	// Open opens a read snapshot of the target the flags select whose catalog must hold
	// check, and calls fn.
	Open func(check Check, fn func(*Snapshot) error) error
	// OpenOn opens a read snapshot of table t rather than the flags' target, checking
	// nothing (the webhook mailboxes: their commands name no outbox), and calls fn.
	OpenOn func(t query.Target, fn func(*Snapshot) error) error
	// Target is the outbox table the flags select.
	Target func() (query.Target, error)
	// PrintSchema is what printed SQL knows without a database: --deployment.
	PrintSchema query.Schema
	// Printer says a service's notes and warnings on stderr.
	Printer *render.Printer
	// Registry is the enums the names resolve with (--enums), read on demand: a printed
	// script needs none.
	Registry func() (*enums.Registry, error)
	// Now is the clock of the answers' ages and next attempts.
	Now func() time.Time
	// Next writes a suggested command line: the invocation's --context, --schema, …, the
	// flags naming the table t (nil: none) and args.
	Next func(t *query.Target, args ...string) string
}

// Guard is the read of the kill switches that guard t, as printed SQL shows it: from the
// options table Sentry reads for t's silo under --deployment (PrintSchema).
func (r Reader) Guard(t query.Target) query.Statement {
	return options.KillswitchStatement(t.Schema, options.OptionTableFor(t.Silo, r.PrintSchema))
}

// Read prints the script build makes for t (PrintOnly), or runs it in one read snapshot of
// the outbox table, build given the snapshot's target, and returns its results: none when
// it printed.
func (r Reader) Read(t query.Target, build func(query.Target) query.Script) ([]*query.Result, error) {
	if r.PrintOnly {
		return nil, r.Print(build(t))
	}
	var results []*query.Result
	err := r.Open(CheckOutbox, func(s *Snapshot) (err error) {
		results, err = RunScript(s, build(s.Target))
		return err
	})
	return results, err
}

// Failure is a read's failure that says its own account ("no outbox row with id 7 …"): a
// runtime failure (exit 1) whose line is never reworded as "interrupted" (cmd/exit.go's
// account).
type Failure struct{ msg string }

// Failuref is a Failure said as format says.
func Failuref(format string, args ...any) error {
	return &Failure{msg: fmt.Sprintf(format, args...)}
}

func (e *Failure) Error() string { return e.msg }

// Account marks the error as its own account of what happened.
func (e *Failure) Account() bool { return true }

// RunScript runs every statement of script in s, in order, and returns their results.
func RunScript(s *Snapshot, script query.Script) ([]*query.Result, error) {
	var results []*query.Result
	for _, st := range script {
		res, err := s.Run(st)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}
