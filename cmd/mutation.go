package cmd

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// runMutation is every mutation's run, the one skeleton: with --print-sql it prints the
// mutation's script and connects to nothing; otherwise it needs a database (a context
// that forbids writes refuses here, exit 10), connects once, reads the plan, asks for the
// confirmation (--yes, --dry-run), applies it, writes the audit lines and renders the
// summary, then ends with the summary's error (a COMMIT in doubt, a state not read after).
// A mutation with input of its own (restore's archive) reads it first (preparer), one
// whose script is large writes it as it renders (scriptWriter), one that opens its own
// connections (replicate's two silos) is opened, then planned, then printed (opener), and
// one that holds something for the whole run (drain's handler) begins before it connects
// (lifetime). A plan may end the run once shown, with no prompt (Plan.Stop, Plan.Refused).
func runMutation(ctx context.Context, d factory, command string, m repair.Mutation, yes bool) error {
	name := strings.Fields(strings.TrimPrefix(command, "outboxctl "))[0]
	if alone, ok := m.(interface{ WithoutDatabase() bool }); ok && alone.WithoutDatabase() && d.printOnly {
		// A kill-switch change prints its SQL, and how to connect, without a database.
		return printTexts(m, nil, d.printText)
	}
	var conn *db.Conn // an opener's Plan and Apply take none: it holds its own
	if o, ok := m.(opener); ok {
		closeAll, err := o.Open(ctx)
		if err != nil {
			return err
		}
		defer closeAll()
	} else {
		if d.printSQL {
			if ready, err := prepare(m); !ready || err != nil {
				return err
			}
			if w, ok := m.(scriptWriter); ok {
				return d.printer.SQLTo(func(out io.Writer) error { return w.WriteScript(d.preamble(name), out) })
			}
			return printTexts(m, d.preamble(name), d.printer.SQL)
		}
		if err := d.requireDB(command); err != nil {
			return err
		}
		if ready, err := prepare(m); !ready || err != nil {
			return err
		}
		if l, ok := m.(lifetime); ok {
			end, err := l.Hold(ctx)
			if err != nil {
				return err
			}
			defer end()
		}
		var err error
		if conn, err = d.connect(ctx, name); err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(ctx))
	}
	p, err := m.Plan(ctx, conn)
	if err != nil {
		return err
	}
	if d.printSQL { // an opener's script: what its plan read
		return printTexts(m, d.preamble(name), d.printer.SQL)
	}
	if p.Nothing != "" || p.Quiet {
		return d.nothingToDo(p)
	}
	if p.Refused != nil || p.Stop != nil {
		repair.ShowPlan(d.stderr, p.Shown())
		if r := p.Refused; r != nil {
			return usageErrorf(d.again(command, r.Add...), "%s", r.Msg)
		}
		return p.Stop(ctx)
	}
	if err := d.confirm(command, p, yes); err != nil {
		return err
	}
	// The audit lines are written even when Apply failed: a mutation that returns them
	// with its error records the attempt (a mailbox UPDATE that failed halfway).
	sum, err := m.Apply(ctx, conn, p)
	for _, a := range sum.Audit {
		d.audit(a.Command, a.Fields)
	}
	if err != nil {
		return err
	}
	if sum.Doc == nil { // a demo's outcome is its note alone
		return sum.Err
	}
	if err := d.printer.Print(sum.Doc); err != nil {
		return err
	}
	return sum.Err
}

// nothingToDo says a plan with nothing to do: its lines, its word, its document, and the
// run ends with its error.
func (d factory) nothingToDo(p repair.Plan) error {
	for _, l := range p.Lines {
		d.printer.Notef("  - %s", l)
	}
	if p.Nothing != "" {
		d.printer.Notef("%s", p.Nothing)
	}
	if p.NothingDoc != nil {
		if err := d.printer.Print(p.NothingDoc); err != nil {
			return err
		}
	}
	return p.NothingErr
}

// lifetime is a mutation that holds something for the whole run, begun once a database is
// known to be given and before the connection, ended on every path out: drain's handler (a
// stream: co-process is one process for the run; a typo in --handler is refused before
// anything connects). Not for --print-sql: a printed script delivers nothing.
type lifetime interface {
	Hold(ctx context.Context) (end func(), err error)
}

// opener is a mutation that opens its own connections (replicate: with two contexts, the
// cell's and the control silo's) and reads before it can print its script: the runner
// opens it, plans, then prints (--print-sql) or confirms and applies. It asks for a
// database itself, for --print-sql too (a split replicate's are its contexts').
type opener interface {
	Open(ctx context.Context) (closeAll func(), err error)
}

// preparer is a mutation that reads input of its own before it connects (restore: the
// archive file), for --print-sql too, and otherwise once a database is known to be given:
// a file it refuses is refused before any connection. false means there is nothing to do,
// said already.
type preparer interface{ Prepare() (bool, error) }

// prepare runs m's Prepare, when it has one.
func prepare(m repair.Mutation) (bool, error) {
	if p, ok := m.(preparer); ok {
		return p.Prepare()
	}
	return true, nil
}

// scriptWriter is a mutation whose script is written as it is rendered, never held whole:
// restore's INSERTs carry payloads of up to hundreds of MiB.
type scriptWriter interface {
	WriteScript(preamble []string, w io.Writer) error
}

// printTexts prints m's script, each text with print.
func printTexts(m repair.Mutation, preamble []string, print func(string) error) error {
	texts, err := m.Script(preamble)
	if err != nil {
		return err
	}
	for _, text := range texts {
		if err := print(text); err != nil {
			return err
		}
	}
	return nil
}

// when is a time as a plan line shows it: the printer's format, relative to now.
func (d factory) when(t time.Time) string { return render.FormatTime(t, d.now(), d.printer.Time) }

// repairEnv is what internal/repair takes from the invocation.
func (d factory) repairEnv() repair.Env {
	env := repair.Env{Connect: d.connect, Deployment: d.deployment, Schema: d.schema, Now: d.now, Next: d.next}
	if d.printer != nil {
		env.Warnf, env.Notef = d.printer.Warnf, d.printer.Notef
		env.Time = func(t time.Time) string { return render.FormatDue(t, d.printer.Now(), d.printer.Time) }
	}
	if d.progress != nil {
		env.Progress = func(ctx context.Context, label string, total int64, approx bool) repair.Progress {
			return d.progress(ctx, label, total, approx)
		}
	}
	return env
}
