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
// A mutation with input of its own (restore's archive) reads it first (repair.Preparer), one
// whose script is large writes it as it renders (repair.ScriptWriter), one that opens its own
// connections (replicate's two silos) is opened, then planned, then printed (repair.Opener), and
// one that holds something for the whole run (drain's handler) begins before it connects
// (repair.Lifetime). A plan may end the run once shown, with no prompt (Plan.Stop, Plan.Refused).
func runMutation(ctx context.Context, d factory, command string, m repair.Mutation, yes bool) error {
	name := strings.Fields(strings.TrimPrefix(command, "outboxctl "))[0]
	if alone, ok := m.(interface{ WithoutDatabase() bool }); ok && alone.WithoutDatabase() && d.sql.printOnly {
		// A kill-switch change prints its SQL, and how to connect, without a database.
		return repair.PrintScript(m, nil, d.sql.printText)
	}
	var conn *db.Conn // an opener's Plan and Apply take none: it holds its own
	if o, ok := m.(repair.Opener); ok {
		closeAll, err := o.Open(ctx)
		if err != nil {
			return err
		}
		defer closeAll()
	} else {
		if d.sql.printSQL {
			if ready, err := repair.Prepare(m); !ready || err != nil {
				return err
			}
			if w, ok := m.(repair.ScriptWriter); ok {
				return d.printer.SQLTo(func(out io.Writer) error { return w.WriteScript(d.sql.preamble(name), out) })
			}
			return repair.PrintScript(m, d.sql.preamble(name), d.printer.SQL)
		}
		if err := d.db.requireDB(command); err != nil {
			return err
		}
		if ready, err := repair.Prepare(m); !ready || err != nil {
			return err
		}
		if l, ok := m.(repair.Lifetime); ok {
			end, err := l.Hold(ctx)
			if err != nil {
				return err
			}
			defer end()
		}
		var err error
		if conn, err = d.db.connect(ctx, name); err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(ctx))
	}
	p, err := m.Plan(ctx, conn)
	if err != nil {
		return err
	}
	if d.sql.printSQL { // an opener's script: what its plan read
		return repair.PrintScript(m, d.sql.preamble(name), d.printer.SQL)
	}
	if p.Nothing != "" || p.Quiet {
		return d.nothingToDo(p)
	}
	if p.Refused != nil || p.Stop != nil {
		repair.ShowPlan(d.term.stderr, p.Shown())
		if r := p.Refused; r != nil {
			return usageErrorf(d.suggest.again(command, r.Add...), "%s", r.Msg)
		}
		return p.Stop(ctx)
	}
	if err := d.change.confirm(command, p, yes); err != nil {
		return err
	}
	// The audit lines are written even when Apply failed: a mutation that returns them
	// with its error records the attempt (a mailbox UPDATE that failed halfway).
	sum, err := m.Apply(ctx, conn, p)
	for _, a := range sum.Audit {
		d.change.audit(a.Command, a.Fields)
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

// when is a time as a plan line shows it: the printer's format, relative to now.
func (d factory) when(t time.Time) string { return render.FormatTime(t, d.clock.now(), d.printer.Time) }

// repairEnv is what internal/repair takes from the invocation.
func (d factory) repairEnv() repair.Env {
	env := repair.Env{Connect: d.db.connect, Deployment: d.db.deployment, Schema: d.db.schema, Now: d.clock.now, Next: d.suggest.next}
	if d.printer != nil {
		env.Warnf, env.Notef = d.printer.Warnf, d.printer.Notef
		env.Time = func(t time.Time) string { return render.FormatDue(t, d.printer.Now(), d.printer.Time) }
	}
	if d.term.progress != nil {
		env.Progress = func(ctx context.Context, label string, total int64, approx bool) repair.Progress {
			return d.term.progress(ctx, label, total, approx)
		}
	}
	return env
}
