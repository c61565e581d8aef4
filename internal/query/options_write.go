package query

// The option writes, in sql/options.sql.

import (
	"fmt"
	"strings"
	"time"
)

// jsonbChoice turns on the jsonb choice of sql/options.sql for a jsonb value column (a text
// one casts to and from jsonb).
func jsonbChoice(valueType string) []string {
	if valueType == "jsonb" {
		return []string{"jsonb"}
	}
	return nil
}

// OptionEnsure creates an option row if it is missing (with Sentry's columns: value,
// last_updated, last_updated_by), and never touches an existing one: ON CONFLICT on the
// unique key cannot create a duplicate.
func OptionEnsure(schema, table, valueType, key, emptyValue, reason string) Statement {
	return Why{Command: "option-ensure", Reason: reason}.Mark(sqlStatement("option-ensure", []string{"Create the option row if it is missing; an existing row is left alone."},
		map[string]string{"table": qualified(schema, table)}, Args{"key": {Value: key}, "empty": {Value: emptyValue}}, jsonbChoice(valueType)...))
}

// OptionLock reads an option's stored value and locks its row until the transaction ends,
// so a read-modify-write cannot lose a concurrent change.
func OptionLock(schema, table, key string) Statement {
	return sqlStatement("option-lock", []string{"Read and lock the option row."}, map[string]string{"table": qualified(schema, table)}, Args{"key": {Value: key}})
}

// ShardListUpdate adds ids to (or removes them from) a kill-switch list in one statement:
// the new list is computed from the row it updates, so two concurrent writers serialise on
// the row and neither change is lost. The list stays sorted, distinct integers; last_updated
// moves to now() (Sentry's option sync only propagates rows updated in the last hour) and
// last_updated_by to 'cli' (what `sentry config set` writes). A stored value that is not a
// JSON list of integers (a pre-2023 pickle) makes the statement fail rather than guess; a
// JSON null counts as the empty list, as it does for Sentry.
func ShardListUpdate(schema, table, valueType, key string, ids []int64, add bool, reason string) Statement {
	on := jsonbChoice(valueType)
	verb := "remove"
	if add {
		verb = "add"
		on = append(on, "add")
	}
	st := sqlStatement("killswitch-update", []string{
		fmt.Sprintf("%s shard ids %s the kill-switch list %s, in one statement.", strings.ToUpper(verb[:1])+verb[1:], map[bool]string{true: "to", false: "from"}[add], key),
		"Sentry's workers see the change within about 20 s: the option sync re-pushes rows whose",
		"last_updated is under an hour old, and each worker caches an option for 10 s.",
	},
		map[string]string{"table": qualified(schema, table)}, Args{"key": {Value: key}, "ids": {Value: ids}}, on...)
	st.Name = "killswitch-" + verb
	return Why{Command: "killswitch " + verb, Reason: reason}.Mark(st)
}

// OptionWrite replaces an option's value (the read-modify-write fallback for values stored
// as pickles, and the backfill gate).
func OptionWrite(schema, table, valueType, key, jsonValue, reason, command string) Statement {
	return Why{Command: command, Reason: reason}.Mark(sqlStatement("option-write", []string{
		"Set option " + key + " (created if missing; the unique key rules out a duplicate).",
		"last_updated = now() so Sentry's option sync propagates it within about 20 s.",
	},
		map[string]string{"table": qualified(schema, table)}, Args{"key": {Value: key}, "value": {Value: jsonValue}}, jsonbChoice(valueType)...))
}

// OptionLockRow is the row of OptionLock.
type OptionLockRow struct {
	Value         *string    `db:"value"`
	LastUpdated   *time.Time `db:"last_updated"`
	LastUpdatedBy *string    `db:"last_updated_by"`
}

// OptionReturningRow is the row of OptionWrite and ShardListUpdate (RETURNING value).
type OptionReturningRow struct {
	Value *string `db:"value"`
}
