package report

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// EnumNames are the columns report adds beside an enum's integer column: the value's name
// (UNKNOWN(n) for a value this build does not know), NULL for a NULL integer. `beside` is the
// integer column (the statement's); the name column follows it. ShardScopeName is the one
// exception: a message row (shard_scope and payload) carries the handler document's name
// for its scope last, so the columns CSV and tab-separated scripts read by position stay
// where they were.
type EnumNames struct {
	Scope            string   `json:"scope" beside:"shard_scope"`
	CategoryName     *string  `json:"category_name" beside:"category"`
	CategoryNames    []string `json:"category_names" beside:"categories"`
	HeadCategoryName *string  `json:"head_category_name" beside:"head_category"`
	ShardScopeName   string   `json:"shard_scope_name" last:"payload"`
}

// ShardState is what ShardStates appends to each shard row, in order: the state at now and
// its machine parts. Detail is a sentence for a person (human-only: not in JSON or CSV).
type ShardState struct {
	State                string  `json:"state"`
	Detail               string  `json:"detail" render:"human"`
	BackoffSeconds       float64 `json:"backoff_seconds"`
	NextAttemptInSeconds float64 `json:"next_attempt_in_seconds"`
	AttemptsEstimate     int     `json:"attempts_estimate"`
	AtCap                bool    `json:"at_cap"`
	Killswitched         *bool   `json:"killswitched"`
}

// jsonName is a field's JSON key ("" for none).
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// fieldsOf are t's fields that carry a JSON key.
func fieldsOf(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if jsonName(f) != "" && !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
}

// nameColumns says which integer columns get a name column, and its key (from EnumNames).
var nameColumns = func() map[string]string { //nolint:gochecknoglobals // constant table, from Names
	m := map[string]string{}
	for _, f := range fieldsOf(reflect.TypeFor[EnumNames]()) {
		if b := f.Tag.Get("beside"); b != "" {
			m[b] = jsonName(f)
		}
	}
	return m
}()

// shardScopeName is the key of a message row's last name column.
var shardScopeName = jsonName(reflect.TypeFor[EnumNames]().Field(reflect.TypeFor[EnumNames]().NumField() - 1)) //nolint:gochecknoglobals // constant, from Names

// StateColumns are the columns ShardStates adds, in order (ShardState's keys).
var StateColumns = func() []string { //nolint:gochecknoglobals // constant list, from ShardState
	var out []string
	for _, f := range fieldsOf(reflect.TypeFor[ShardState]()) {
		out = append(out, jsonName(f))
	}
	return out
}()

// TableOf is the table of a result whose rows are of type T (a row type beside its
// statement in internal/query): the rows are read by name into T (query.Rows: a missing
// column, a NULL in a non-pointer field or a value of another type is an error), a column T
// does not declare is an error, and the table is res with the EnumNames beside the enums. So
// every key of the table's JSON is a json tag of T or of EnumNames (DocumentRow is its type).
func TableOf[T any](reg *enums.Registry, res *query.Result) (*render.Table, []T, error) {
	rows, err := query.Rows[T](res)
	if err != nil {
		return nil, nil, err
	}
	if c := query.Undeclared[T](res); c != "" {
		return nil, nil, fmt.Errorf("%s returns column %q, which its row type %s does not declare", res.Statement, c, reflect.TypeFor[T]())
	}
	return table(reg, res), rows, nil
}

// CardOf is the card of the first row of a result whose rows are of type T (see TableOf).
func CardOf[T any](reg *enums.Registry, res *query.Result) ([]render.Field, error) {
	t, _, err := TableOf[T](reg, res)
	if err != nil {
		return nil, err
	}
	return render.CardOf(t), nil
}

// DecoratorOf is NewDecorator for a streamed result whose rows are of type T: a column T
// does not declare is an error.
func DecoratorOf[T any](reg *enums.Registry, columns []string) (*Decorator, error) {
	if c := query.Undeclared[T](&query.Result{Columns: columns}); c != "" {
		return nil, fmt.Errorf("the stream returns column %q, which its row type %s does not declare", c, reflect.TypeFor[T]())
	}
	return NewDecorator(reg, columns), nil
}

// DocumentRow is the Go type of one JSON row of a table TableOf makes from rows of type row:
// row's fields, each enum's EnumNames field beside it, ShardScopeName last on a message row, then
// ShardState's machine fields when state (the shard listings). Its json tags are the row's
// JSON keys in the order printed; a pointer or slice field may be null (tag
// jsonschema:"nullable"); an omitempty field (the control silo's cell column) may be absent.
// It exists for the JSON Schemas (internal/contract), built from the same tables as the
// output, so the two cannot drift.
func DocumentRow(row reflect.Type, state bool) reflect.Type {
	names := reflect.TypeFor[EnumNames]()
	byKey := map[string]reflect.StructField{}
	for _, f := range fieldsOf(names) {
		byKey[jsonName(f)] = f
	}
	var out []reflect.StructField
	has := map[string]bool{}
	add := func(f reflect.StructField) {
		out = append(out, schemaField(len(out), f))
	}
	for _, f := range fieldsOf(row) {
		add(f)
		has[jsonName(f)] = true
		if n, ok := nameColumns[jsonName(f)]; ok {
			add(byKey[n])
		}
	}
	if has["shard_scope"] && has["payload"] {
		add(byKey[shardScopeName])
	}
	if state {
		for _, f := range fieldsOf(reflect.TypeFor[ShardState]()) {
			if f.Tag.Get("render") != "human" {
				add(f)
			}
		}
	}
	return reflect.StructOf(out)
}

// payloadType stands for a payload cell: JSON output nests it when it is JSON, else a string.
type payloadType = any

// schemaField is f as a field of a DocumentRow: exported under a position name, its json
// tag kept, nullable when it is a pointer or a slice, a payload of any JSON type.
func schemaField(i int, f reflect.StructField) reflect.StructField {
	tag := fmt.Sprintf(`json:%q`, f.Tag.Get("json"))
	typ := f.Type
	if jsonName(f) == "payload" {
		typ = reflect.TypeFor[payloadType]()
	} else if k := typ.Kind(); k == reflect.Pointer || k == reflect.Slice {
		tag += ` jsonschema:"nullable"`
	}
	return reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: typ, Tag: reflect.StructTag(tag)}
}
