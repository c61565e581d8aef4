package query

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what runs statements: a pgx connection or transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Result is the rows of one statement under their column names.
type Result struct {
	Statement string
	Columns   []string
	Rows      [][]any
}

// Col returns the index of a column, or -1.
func (r *Result) Col(name string) int {
	for i, c := range r.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Run executes a statement in its bound form and collects its rows.
func Run(ctx context.Context, q Querier, st Statement) (*Result, error) {
	res := &Result{Statement: st.Name}
	err := Stream(ctx, q, st, func(cols []string) error { res.Columns = cols; return nil }, func(row []any) error {
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// RunBound runs SQL already bound (or the name of a statement prepared on the connection)
// and collects its rows like Run.
func RunBound(ctx context.Context, q Querier, name, sql string, args []any) (*Result, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return Collect(name, rows)
}

// Collect reads rows already sent for the statement name (a pipelined statement's) like Run,
// and closes them.
func Collect(name string, rows pgx.Rows) (*Result, error) {
	res := &Result{Statement: name}
	err := streamRows(name, rows, func(cols []string) error { res.Columns = cols; return nil }, func(row []any) error {
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Stream executes a statement and hands each row to fn as it arrives, so a result larger than
// memory (inspect shard --all) flows straight to the output.
func Stream(ctx context.Context, q Querier, st Statement, header func([]string) error, fn func([]any) error) error {
	sql, args, err := st.Bind()
	if err != nil {
		return err
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	return streamRows(st.Name, rows, header, fn)
}

// streamRows hands the column names to header, then each row (normalized) to fn, and closes
// rows: the one row loop of Run, Stream and Collect.
func streamRows(name string, rows pgx.Rows, header func([]string) error, fn func([]any) error) error {
	defer rows.Close()
	if err := header(columnNames(rows.FieldDescriptions())); err != nil {
		return err
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		for i, v := range vals {
			vals[i] = normalize(v)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

func columnNames(fds []pgconn.FieldDescription) []string {
	cols := make([]string, len(fds))
	for i, fd := range fds {
		cols[i] = fd.Name
	}
	return cols
}

// normalize gives every value one Go type per SQL type, whichever protocol carried it.
func normalize(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}

// Execer runs statements that return no rows.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Exec executes a statement in its bound form and returns the rows it affected.
func Exec(ctx context.Context, q Execer, st Statement) (int64, error) {
	sql, args, err := st.Bind()
	if err != nil {
		return 0, err
	}
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Int64s reads an integer array cell of a Result (Run normalises its elements to int64): a
// NULL element or one of another type is an error, never a zero. Read a nullable array column
// into a pointer field (query.Rows) first: NULL is the caller's to interpret.
func Int64s(cells []any) ([]int64, error) {
	if len(cells) == 0 {
		return nil, nil // nil, as appending an empty array's elements to nil gave: output unchanged
	}
	out := make([]int64, len(cells))
	for i, c := range cells {
		n, ok := c.(int64)
		switch {
		case c == nil:
			return nil, fmt.Errorf("NULL at element %d where int64 is expected", i+1)
		case !ok:
			return nil, fmt.Errorf("%T at element %d where int64 is expected", c, i+1)
		}
		out[i] = n
	}
	return out, nil
}
