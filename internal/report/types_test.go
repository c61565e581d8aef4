package report

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// sampleResult is one row of T's statement as Run returns it: T's columns (the optional ones
// only when named in with: the control silo's cell column), each with a value of its type.
func sampleResult[T any](with ...string) *query.Result {
	res := &query.Result{Statement: "sample", Rows: [][]any{{}}}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[T]()) {
		name, opt, _ := strings.Cut(f.Tag.Get("db"), ",")
		if opt == "optional" && !slices.Contains(with, name) {
			continue
		}
		var v any
		switch typ := f.Type; {
		case typ.Kind() == reflect.Pointer && typ.Elem() == reflect.TypeFor[string]():
			v = "us"
		case typ.Kind() == reflect.Pointer:
			v = nil
		case typ == reflect.TypeFor[time.Time]():
			v = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		case typ.Kind() == reflect.Int64:
			v = int64(1)
		case typ.Kind() == reflect.Bool:
			v = true
		case typ.Kind() == reflect.Slice:
			v = []any{int64(2)}
		}
		res.Columns = append(res.Columns, name)
		res.Rows[0] = append(res.Rows[0], v)
	}
	return res
}

// printedKeys are a table's JSON keys: its columns but the human-only ones.
func printedKeys(t *render.Table) []string {
	var out []string
	for _, c := range t.Columns {
		if !t.HumanOnly[c] {
			out = append(out, c)
		}
	}
	return out
}

// schemaKeys are DocumentRow's json names, leaving out the omitempty ones not in res.
func schemaKeys(row reflect.Type, res *query.Result) []string {
	var out []string
	for _, f := range reflect.VisibleFields(row) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.Contains(opts, "omitempty") && res.Col(name) < 0 {
			continue
		}
		out = append(out, name)
	}
	return out
}

func checkDocumentRow[T any](t *testing.T, state bool) {
	t.Helper()
	reg := enums.Builtin()
	for _, cell := range []string{"", "region_name", "cell_name"} {
		res := sampleResult[T](cell)
		tbl, _, err := TableOf[T](reg, res)
		if err != nil {
			t.Fatalf("%s (%q): %v", reflect.TypeFor[T](), cell, err)
		}
		if state {
			if err := ShardStates(tbl, res, &options.Killswitches{}, time.Now()); err != nil {
				t.Fatalf("%s: %v", reflect.TypeFor[T](), err)
			}
		}
		got, want := printedKeys(tbl), schemaKeys(DocumentRow(reflect.TypeFor[T](), state), res)
		if !slices.Equal(got, want) {
			t.Errorf("%s (cell column %q): printed keys\n%v\nDocumentRow's keys\n%v", reflect.TypeFor[T](), cell, got, want)
		}
	}
}

// TestDocumentRowIsWhatIsPrinted: for every row type a report table is made from, in the
// cell silo and with either name of the control silo's cell column, the JSON keys the table
// prints are DocumentRow's json tags in order (the schemas in docs/schema are DocumentRow's).
func TestDocumentRowIsWhatIsPrinted(t *testing.T) {
	t.Parallel()
	checkDocumentRow[query.TopShardsRow](t, true)
	checkDocumentRow[query.StuckShardsRow](t, true)
	checkDocumentRow[query.ShardStateRow](t, true)
	checkDocumentRow[query.ShardCategoryRow](t, false)
	checkDocumentRow[query.ShardMessageRow](t, false)
	checkDocumentRow[query.ObjectOutboxRow](t, false)
	checkDocumentRow[query.MessageRow](t, false)
	checkDocumentRow[query.CategoryDepthRow](t, false)
	checkDocumentRow[query.DepthRow](t, false)
	checkDocumentRow[query.ShardDepthRow](t, false)
}

// TestTableOfRefusesAnUndeclaredColumn: a statement that returns a column its row type does
// not declare is an error, so no JSON key comes from an SQL alias alone.
func TestTableOfRefusesAnUndeclaredColumn(t *testing.T) {
	t.Parallel()
	res := sampleResult[query.CategoryDepthRow]()
	res.Columns = append(res.Columns, "surprise")
	res.Rows[0] = append(res.Rows[0], int64(1))
	if _, _, err := TableOf[query.CategoryDepthRow](enums.Builtin(), res); err == nil || !strings.Contains(err.Error(), `"surprise"`) {
		t.Errorf("an undeclared column: %v, want an error naming it", err)
	}
}
