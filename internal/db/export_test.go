package db

import (
	"context"
	"net"

	"github.com/jackc/pgx/v5"
)

// RawQueryRow runs sql on c's pgx connection without sending the session settings first:
// the tests read what the server holds before (or without) outboxctl's SET. Compiled only
// into this package's tests, so production code cannot bypass the settings.
func RawQueryRow(ctx context.Context, c *Conn, sql string, args ...any) pgx.Row {
	return c.conn.QueryRow(ctx, sql, args...)
}

// NetConn is the socket under c, for the tests that check its options.
func NetConn(c *Conn) net.Conn { return c.conn.PgConn().Conn() }

// RollbackTo is rollbackTo, for the test that makes the server's cancel of a ROLLBACK TO
// SAVEPOINT happen on purpose (it cannot be made to happen on a quiet server).
var RollbackTo = rollbackTo
