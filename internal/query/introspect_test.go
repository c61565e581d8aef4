package query

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestIntrospectSchema reads two real schemas, exactly: Sentry's current tables (jsonb
// payload and option values), and an older or altered one (text payload and values, the
// control outbox's cell column renamed cell_name, no sentry_controloption, a sentry_option
// without its value column). A table that does not exist, or has none of the columns, is
// still reported, with what is known. (OutboxColumns counts id too: 1 for any table with an
// id, 7 for an outbox.)
func TestIntrospectSchema(t *testing.T) {
	t.Parallel()
	tables := SchemaTables([]string{OptionTable, ControlOptionTable, CellWatermark, "no_such_table"})
	load := func(schema string) Schema {
		tx, err := testdb.Pool(t).Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		s, err := LoadSchema(context.Background(), tx, schema, tables)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	current := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB, OptionValue: fixture.PayloadJSONB})
	q := func(s string) string { return pgx.Identifier{s}.Sanitize() }
	outbox := func(schema, table, payload, cell string) TableInfo {
		return TableInfo{Name: schema + "." + table, Present: true, PayloadType: payload, CellColumn: cell, OutboxColumns: 7, HasID: true}
	}
	want := map[string]TableInfo{
		CellTable:          outbox(current, CellTable, "jsonb", ""),
		ControlTable:       outbox(current, ControlTable, "jsonb", "region_name"),
		OptionTable:        {Name: current + "." + OptionTable, Present: true, ValueType: "jsonb", OutboxColumns: 1, HasID: true},
		ControlOptionTable: {Name: current + "." + ControlOptionTable, Present: true, ValueType: "jsonb", OutboxColumns: 1, HasID: true},
		CellWatermark:      {Name: current + "." + CellWatermark, Present: true, OutboxColumns: 1, HasID: true},
		"no_such_table":    {Name: current + ".no_such_table"},
	}
	got := load(current)
	if !reflect.DeepEqual(got.Tables, want) || got.Deployment != DeploymentMonolith {
		t.Fatalf("current schema:\n got %+v (%s)\nwant %+v", got.Tables, got.Deployment, want)
	}

	old := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText, OptionValue: fixture.PayloadText})
	_, err := testdb.Pool(t).Exec(context.Background(), `
ALTER TABLE `+q(old)+`.sentry_controloutbox RENAME region_name TO cell_name;
DROP TABLE `+q(old)+`.sentry_controloption;
ALTER TABLE `+q(old)+`.sentry_option DROP COLUMN value;
DROP TABLE `+q(old)+`.sentry_regionoutbox`)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]TableInfo{
		CellTable:          {Name: old + "." + CellTable},
		ControlTable:       outbox(old, ControlTable, "text", "cell_name"),
		OptionTable:        {Name: old + "." + OptionTable, Present: true, OutboxColumns: 1, HasID: true},
		ControlOptionTable: {Name: old + "." + ControlOptionTable},
		CellWatermark:      {Name: old + "." + CellWatermark, Present: true, OutboxColumns: 1, HasID: true},
		"no_such_table":    {Name: old + ".no_such_table"},
	}
	got = load(old)
	if !reflect.DeepEqual(got.Tables, want) || got.Deployment != DeploymentSplit {
		t.Fatalf("old schema:\n got %+v (%s)\nwant %+v", got.Tables, got.Deployment, want)
	}
}

// TestSchemaTablesOnce: a table named twice is looked up once (its columns would otherwise
// be counted twice, and a table with 4 of the 7 outbox columns would pass for an outbox).
func TestSchemaTablesOnce(t *testing.T) {
	got := SchemaTables([]string{ControlTable, OptionTable, OptionTable, ControlTable})
	want := []string{ControlTable, OptionTable, CellTable}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SchemaTables = %v, want %v", got, want)
	}
	if _, err := SchemaFrom(&Result{Statement: "introspect", Columns: []string{"x"}, Rows: [][]any{{1}}}, want); err == nil {
		t.Fatal("SchemaFrom read a result that is not introspect's")
	}
}
