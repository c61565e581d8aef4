package repair

import (
	"strings"

	"github.com/outboxctl/outboxctl/internal/db"
)

// TargetLine is what a mutation's plan names first: the context, the database
// (user@host:port/db, no password) and which source named it, the schema and, for a command
// on an outbox table, the table.
type TargetLine struct {
	Context       string // the context used ("" for none)
	ContextSource string // where the context's DSN came from, as context show says it
	DSN           string // --dsn
	Schema        string // --schema ("" for the search_path)
	Table         string // the outbox table ("" for a command on none)
	Getenv        func(string) string
}

// String is the plan's target line.
func (t TargetLine) String() string {
	parts := []string{}
	if t.Context != "" {
		parts = append(parts, "context "+t.Context)
	}
	getenv := t.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	dsn, _ := db.Resolve(t.DSN, getenv)
	parts = append(parts, "database "+db.Describe(dsn)+" (from "+t.dsnFrom(getenv)+")")
	schema := t.Schema
	if schema == "" {
		schema = "(search_path)"
	}
	parts = append(parts, "schema "+schema)
	if t.Table != "" {
		parts = append(parts, "table "+t.Table)
	}
	return "target: " + strings.Join(parts, ", ")
}

// dsnFrom says which source named the database (--dsn, the context, $OUTBOXCTL_DSN, the
// libpq environment), as context show says it: with a current-context and a DSN in the
// environment, the plan shows which one won.
func (t TargetLine) dsnFrom(getenv func(string) string) string {
	switch {
	case t.Context != "":
		return t.ContextSource
	case t.DSN != "":
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
