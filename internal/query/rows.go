package query

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Rows reads res into one T per row, by column name, never by position: each field of T
// with a `db:"column"` tag takes that column. A column T names that the statement does not
// return, a NULL in a non-pointer field, or a value of another type is an error, never a
// silent zero. Integers arrive as int64 (Run normalises them) and convert to any integer
// field they fit. A column only some targets return (the control silo's cell column, named
// region_name or cell_name) is tagged `db:"region_name,optional"`: absent, it stays zero.
func Rows[T any](res *Result) ([]T, error) {
	rr, err := NewRowReader[T](res.Statement, res.Columns)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(res.Rows))
	for r, row := range res.Rows {
		if out[r], err = rr.Read(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ColumnAs is res with its column from named to (a shallow copy: the rows are res's), for a
// row type to read a column whose name the target decides (the control silo's region_name
// or cell_name) under one name. A result without the column is an error.
func (res *Result) ColumnAs(from, to string) (*Result, error) {
	i := res.Col(from)
	if i < 0 {
		return nil, fmt.Errorf("%s returns no column %q", res.Statement, from)
	}
	out := *res
	out.Columns = slices.Clone(res.Columns)
	out.Columns[i] = to
	return &out, nil
}

// RowReader reads rows of one result shape into T by column name, as Rows does, one row at
// a time: for a streamed result (inspect shard's messages), planned once for its columns.
type RowReader[T any] struct {
	statement string
	columns   []string
	cols      []int // T's field i reads column cols[i] (-1: none)
}

// NewRowReader plans the reading of rows with columns into T: a column T names that the
// statement does not return is an error (unless tagged optional).
func NewRowReader[T any](statement string, columns []string) (*RowReader[T], error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("query.Rows: %s is not a struct", rt)
	}
	res := &Result{Statement: statement, Columns: columns}
	cols := make([]int, rt.NumField())
	for i := range cols {
		name, opt, _ := strings.Cut(rt.Field(i).Tag.Get("db"), ",")
		cols[i] = -1
		if name == "" || name == "-" {
			continue
		}
		if cols[i] = res.Col(name); cols[i] < 0 && opt != "optional" {
			return nil, fmt.Errorf("%s returns no column %q", statement, name)
		}
	}
	return &RowReader[T]{statement: statement, columns: columns, cols: cols}, nil
}

// Read reads one row: a NULL in a non-pointer field or a value of another type is an error.
func (rr *RowReader[T]) Read(row []any) (T, error) {
	var out T
	v := reflect.ValueOf(&out).Elem()
	for i, c := range rr.cols {
		if c < 0 {
			continue
		}
		if err := setField(v.Field(i), row[c]); err != nil {
			return out, fmt.Errorf("%s, column %s: %w", rr.statement, rr.columns[c], err)
		}
	}
	return out, nil
}

// setField stores one cell in a field: a pointer field takes NULL as nil.
func setField(f reflect.Value, cell any) error {
	if f.Kind() == reflect.Pointer {
		if cell == nil {
			return nil
		}
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), cell); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	if f.Kind() == reflect.Interface {
		// An any field takes the cell as it is, NULL included: for values only printed.
		if cell != nil {
			f.Set(reflect.ValueOf(cell))
		}
		return nil
	}
	if cell == nil {
		return fmt.Errorf("NULL where %s is expected (make the field a pointer)", f.Type())
	}
	cv := reflect.ValueOf(cell)
	switch {
	case cv.Type().AssignableTo(f.Type()):
		f.Set(cv)
	case cv.Kind() == reflect.Slice && f.Kind() == reflect.Slice && cv.Type().Elem().Kind() == reflect.Interface:
		// An array column (Run gives []any) into a typed slice, element by element.
		out := reflect.MakeSlice(f.Type(), cv.Len(), cv.Len())
		for i := range cv.Len() {
			if err := setField(out.Index(i), cv.Index(i).Interface()); err != nil {
				return fmt.Errorf("element %d: %w", i+1, err)
			}
		}
		f.Set(out)
	case cv.CanInt() && f.CanInt():
		if f.OverflowInt(cv.Int()) {
			return fmt.Errorf("%d does not fit %s", cv.Int(), f.Type())
		}
		f.SetInt(cv.Int())
	default:
		return fmt.Errorf("%s where %s is expected", cv.Type(), f.Type())
	}
	return nil
}

// Deref is *p, or the zero value for NULL: for a nullable column (a pointer field of a row
// Rows read) whose NULL reads as "none" (a table never vacuumed, an option never set).
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// OrNil is a nullable column as output: nil (JSON null, an empty cell) for NULL, else the
// value.
func OrNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// Undeclared is the first column of res that no `db` tag of T names, or "": a statement whose
// rows reach a document returns only the columns its row type declares, so every JSON key
// of that document is a json tag of a Go type.
func Undeclared[T any](res *Result) string {
	declared := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[T]()) {
		name, _, _ := strings.Cut(f.Tag.Get("db"), ",")
		declared[name] = true
	}
	for _, c := range res.Columns {
		if !declared[c] {
			return c
		}
	}
	return ""
}
