package query

import (
	"fmt"
	"strings"
	"time"
)

// OptionValueCast is how a JSON text parameter becomes the value column's type.
func optionValueExpr(valueType, expr string) string {
	if valueType == "jsonb" {
		return expr + "::jsonb"
	}
	return expr
}

// OptionEnsure creates an option row if it is missing (with Sentry's columns: value,
// last_updated, last_updated_by), and never touches an existing one: ON CONFLICT on the
// unique key cannot create a duplicate.
func OptionEnsure(schema, table, valueType, key, emptyValue, reason string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`%sINSERT INTO %s (key, value, last_updated, last_updated_by)
VALUES (%s, %s, now(), 'cli')
ON CONFLICT (key) DO NOTHING`, ReasonComment("option-ensure", reason), qualified(schema, table),
		b.arg("key", key, ""), optionValueExpr(valueType, b.arg("empty", emptyValue, "")))
	return Statement{
		Name: "option-ensure",
		Doc:  []string{"Create the option row if it is missing; an existing row is left alone."},
		Text: tidy(text), Args: b.args,
	}
}

// OptionLock reads an option's stored value and locks its row until the transaction ends,
// so a read-modify-write cannot lose a concurrent change.
func OptionLock(schema, table, key string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT o.value::text AS value, o.last_updated, o.last_updated_by
  FROM %s o
 WHERE o.key = %s
   FOR UPDATE`, qualified(schema, table), b.arg("key", key, ""))
	return Statement{Name: "option-lock", Doc: []string{"Read and lock the option row."}, Text: tidy(text), Args: b.args}
}

// ShardListUpdate adds ids to (or removes them from) a kill-switch list in one statement:
// the new list is computed from the row it updates, so two concurrent writers serialise on
// the row and neither change is lost. The list stays sorted, distinct integers; last_updated
// moves to now() (Sentry's option sync only propagates rows updated in the last hour) and
// last_updated_by to 'cli' (what `sentry config set` writes). A stored value that is not a
// JSON list of integers (a pre-2023 pickle) makes the statement fail rather than guess; a
// JSON null counts as the empty list, as it does for Sentry.
func ShardListUpdate(schema, table, valueType, key string, ids []int64, add bool, reason string) Statement {
	b := newBuilder()
	current := "o.value"
	if valueType != "jsonb" {
		current = "o.value::jsonb"
	}
	// Sentry reads a JSON null (or a SQL NULL) list as empty; jsonb_array_elements would
	// refuse the scalar.
	current = "coalesce(nullif(" + current + ", 'null'::jsonb), '[]'::jsonb)"
	var elems string
	if add {
		elems = fmt.Sprintf(`SELECT e::bigint AS x FROM jsonb_array_elements(%s) AS e
                 UNION
                SELECT unnest(%s::bigint[])`, current, b.arg("ids", ids, ""))
	} else {
		elems = fmt.Sprintf(`SELECT e::bigint AS x FROM jsonb_array_elements(%s) AS e
                 WHERE e::bigint <> ALL (%s::bigint[])`, current, b.arg("ids", ids, ""))
	}
	value := "(SELECT coalesce(jsonb_agg(s.x ORDER BY s.x), '[]'::jsonb) FROM (" + "\n                " + elems + ") s)"
	if valueType != "jsonb" {
		value += "::text"
	}
	verb := "remove"
	if add {
		verb = "add"
	}
	text := fmt.Sprintf(`%sUPDATE %s o
   SET value = %s,
       last_updated = now(),
       last_updated_by = 'cli'
 WHERE o.key = %s
RETURNING o.value::text AS value`, ReasonComment("killswitch "+verb, reason), qualified(schema, table), value, b.arg("key", key, ""))
	return Statement{
		Name: "killswitch-" + verb,
		Doc: []string{
			fmt.Sprintf("%s shard ids %s the kill-switch list %s, in one statement.", strings.ToUpper(verb[:1])+verb[1:], map[bool]string{true: "to", false: "from"}[add], key),
			"Sentry's workers see the change within about 20 s: the option sync re-pushes rows whose",
			"last_updated is under an hour old, and each worker caches an option for 10 s.",
		},
		Text: tidy(text), Args: b.args,
	}
}

// OptionWrite replaces an option's value (the read-modify-write fallback for values stored
// as pickles, and the backfill gate).
func OptionWrite(schema, table, valueType, key, jsonValue, reason, command string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`%sINSERT INTO %s (key, value, last_updated, last_updated_by)
VALUES (%s, %s, now(), 'cli')
ON CONFLICT (key) DO UPDATE
   SET value = EXCLUDED.value,
       last_updated = now(),
       last_updated_by = 'cli'
RETURNING value::text AS value`, ReasonComment(command, reason), qualified(schema, table),
		b.arg("key", key, ""), optionValueExpr(valueType, b.arg("value", jsonValue, "")))
	return Statement{
		Name: "option-write",
		Doc: []string{
			"Set option " + key + " (created if missing; the unique key rules out a duplicate).",
			"last_updated = now() so Sentry's option sync propagates it within about 20 s.",
		},
		Text: tidy(text), Args: b.args,
	}
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
