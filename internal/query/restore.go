package query

import "time"

// The statements of restore, in sql/restore.sql.

// RestoreRow reinserts an archived row as it was (its id, payload::text, cell, schedule and
// date_added); an id that exists again is skipped. payload is the exact text (nil: SQL NULL),
// cast to jsonb for a jsonb column.
func RestoreRow(schema, table, cellColumn, payloadType string, id int64, scope int, shard int64, category int, object int64,
	cell *string, payload *string, from, sfor, added time.Time) Statement {
	args := Args{
		"id": {Value: id}, "scope": {Value: scope}, "shard": {Value: shard}, "category": {Value: category},
		"object": {Value: object}, "payload": {Value: nilIfNil(payload)},
		"scheduled_from": {Value: from}, "scheduled_for": {Value: sfor}, "date_added": {Value: added},
	}
	idents := map[string]string{"table": qualified(schema, table)}
	var on []string
	if payloadType == "jsonb" {
		on = append(on, "jsonb")
	}
	if cellColumn != "" {
		idents["cell_column"] = Ident(cellColumn)
		args["cell"] = Arg{Value: nilIfNil(cell)}
		on = append(on, "control")
	}
	return sqlStatement("restore-row", []string{"Reinsert an archived row as it was: id, payload, cell and schedule; an id that exists is left alone."},
		idents, args, on...)
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
	return sqlStatement("existing-ids", []string{"Which archived ids are in the table now."},
		map[string]string{"table": qualified(schema, table)}, Args{"ids": {Value: ids}})
}
