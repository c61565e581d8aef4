-- Introspection: which of outboxctl's tables exist and the columns it adapts to. It reads
-- only the catalog, so it is cheap and needs no privilege on the tables.

-- name: introspect
-- One join, a row per column found (@columns) of each table (@tables, qualified names), one
-- with NULLs for a table with none of them: on a fresh connection that costs 1.6–2.2 ms
-- against 2.9–3.1 ms for a subquery per column.
SELECT t.n AS table_index, t.name AS table_name,
       to_regclass(t.name) IS NOT NULL AS present,
       a.attname::text AS column_name,
       format_type(a.atttypid, a.atttypmod) AS column_type
  FROM unnest(@tables::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
                          AND a.attname = ANY (@columns::text[])
                          AND NOT a.attisdropped
 ORDER BY t.n, a.attname;

-- name: introspect-indexes
-- Each table's (@tables, qualified names) index names, for the era model (era.go): Sentry
-- dropped some over time (the webhook payload's schedule_for and priority indexes in Aug
-- 2026). Its own statement, run only for a look-up of the era's tables: read with every
-- command's catalog read it cost about 3 ms more on a fresh connection (pg_index's first
-- lookups), median of 40 runs against 40 without.
SELECT t.n AS table_index,
       COALESCE(array_agg(c.relname::text ORDER BY c.relname) FILTER (WHERE c.relname IS NOT NULL), '{}'::text[]) AS index_names
  FROM unnest(@tables::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN pg_index i ON i.indrelid = to_regclass(t.name)
  LEFT JOIN pg_class c ON c.oid = i.indexrelid
 GROUP BY t.n
 ORDER BY t.n;

-- name: statement-budget
-- A statement timeout of its own (@timeout, in milliseconds) for the statements until
-- statement-budget-end, when --statement-timeout is lower: for the statements bounded by
-- something else than the outbox's size. introspect reads only the catalog, and on a fresh
-- connection its first catalog lookups alone can cost more than an 8 ms timeout; shards
-- --stuck's fallback sample reads a bounded number of pages. replaced is the timeout it
-- replaces.
SELECT current_setting('statement_timeout') AS replaced,
       set_config('statement_timeout', @timeout, true) AS statement_timeout;

-- name: statement-budget-end
-- The transaction's statement timeout (@timeout, as statement-budget read it) back, for the
-- command's own statements.
SELECT set_config('statement_timeout', @timeout, true) AS statement_timeout;

-- name: jit-pass
-- For one pass over every row of a large table, where compiling its expressions and tuple
-- deforming pays: the server's own jit setting (reset_val: its configuration, the role's or
-- the database's) in place of outboxctl's jit = off, with inlining and optimisation off
-- (their compile time is what made JIT cost more than it saved on outboxctl's short
-- statements). The planner still compiles only a statement whose cost passes
-- jit_above_cost. The replaced_ columns are the settings it replaces, for jit-pass-end.
SELECT current_setting('jit') AS replaced_jit,
       current_setting('jit_inline_above_cost') AS replaced_inline_above_cost,
       current_setting('jit_optimize_above_cost') AS replaced_optimize_above_cost,
       set_config('jit', (SELECT s.reset_val FROM pg_settings s WHERE s.name = 'jit'), true) AS jit,
       set_config('jit_inline_above_cost', '-1', true) AS jit_inline_above_cost,
       set_config('jit_optimize_above_cost', '-1', true) AS jit_optimize_above_cost;

-- name: jit-pass-end
-- The transaction's jit settings back (@jit, @inline_above_cost, @optimize_above_cost, as
-- jit-pass read them), for the statements after the pass.
SELECT set_config('jit', @jit, true) AS jit,
       set_config('jit_inline_above_cost', @inline_above_cost, true) AS jit_inline_above_cost,
       set_config('jit_optimize_above_cost', @optimize_above_cost, true) AS jit_optimize_above_cost;

-- name: catalog-budget-end
-- After the catalog read of a command connected under the catalog's budget (@budget, its
-- statement timeout) because --statement-timeout is lower: that timeout (@timeout, in
-- milliseconds) for the command's own statements. A timeout the DSN set (the connection's,
-- then, not the budget) is left as it is.
SELECT set_config('statement_timeout',
                  CASE WHEN current_setting('statement_timeout')::interval = @budget::interval
                       THEN @timeout ELSE current_setting('statement_timeout') END, true) AS statement_timeout;
