package selection

import "github.com/outboxctl/outboxctl/internal/render"

// verdictFlags are the flags that ask a command for a verdict in its exit code.
var verdictFlags = []string{"exit-status", "fail-if-depth", "fail-on-drift"} //nolint:gochecknoglobals // constant list

// NeedsDatabase is the no-database verdict rule, shared by every command that would print
// its SQL for want of a database: a verdict (--exit-status, --fail-if-…: given reports the
// flags given) or machine output (--json, --jq, -o json, jsonl, csv) asked for without one
// is a usage error, since printing SQL and exiting 0 would read as a passing check or as
// an empty result.
func NeedsDatabase(given func(flag string) bool, jsonFields, expr, output string) error {
	var asked string
	for _, name := range verdictFlags {
		if given(name) && asked == "" {
			asked = "--" + name
		}
	}
	if asked == "" && jsonFields != "" {
		asked = "--json"
	}
	if asked == "" && expr != "" {
		asked = "--jq"
	}
	if f, _ := render.ParseFormat(output); asked == "" && (f == render.FormatJSON || f == render.FormatJSONL || f == render.FormatCSV) {
		asked = "-o " + output
	}
	if asked == "" {
		return nil
	}
	return usagef("--dsn postgres://USER@HOST:5432/DB (or --print-sql for the SQL)",
		"%s needs a database to answer, and none is given: pass --dsn (or set OUTBOXCTL_DSN, or PGHOST and PGDATABASE)", asked)
}
