// Package session holds the session preamble's SQL (session.sql): the BEGIN and SET LOCAL
// statements every transaction starts with, which internal/db runs and internal/query
// prints in front of a mutation's script. It is its own package because internal/db
// cannot import internal/query (query's tests import db), and both need the same text.
package session

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

//go:embed session.sql
var files embed.FS

var set = sync.OnceValues(func() (*sqltemplate.Set, error) { //nolint:gochecknoglobals // parsed once
	return sqltemplate.Parse(files, "*.sql")
})

// Files are the embedded SQL files, for the test that runs every statement as written.
func Files() (*sqltemplate.Set, error) { return set() }

// fill is statement name filled. The file is embedded and its statements fixed, so an error
// is a bug of this package, which its tests (every accessor, filled) catch before a build
// ships: it panics rather than make every transaction handle an impossible error.
func fill(name string, idents map[string]string) string {
	s, err := set()
	if err == nil {
		var text string
		if text, err = s.Fill(name, idents); err == nil {
			return text
		}
	}
	panic(fmt.Sprintf("session.sql: %v", err))
}

// Begin opens a plain transaction (the default isolation, read-write).
func Begin() string { return fill("begin", nil) }

// BeginRead opens a read: one snapshot for every statement of the command.
func BeginRead() string { return fill("begin-read", nil) }

// BeginWrite opens a write transaction.
func BeginWrite() string { return fill("begin-write", nil) }

// BeginWriteSnapshot opens a write transaction in one snapshot: a statement that would act
// on a row changed since the snapshot fails with a serialization failure (40001).
func BeginWriteSnapshot() string { return fill("begin-write-snapshot", nil) }

// Commit ends a transaction.
func Commit() string { return fill("commit", nil) }

// Rollback ends a transaction, undoing it.
func Rollback() string { return fill("rollback", nil) }

// PrimaryCheck asks whether the server is in recovery (a replica).
func PrimaryCheck() string { return fill("primary-check", nil) }

// SetLocal sets setting to value for the rest of the transaction; value is SQL as written
// after "=": a Quote'd literal, or a word such as off.
func SetLocal(setting, value string) string {
	return fill("set-local", map[string]string{"setting": setting, "value": value})
}

// Quote is s as a string literal, for SetLocal.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Savepoint opens a nested transaction named name.
func Savepoint(name string) string { return fill("savepoint", map[string]string{"savepoint": name}) }

// ReleaseSavepoint ends the nested transaction name, keeping its work.
func ReleaseSavepoint(name string) string {
	return fill("release-savepoint", map[string]string{"savepoint": name})
}

// RollbackToSavepoint ends the nested transaction name, undoing its work.
func RollbackToSavepoint(name string) string {
	return fill("rollback-to-savepoint", map[string]string{"savepoint": name})
}

// IdleTimeoutSetting reads the server's idle_in_transaction_session_timeout (milliseconds).
func IdleTimeoutSetting() string { return fill("idle-timeout-setting", nil) }
