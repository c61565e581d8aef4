package query

import (
	"fmt"
	"strings"
	"time"
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
	b := newBuilder()
	text := fmt.Sprintf(`SELECT w.table_name::text AS table_name, w.low_bound, w.version, w.date_updated
  FROM %s w
 WHERE w.table_name = ANY (%s::text[])
 ORDER BY w.table_name`, qualified(schema, watermarkTable), b.arg("tables", tables, ""))
	return Statement{
		Name: "backfill-watermarks",
		Doc: []string{
			"Backfill cursors in " + qualified(schema, watermarkTable) + ": low_bound is the lowest id not yet",
			"replicated, version the replication version being walked (coded version + 1 once complete).",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// TableBounds reads, for each replicated table, its id bounds (two probes of the primary
// key) and the planner's row estimate: what a cursor is compared with, at no scan's cost.
func TableBounds(schema string, tables []string) Statement {
	b := newBuilder()
	parts := make([]string, 0, len(tables))
	for i, t := range tables {
		q := qualified(schema, t)
		parts = append(parts, fmt.Sprintf(`SELECT %s AS table_name,
       (SELECT min(id) FROM %s) AS min_id,
       (SELECT max(id) FROM %s) AS max_id,
       (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass(%s)) AS rows_estimate`,
			b.arg(fmt.Sprintf("t%d", i), t, ""), q, q, b.arg(fmt.Sprintf("r%d", i), q, "")))
	}
	text := strings.Join(parts, "\nUNION ALL\n")
	return Statement{
		Name: "backfill-table-bounds",
		Doc: []string{
			"Id bounds and the planner's row estimate (pg_class.reltuples) of each replicated table:",
			"progress is (low_bound - min_id) / (max_id - min_id + 1) of the id span, an estimate.",
		},
		Text: tidy(text),
		Args: b.args,
	}
}

// RowsBelow counts exactly the rows a cursor has passed (an index-only scan of the primary
// key), for --exact.
func RowsBelow(schema, table string, low int64) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT count(*) AS rows_done
  FROM %s t
 WHERE t.id < %s`, qualified(schema, table), b.arg("low", low, ""))
	return Statement{
		Name: "backfill-rows-below",
		Doc:  []string{"Rows of " + qualified(schema, table) + " below the backfill cursor (exact count)."},
		Text: tidy(text),
		Args: b.args,
	}
}

// WatermarkTables lists every table with a cursor in a watermark table.
func WatermarkTables(schema, watermarkTable string) Statement {
	b := newBuilder()
	text := fmt.Sprintf(`SELECT w.table_name::text AS table_name
  FROM %s w
 ORDER BY w.table_name`, qualified(schema, watermarkTable))
	return Statement{
		Name: "backfill-cursor-tables",
		Doc:  []string{"Every table with a backfill cursor in " + qualified(schema, watermarkTable) + "."},
		Text: tidy(text), Args: b.args,
	}
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
