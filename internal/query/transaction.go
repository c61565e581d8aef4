package query

import (
	"strings"

	"github.com/outboxctl/outboxctl/internal/query/session"
)

// Preamble is the session preamble of a printed mutation script: the BEGIN and SET LOCAL
// statements (session.sql, chosen by db.WritePreamble) outboxctl sends before the script's
// statements, so what a DBA pastes runs with the timeouts outboxctl's transaction has.
func Preamble(statements []string) Statement {
	return Statement{
		Name: "session",
		Doc:  []string{"What outboxctl sends first: the settings hold for this transaction alone (SET LOCAL)."},
		Text: strings.Join(statements, ";\n"),
		Args: Args{},
	}
}

// Commit ends a printed mutation script's transaction.
func Commit() Statement {
	return Statement{Name: "commit", Doc: []string{"The statements above take effect together."}, Text: session.Commit(), Args: Args{}}
}

// Rollback ends a printed script's transaction that must change nothing.
func Rollback(why string) Statement {
	return Statement{Name: "rollback", Doc: []string{why}, Text: session.Rollback(), Args: Args{}}
}

// InTransaction is sc as a mutation runs it: the preamble, its statements, COMMIT.
func InTransaction(preamble []string, sc Script) Script {
	out := append(Script{Preamble(preamble)}, sc...)
	return append(out, Commit())
}

// ArchivingDeleteScript is the --print-sql script of a repair that archives, then deletes
// (compact, skip): the SELECT of what it would archive and its DELETE commented out, between
// the transaction's preamble and a ROLLBACK. A psql script cannot write outboxctl's archive, and a printed
// script must not delete what nothing archived.
func ArchivingDeleteScript(command string, preamble []string, sel, del Statement) (string, error) {
	pre, err := Preamble(preamble).Render()
	if err != nil {
		return "", err
	}
	selSQL, err := sel.Render()
	if err != nil {
		return "", err
	}
	delSQL, err := del.Render()
	if err != nil {
		return "", err
	}
	// The script changes nothing, so its transaction ends in ROLLBACK: a DBA who uncomments
	// the DELETE must also choose to COMMIT.
	end, err := Rollback("This script changes nothing: uncomment the DELETE and COMMIT instead to delete without an archive.").Render()
	if err != nil {
		return "", err
	}
	return FillScript("archiving-delete", map[string]string{
		"command": command, "preamble": pre, "selected": selSQL, "delete": CommentOut(delSQL), "end": end,
	})
}
