// Package repair holds outboxctl's mutations of an outbox table, each in one shape (the
// kill-switch Change's): Script is what --print-sql prints, Plan reads what the change
// would do without writing (the lines the operator confirms), and Apply writes it: the
// rows archived before any DELETE, a COMMIT that got no answer settled on a fresh
// connection, and a Summary to render with the audit lines to write. cmd runs every one
// through one runner (cmd/mutation.go); a caller without cobra (outboxctl top) can too.
package repair

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Mutation is the one shape of a repair.
type Mutation interface {
	// Script is the SQL --print-sql prints (each text printed as it is), given the
	// BEGIN's preamble; it reads nothing.
	Script(preamble []string) ([]string, error)
	// Plan reads, on conn and without writing, what Apply would change.
	Plan(ctx context.Context, conn *db.Conn) (Plan, error)
	// Apply makes the change p planned, on conn.
	Apply(ctx context.Context, conn *db.Conn, p Plan) (Summary, error)
}

// Env is what a repair takes from its caller: how to connect again (a COMMIT in doubt is
// settled on a fresh connection), where its warnings go, the clock, and how a next command
// is written. None of it is cobra's.
type Env struct {
	// Connect opens a connection for command (its application_name).
	Connect    func(ctx context.Context, command string) (*db.Conn, error)
	Deployment query.Deployment // --deployment: which options table Sentry reads
	// Schema is --schema as given ("" for the search_path): the ledger's record of where.
	Schema string
	Warnf  func(format string, args ...any)
	Notef  func(format string, args ...any)
	Now    func() time.Time
	// Next is a suggested command line (outboxctl and the invocation's context flags, the
	// flags naming t's table when t is not nil, then args).
	Next func(t *query.Target, args ...string) string
	// Progress starts a progress line of total units (nil: none).
	Progress func(ctx context.Context, label string, total int64, approx bool) Progress
	// Time formats a next attempt in a plan line (the printer's one time format).
	Time func(time.Time) string
}

// Progress is a live progress line: Set moves it, Done ends it.
type Progress interface {
	Set(n int64)
	Done()
}

// Plan is what a mutation asks the operator to confirm, and the one type that renders its
// lines: its target (context, database, schema, table), what it will do there, and the
// archive it will write.
type Plan struct {
	// Target is the "target: …" line; "" leaves it to the runner (the invocation's context,
	// database, schema and table).
	Target string
	Lines  []string
	// ArchiveSize is the line estimating the archive's size and the free space beside it
	// ("" when the plan archives nothing or no estimate was made).
	ArchiveSize string
	// Shards is how many shards the change touches: above a hundred, a terminal asks for
	// the count typed back rather than a y.
	Shards int
	// Nothing, when set, says there is nothing to do: the runner says it and stops, with
	// no prompt; Lines, when given with it, are noted first, one "  - " each (restore shows
	// what it found even when every row is back already).
	Nothing string
	// NothingDoc is the document the runner prints after Nothing, for a script that reads
	// one whatever happened (nil: none).
	NothingDoc render.Doc
	// NothingErr is the error the run ends with after NothingDoc: restore's verdict when
	// rows were left out though nothing was inserted (exit 6 with its summary printed).
	NothingErr error
	// Quiet, with no Nothing, also says there is nothing to do, and nothing to say about
	// it: replicate's dry run with nothing to write has always ended silently.
	Quiet bool
	// Stop, when set, ends the run once the plan is shown, with no prompt, with Stop's
	// error: drain's own --dry-run checks its handler as a real run would before its claim
	// (a dry run that only showed the plan would not say the receiver cannot be reached).
	Stop func(ctx context.Context) error
	// Refused, when set, ends the run once the plan is shown, with no prompt: the command
	// line as it stands is refused (a kill-switched shard without --ignore-killswitch). The
	// plan comes first so the operator sees what was refused.
	Refused *Refusal
	// detail is what Plan read for Apply (the service's own).
	detail any
}

// Render is the plan as shown, one line each: the target (target, when the plan names
// none), what it does, the archive's size.
func (p Plan) Render(target string) []string {
	if p.Target != "" {
		target = p.Target
	}
	out := append([]string{target}, p.Lines...)
	if p.ArchiveSize != "" {
		out = append(out, p.ArchiveSize)
	}
	return out
}

// Refusal is a plan refused as the command line stands: exit 2, with the command line again
// plus Add (the flag that lets it through) as its Try: line.
type Refusal struct {
	Msg string
	Add []string
}

// Shown is the plan as a dry run or a refusal shows it, with no prompt: its target line
// only when it names one (drain SCOPE ID's has always shown its lines alone there).
func (p Plan) Shown() []string {
	if p.Target != "" {
		return p.Render("")
	}
	out := append([]string{}, p.Lines...)
	if p.ArchiveSize != "" {
		out = append(out, p.ArchiveSize)
	}
	return out
}

// Summary is what a mutation did: the document to render, the audit lines to write, and
// the error the run ends with once both are out (a COMMIT in doubt, a state not read after).
type Summary struct {
	Doc   render.Doc
	Audit []Audit
	Err   error
}

// Audit is one audit line: the command and its fields.
type Audit struct {
	Command string
	Fields  map[string]any
}

// Failure is a repair's failure that says its own account of what happened (a settled
// COMMIT, a state not read after): exit 1, never reworded as an interrupt. A bulk run's
// account may say it was interrupted (130) or did only part of its shards (6): cmd/exit.go
// maps those, as it maps every meaning to its exit code.
type Failure struct {
	msg                  string
	interrupted, partial bool
}

func (e *Failure) Error() string { return e.msg }

// Account marks the error as its own account (cmd/exit.go).
func (e *Failure) Account() bool { return true }

// Interrupted says a signal stopped the run, said in its own account.
func (e *Failure) Interrupted() bool { return e.interrupted }

// Partial says the run did some of its shards and failed others.
func (e *Failure) Partial() bool { return e.partial }

func failuref(format string, args ...any) error {
	return &Failure{msg: fmt.Sprintf(format, args...)}
}

func interruptedf(format string, args ...any) error {
	return &Failure{msg: fmt.Sprintf(format, args...), interrupted: true}
}

func partialf(format string, args ...any) error {
	return &Failure{msg: fmt.Sprintf(format, args...), partial: true}
}
