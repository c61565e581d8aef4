package query

// The statements of backfill status, in sql/backfill.sql.

import (
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

func qualified(schema, table string) string {
	if schema != "" {
		return Ident(schema) + "." + Ident(table)
	}
	return Ident(table)
}

// Watermarks reads the backfill cursors of tables from one watermark table (Sentry since
// September 2026; before, the cursors lived in Redis).
func Watermarks(schema, watermarkTable string, tables []string) Statement {
	return sqlStatement("backfill-watermarks", []string{
		"Backfill cursors in " + qualified(schema, watermarkTable) + ": low_bound is the lowest id not yet",
		"replicated, version the replication version being walked (coded version + 1 once complete).",
	}, map[string]string{"table": qualified(schema, watermarkTable)}, Args{"tables": {Value: tables}})
}

// TableBounds reads, for each replicated table, its id bounds (two probes of the primary
// key) and the planner's row estimate: what a cursor is compared with, at no scan's cost.
func TableBounds(schema string, tables []string) Statement {
	args := Args{}
	parts := make([]sqltemplate.Part, 0, len(tables))
	var err error
	for i, t := range tables {
		q := qualified(schema, t)
		var text sqltemplate.Part
		var part Args
		if text, part, err = numberedPart("backfill-table-bound", i, map[string]string{"table": q}, Args{"t": {Value: t}, "r": {Value: q}}); err != nil {
			break
		}
		parts = append(parts, text)
		for k, v := range part {
			args[k] = v
		}
	}
	st := regionStatement("backfill-table-bounds", []string{
		"Id bounds and the planner's row estimate (pg_class.reltuples) of each replicated table:",
		"progress is (low_bound - min_id) / (max_id - min_id + 1) of the id span, an estimate.",
	}, nil, map[string]sqltemplate.Part{"tables": sqltemplate.Join("\n", parts)}, args)
	if err != nil {
		st.err = err
	}
	return st
}

// RowsBelow counts exactly the rows a cursor has passed (an index-only scan of the primary
// key), for --exact.
func RowsBelow(schema, table string, low int64) Statement {
	return sqlStatement("backfill-rows-below", []string{"Rows of " + qualified(schema, table) + " below the backfill cursor (exact count)."}, map[string]string{"table": qualified(schema, table)}, Args{"low": {Value: low}})
}

// WatermarkTables lists every table with a cursor in a watermark table.
func WatermarkTables(schema, watermarkTable string) Statement {
	return sqlStatement("backfill-cursor-tables", []string{"Every table with a backfill cursor in " + qualified(schema, watermarkTable) + "."}, map[string]string{"table": qualified(schema, watermarkTable)}, nil)
}

// WatermarkRow is one row of Watermarks.
type WatermarkRow struct {
	TableName   string     `db:"table_name"`
	LowBound    *int64     `db:"low_bound"`
	Version     *int64     `db:"version"`
	DateUpdated *time.Time `db:"date_updated"`
}

// TableBoundsRow is one row of TableBounds (NULL bounds for an empty table).
type TableBoundsRow struct {
	TableName    string `db:"table_name"`
	MinID        *int64 `db:"min_id"`
	MaxID        *int64 `db:"max_id"`
	RowsEstimate *int64 `db:"rows_estimate"`
}

// RowsBelowRow is the row of RowsBelow.
type RowsBelowRow struct {
	RowsDone int64 `db:"rows_done"`
}

// WatermarkTableRow is one row of WatermarkTables.
type WatermarkTableRow struct {
	TableName *string `db:"table_name"`
}

// ReadStep is one statement of a printed psql script and the table it reads: the script
// runs it only where that table exists (and, with NeedID, has an id column).
type ReadStep struct {
	Table  string // unqualified; the script's schema qualifies it
	NeedID bool
	Read   Statement
}

// BackfillStatusScript is backfill status's --print-sql: steps as a psql script in which
// each statement runs only where its table can be read, and psql names each one it skipped
// (sql/backfill.psql). The name a skip prints is psql's variable, never re-read as a
// command, and was checked for control characters before it got here.
func BackfillStatusScript(schema string, steps []ReadStep) (string, error) {
	parts := make([]string, 0, len(steps))
	gset := func(sql string) string { return strings.TrimSuffix(strings.TrimRight(sql, "\n"), ";") }
	for _, s := range steps {
		var on []string
		if s.NeedID {
			on = append(on, "id")
		}
		probe, err := sqlStatement("backfill-table-readable", nil, nil, Args{"r": {Value: qualified(schema, s.Table)}}, on...).Render()
		if err != nil {
			return "", err
		}
		read, err := s.Read.Render()
		if err != nil {
			return "", err
		}
		part, err := FillScript("backfill-if-readable", map[string]string{"probe": gset(probe), "statement": strings.TrimRight(read, "\n")})
		if err != nil {
			return "", err
		}
		parts = append(parts, strings.TrimRight(part, "\n"))
	}
	script, err := FillScript("backfill-status-script", map[string]string{"steps": strings.Join(parts, "\n\n")})
	if err != nil {
		return "", err
	}
	return strings.TrimRight(script, "\n") + "\n", nil
}
