package cmd

import (
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// confirm shows a mutation's plan on stderr and asks for a yes. With --yes it proceeds;
// without a terminal it refuses with a usage error naming the flag (a script must say --yes
// explicitly, and an EOF on the prompt must never count as consent).
//
// The plan starts with the target (context, host and database, schema, table), and with
// --dry-run it stops there: nothing is changed, and the exit status is 0. A plan of more
// than typedBackOver shards (p.Shards) needs, on a terminal, the count typed back, not y.
func (a *app) confirm(command string, p repair.Plan, yes bool) error {
	target := p.Target
	if target == "" {
		target = a.targetLine(command)
	}
	repair.ShowPlan(a.io.Err, p.Render(target))
	if a.dryRun {
		fmt.Fprintln(a.io.Err, "dry run: nothing was changed")
		return silent(meansOK)
	}
	if yes {
		return nil
	}
	if !a.io.InTTY || !a.io.ErrTTY {
		return usageErrorf(a.againOr(command, "--yes"), "`--yes` required when not running interactively")
	}
	if repair.Consent(a.io.In, a.io.Err, p.Shards) {
		return nil
	}
	return declined()
}

// targetLine names what a mutation changes (repair.TargetLine): the context, the database
// (user@host:port/db, no password) and its source, the schema and, for a command on an
// outbox table, the table.
func (a *app) targetLine(command string) string {
	if len(a.split) == 2 {
		return a.splitTargetLine()
	}
	l := repair.TargetLine{Context: a.contextName, ContextSource: a.dsnSource, DSN: a.g.DSN, Schema: a.g.Schema, Getenv: a.getenv}
	switch strings.TrimPrefix(command, "outboxctl ") {
	case "reschedule", "compact", "skip", "restore", "drain":
		if t, err := a.target(); err == nil {
			l.Table = t.TableName()
		}
	}
	return l.String()
}

// splitTargetLine is targetLine for a split replicate (--context CELL,CONTROL): each
// context with its role, database and schema, as its settings under the flags say (the
// invocation's own dsn and schema are neither's).
func (a *app) splitTargetLine() string {
	parts := make([]string, 0, 2)
	for i, one := range a.split {
		role := "the cell"
		if i == 1 {
			role = "the control silo"
		}
		sub, err := a.on(one, a.io)
		if err != nil {
			parts = append(parts, "context "+one.Name+" ("+role+"): "+oneLine(db.RedactDSN(err.Error())))
			continue
		}
		sub.contextName = one.Name + " (" + role + ")"
		parts = append(parts, strings.TrimPrefix(sub.targetLine(""), "target: "))
	}
	return "target: " + strings.Join(parts, "; ")
}

// typedBackOver is repair.TypedBackOver, which killswitch's help names.
const typedBackOver = repair.TypedBackOver

// where names the database a mutation writes: the context, when one is used, and
// user@host:port/database (never a password).
func (a *app) where() string {
	dsn, _ := db.Resolve(a.g.DSN, a.getenv)
	w := db.Describe(dsn)
	if a.g.Context != "" {
		w = "context " + a.g.Context + ", " + w
	}
	return w
}
