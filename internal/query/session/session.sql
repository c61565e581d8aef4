-- The session preamble: what every transaction of outboxctl sends first, in one pipeline
-- (internal/db). The settings are only ever SET LOCAL: a session SET would stay on the
-- server connection, and under PgBouncer's transaction pooling reach the pool's next
-- client. SET takes no bind parameter, so a setting's value is a quoted literal
-- (session.Quote): the one template of these files that is a value, not an identifier.

-- name: begin
BEGIN;

-- name: begin-read
-- A read: one snapshot for every statement of the command.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;

-- name: begin-write
BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE;

-- name: begin-write-snapshot
-- A write whose statements must all see one snapshot, and which fails (40001) rather than
-- act on a row changed since (the drain's claim: it records the schedules it replaces).
BEGIN ISOLATION LEVEL REPEATABLE READ READ WRITE;

-- name: set-local
-- One setting for the rest of the transaction (statement_timeout, lock_timeout,
-- idle_in_transaction_session_timeout, application_name, jit, …).
SET LOCAL /* TEMPLATE: setting */jit = /* TEMPLATE: value */off;

-- name: commit
COMMIT;

-- name: rollback
ROLLBACK;

-- name: primary-check
-- The one replica check (db.CheckPrimary): mutations go to the primary.
SELECT pg_is_in_recovery();

-- name: savepoint
-- A nested transaction (db's Tx.Begin inside a transaction); its name is outboxctl's.
SAVEPOINT /* TEMPLATE: savepoint */sp_1;

-- name: release-savepoint
RELEASE SAVEPOINT /* TEMPLATE: savepoint */sp_1;

-- name: rollback-to-savepoint
ROLLBACK TO SAVEPOINT /* TEMPLATE: savepoint */sp_1;

-- name: idle-timeout-setting
-- The server's idle_in_transaction_session_timeout in milliseconds (0: none), which the
-- drain raises for its own transactions when a delivery may take longer.
SELECT setting::bigint FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout';
