package query

// Typed rows straight from the driver: the services' way to run a statement and read its
// rows into structs by column name (Rows does the same from a collected Result).

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/jackc/pgx/v5"
)

// All runs st and scans every row into a T by name (`db:"column"` tags): a column the
// struct lacks, or a field the result lacks, is an error rather than a silent zero.
// Errors come back as the driver gave them, as from query.Run: the caller classifies.
func All[T any](ctx context.Context, q Querier, st Statement) ([]T, error) {
	return collectRows(ctx, q, st, pgx.RowToStructByName[T])
}

// AllBinary is All with the rows in the binary format, for a result too large to parse as
// text: the connections run statements unprepared (pgx's exec mode, for PgBouncer), whose
// rows come as text, so drain-claim's 2M ids were 16 MB of digits to split and parse. Here
// the statement is described first (pgx's describe-exec mode: the unnamed statement, one
// round trip more) so that known types come binary, an int8[] 8 bytes an element. Inside a
// transaction only (as every Query here runs): behind PgBouncer's transaction pooling the
// unnamed statement is only certain to be on the same server connection there.
func AllBinary[T any](ctx context.Context, q Querier, st Statement) ([]T, error) {
	return collectRowsMode(ctx, q, st, pgx.RowToStructByName[T], []any{pgx.QueryExecModeDescribeExec})
}

func collectRows[T any](ctx context.Context, q Querier, st Statement, scan pgx.RowToFunc[T]) ([]T, error) {
	return collectRowsMode(ctx, q, st, scan, nil)
}

// collectRowsMode runs st with pgx's options (a QueryExecMode) before its arguments.
func collectRowsMode[T any](ctx context.Context, q Querier, st Statement, scan pgx.RowToFunc[T], options []any) ([]T, error) {
	sql, args, err := st.Bind()
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, sql, append(options, args...)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scan)
}

// One runs st and returns its single row (a statement that returns exactly one, such as
// a count or a RETURNING write).
func One[T any](ctx context.Context, q Querier, st Statement) (T, error) {
	var zero T
	rows, err := All[T](ctx, q, st)
	if err != nil {
		return zero, err
	}
	if len(rows) != 1 {
		return zero, fmt.Errorf("%s returned %d rows, want 1", st.Name, len(rows))
	}
	return rows[0], nil
}

// Picked is All for a statement whose columns vary with the table (the control outbox adds
// its cell column, under the name the table gives it): every field of T must be a column
// of the result, by its `db` tag, and columns T does not name are read and dropped.
func Picked[T any](ctx context.Context, q Querier, st Statement) ([]T, error) {
	return collectRows(ctx, q, st, pick[T])
}

func pick[T any](row pgx.CollectableRow) (T, error) {
	var value T
	v := reflect.ValueOf(&value).Elem()
	byTag, optional := map[string]int{}, map[string]bool{}
	for i := range v.NumField() {
		if tag, opt, _ := strings.Cut(v.Type().Field(i).Tag.Get("db"), ","); tag != "" {
			byTag[tag], optional[tag] = i, opt == "optional"
		}
	}
	targets := make([]any, len(row.FieldDescriptions()))
	for i, fd := range row.FieldDescriptions() {
		if f, ok := byTag[fd.Name]; ok {
			targets[i] = v.Field(f).Addr().Interface()
			delete(byTag, fd.Name)
			continue
		}
		var discard any
		targets[i] = &discard
	}
	for name := range byTag {
		if optional[name] {
			continue
		}
		return value, fmt.Errorf("cannot find field %s in returned row", name)
	}
	return value, row.Scan(targets...)
}
