package render

import (
	"fmt"
	"reflect"
	"strings"
)

// A document built from a Go type: its json tags are the JSON keys (so the JSON Schemas
// under docs/schema are generated from the same types, internal/contract), in field order.
// Tags beside json: `label:"…"` is a shorter terminal header, `render:"machine"` a
// machine-only column (left out of the terminal table), `render:"human"` a human-only one
// (left out of JSON, JSONL and CSV). A nil pointer is a NULL cell; any other pointer is its
// value; an `any` field is its value as it is (a render.Due, a render.JSONText, nil).

// TableOf is a table of rows of type T (a struct).
func TableOf[T any](rows []T) *Table {
	cols := columnsOf(reflect.TypeFor[T]())
	t := &Table{Rows: [][]any{}}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.key)
		if c.label != "" {
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[c.key] = c.label
		}
		if c.machine {
			if t.MachineOnly == nil {
				t.MachineOnly = map[string]bool{}
			}
			t.MachineOnly[c.key] = true
		}
		if c.human {
			if t.HumanOnly == nil {
				t.HumanOnly = map[string]bool{}
			}
			t.HumanOnly[c.key] = true
		}
	}
	for _, r := range rows {
		v := reflect.ValueOf(r)
		row := make([]any, len(cols))
		for j, c := range cols {
			row[j] = cellValue(v.FieldByIndex(c.index))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// CardFielder is a field's value that prints as fields of its own under its key (a count a
// COMMIT in doubt left unknown: "unknown" to a person, null to a machine).
type CardFielder interface{ CardFields(key string) []Field }

// FieldsOf is a card of v (a struct): one field per json-tagged field, with its flags; an
// omitempty field that is zero is left out; a CardFielder gives its own fields.
func FieldsOf(v any) []Field {
	rv := reflect.ValueOf(v)
	var out []Field
	for _, c := range columnsOf(rv.Type()) {
		f := rv.FieldByIndex(c.index)
		if c.omitEmpty && f.IsZero() {
			continue
		}
		if cf, ok := f.Interface().(CardFielder); ok {
			out = append(out, cf.CardFields(c.key)...)
			continue
		}
		out = append(out, Field{Key: c.key, Value: cellValue(rv.FieldByIndex(c.index)), MachineOnly: c.machine, HumanOnly: c.human})
	}
	return out
}

type typedColumn struct {
	key, label                string
	machine, human, omitEmpty bool
	index                     []int
}

// JSONKeys are struct t's JSON keys in field order (embedded structs' in place), the columns
// TableOf and FieldsOf print.
func JSONKeys(t reflect.Type) []string {
	var keys []string
	for _, c := range columnsOf(t) {
		keys = append(keys, c.key)
	}
	return keys
}

// columnsOf are t's json-tagged fields as columns, embedded structs' fields in place.
func columnsOf(t reflect.Type) []typedColumn {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("render: %s is not a struct", t))
	}
	var out []typedColumn
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" || !f.IsExported() {
			continue
		}
		mode := f.Tag.Get("render")
		out = append(out, typedColumn{key: name, label: f.Tag.Get("label"), machine: mode == "machine", human: mode == "human",
			omitEmpty: strings.Contains(opts, "omitempty"), index: f.Index})
	}
	return out
}

// cellValue is a field as a cell: nil for a nil pointer or interface, else its value.
func cellValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return v.Elem().Interface()
	}
	return v.Interface()
}
