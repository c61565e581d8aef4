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

// targetLine names what a mutation changes: the context, the database (user@host:port/db,
// no password), the schema and, for a command on an outbox table, the table.
func (a *app) targetLine(command string) string {
	if len(a.split) == 2 {
		return a.splitTargetLine()
	}
	parts := []string{}
	if a.contextName != "" {
		parts = append(parts, "context "+a.contextName)
	}
	getenv := a.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	dsn, _ := db.Resolve(a.g.DSN, getenv)
	parts = append(parts, "database "+db.Describe(dsn)+" (from "+a.dsnFrom(getenv)+")")
	schema := a.g.Schema
	if schema == "" {
		schema = "(search_path)"
	}
	parts = append(parts, "schema "+schema)
	switch strings.TrimPrefix(command, "outboxctl ") {
	case "reschedule", "compact", "skip", "restore", "drain":
		if t, err := a.target(); err == nil {
			parts = append(parts, "table "+t.TableName())
		}
	}
	return "target: " + strings.Join(parts, ", ")
}

// dsnFrom says which source named the database (--dsn, the context, $OUTBOXCTL_DSN, the
// libpq environment), as context show says it: with a current-context and a DSN in the
// environment, the plan shows which one won.
func (a *app) dsnFrom(getenv func(string) string) string {
	switch {
	case a.contextName != "":
		return a.dsnSource
	case a.g.DSN != "":
		return "flag --dsn"
	}
	var set []string
	for _, k := range append([]string{"OUTBOXCTL_DSN"}, db.EnvKeys...) {
		if getenv(k) != "" {
			set = append(set, k)
			if k == "OUTBOXCTL_DSN" {
				break // it wins over libpq's
			}
		}
	}
	if len(set) == 0 {
		return "nothing: libpq's defaults"
	}
	return "env " + strings.Join(set, ", ")
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
		sub := a.fork(a.io)
		sub.split = nil
		if err := sub.useContext(a.cmd, one); err != nil {
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
