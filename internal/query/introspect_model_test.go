package query

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// introspectModel is Introspect as of 9ae7eda (a subquery per column), the form 7e0a097
// replaced, kept as an independent model of what introspection must find.
const introspectModel = `SELECT t.name,
       c.oid IS NOT NULL AS present,
       (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'payload' AND NOT a.attisdropped) AS payload_type,
       (SELECT a.attname::text FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname IN ('region_name', 'cell_name') AND NOT a.attisdropped
         ORDER BY a.attname DESC LIMIT 1) AS cell_column,
       (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'value' AND NOT a.attisdropped) AS value_type,
       (SELECT count(*) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = ANY ($1::text[]) AND NOT a.attisdropped) AS outbox_columns,
       EXISTS (SELECT 1 FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'id' AND NOT a.attisdropped) AS has_id
  FROM unnest($2::text[]) WITH ORDINALITY AS t(name, n)
  LEFT JOIN pg_class c ON c.oid = to_regclass(t.name)
 ORDER BY t.n`

// oldSchemaFrom is SchemaFrom as of 9ae7eda: row i is tables[i].
func oldSchemaFrom(t *testing.T, q Querier, schema string, tables []string) map[string]TableInfo {
	t.Helper()
	names := make([]string, len(tables))
	for i, tb := range tables {
		names[i] = Ident(tb)
		if schema != "" {
			names[i] = Ident(schema) + "." + Ident(tb)
		}
	}
	res, err := RunBound(context.Background(), q, "old-introspect", introspectModel, []any{outboxColumns, names})
	if err != nil {
		t.Fatal(err)
	}
	str := func(v any) string { s, _ := v.(string); return s }
	out := map[string]TableInfo{}
	for i, r := range res.Rows {
		ti := TableInfo{Name: str(r[0]), Present: r[1] == true, PayloadType: str(r[2]), CellColumn: str(r[3]), ValueType: str(r[4])}
		if n, ok := r[5].(int64); ok {
			ti.OutboxColumns = n
		}
		ti.HasID = r[6] == true
		out[tables[i]] = ti
	}
	return out
}

// TestIntrospectMatchesModel compares the one-join Introspect with the subquery form it
// replaced on odd schemas: a quoted mixed-case schema name, a view named like the cell outbox,
// a control outbox with both region_name and cell_name, a partitioned options table, a
// watermark table with a dropped payload column, a table in pg_catalog's name space, and
// lookups through search_path (no schema). It passes: the forms agree.
func TestIntrospectMatchesModel(t *testing.T) {
	t.Parallel()
	compareIntrospect(t, SchemaTables([]string{OptionTable, ControlOptionTable, CellWatermark, "halfbox", "pg_class", "no_such"}))
}

// TestIntrospectTableNamedTwice: SchemaFrom folds rows by table index into the map
// keyed by name, so a name listed twice adds its columns twice. A table with 4 of the 7 outbox
// columns then reports OutboxColumns 8, which passes CheckOutbox's "fewer than 7" test; the old
// form said 4. No caller lists a name twice today (SchemaTables dedupes only the two outbox
// tables it adds), so this is latent.
func TestIntrospectTableNamedTwice(t *testing.T) {
	t.Parallel()
	compareIntrospect(t, SchemaTables([]string{"halfbox", "halfbox"}))
}

func compareIntrospect(t *testing.T, tables []string) {
	t.Helper()
	ctx := context.Background()
	base := testdb.Schema(t, fixture.Options{})
	odd := base + `_Odd "S"`
	qi := func(s string) string { return pgx.Identifier{s}.Sanitize() }
	setup := fmt.Sprintf(`
CREATE SCHEMA %[2]s;
CREATE VIEW %[2]s.sentry_regionoutbox AS SELECT * FROM %[1]s.sentry_regionoutbox;
CREATE TABLE %[2]s.sentry_controloutbox (LIKE %[1]s.sentry_controloutbox);
ALTER TABLE %[2]s.sentry_controloutbox ADD COLUMN cell_name text, DROP COLUMN category;
CREATE TABLE %[2]s.sentry_option (id bigint, key text, value text) PARTITION BY RANGE (id);
CREATE TABLE %[2]s.hybridcloud_celloutboxbackfillwatermark (id bigint, payload jsonb, x int);
ALTER TABLE %[2]s.hybridcloud_celloutboxbackfillwatermark DROP COLUMN payload;
CREATE TABLE %[2]s.halfbox (id bigint, shard_scope int, shard_identifier bigint, category int);`, qi(base), qi(odd))
	if _, err := testdb.Pool(t).Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = testdb.Pool(t).Exec(context.Background(), "DROP SCHEMA "+qi(odd)+" CASCADE") })
	for _, schema := range []string{odd, ""} {
		{
			name := fmt.Sprintf("schema %q tables %v", schema, tables)
			tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
			if err != nil {
				t.Fatal(err)
			}
			if schema == "" {
				if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+qi(odd)); err != nil {
					t.Fatal(err)
				}
			}
			want := oldSchemaFrom(t, tx, schema, tables)
			got, err := LoadSchema(ctx, tx, schema, tables)
			_ = tx.Rollback(ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(got.Tables, want) {
				t.Errorf("%s:\n new %+v\n old %+v", name, got.Tables, want)
			}
		}
	}
}
