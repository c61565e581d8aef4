package query

import (
	"fmt"
	"time"
)

// RestoreRow reinserts an archived row as it was (its id, payload::text, cell, schedule and
// date_added); an id that exists again is skipped. payload is the exact text (nil: SQL NULL),
// cast to jsonb for a jsonb column.
func RestoreRow(schema, table, cellColumn, payloadType string, id int64, scope int, shard int64, category int, object int64,
	cell *string, payload *string, from, sfor, added time.Time) Statement {
	b := newBuilder()
	cols := "id, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added"
	payloadExpr := b.arg("payload", nilIfNil(payload), "")
	if payloadType == "jsonb" {
		payloadExpr += "::jsonb"
	}
	// The timestamps need no cast: a printed one is a typed literal, a bound one takes the column's type.
	vals := fmt.Sprintf("%s, %s, %s, %s, %s, %s, %s, %s, %s",
		b.arg("id", id, ""), b.arg("scope", scope, ""), b.arg("shard", shard, ""), b.arg("category", category, ""),
		b.arg("object", object, ""), payloadExpr, b.arg("scheduled_from", from, ""), b.arg("scheduled_for", sfor, ""), b.arg("date_added", added, ""))
	if cellColumn != "" {
		cols += ", " + Ident(cellColumn)
		vals += ", " + b.arg("cell", nilIfNil(cell), "")
	}
	text := fmt.Sprintf(`INSERT INTO %s (%s)
VALUES (%s)
ON CONFLICT (id) DO NOTHING`, qualified(schema, table), cols, vals)
	return Statement{Name: "restore-row", Doc: []string{"Reinsert an archived row as it was: id, payload, cell and schedule; an id that exists is left alone."}, Text: tidy(text), Args: b.args}
}

func nilIfNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// ExistingIDs lists which of the ids are in the table: restore's plan (rows already back are
// skipped) and its check that rows of an uncommitted batch are still there.
func ExistingIDs(schema, table string, ids []int64) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT o.id
  FROM %s o
 WHERE o.id = ANY (%s::bigint[])
 ORDER BY o.id`, qualified(schema, table), b.arg("ids", ids, ""))
	return Statement{Name: "existing-ids", Doc: []string{"Which archived ids are in the table now."}, Text: tidy(text), Args: b.args}
}
