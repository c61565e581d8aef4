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

// TestGivenDepthEqualsCountingStateOddCells runs inspect shard's path (shard-categories, then
// CategoryDepthSums, then ShardStateGivenDepth) and the counting ShardState in one
// REPEATABLE READ snapshot, for cells whose names are odd (empty, quotes, a control byte,
// trailing space, non-ASCII, a prefix of another), with and without --cell, in a table whose
// cell column is region_name and one renamed to cell_name, and in the cell silo; the rows must
// be identical but for observed_at.
func TestGivenDepthEqualsCountingStateOddCells(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cells := []string{"", "us", "us ", "u", "it's", "a\x01b", "é", `x'; DROP TABLE y; --`}
	for _, rename := range []bool{false, true} {
		schema := testdb.Schema(t, fixture.Options{})
		s := Ident(schema)
		for i, c := range cells {
			// 1+i rows in shard (0, 7), spread over two categories, some in the future.
			if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_controloutbox
				(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, region_name)
				SELECT 0, 7, CASE WHEN g %% 2 = 0 THEN 27 ELSE 0 END, g %% 3, NULL, now(),
				       CASE WHEN g = 1 THEN now() + interval '1 hour' ELSE now() - (g || ' min')::interval END, $1
				  FROM generate_series(1, $2::int) g`, s), c, 1+i); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s.sentry_regionoutbox
			(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
			SELECT 0, 7, (ARRAY[2, 3, 8])[1 + g %% 3], g %% 5, NULL, now(), now() + (g - 10 || ' min')::interval
			  FROM generate_series(1, 40) g`, s)); err != nil {
			t.Fatal(err)
		}
		tgts := []Target{{Silo: SiloCell, Schema: schema}, {Silo: SiloControl, Schema: schema}}
		if rename {
			if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`ALTER TABLE %s.sentry_controloutbox RENAME COLUMN region_name TO cell_name`, s)); err != nil {
				t.Fatal(err)
			}
			tgts[1].CellColumn = "cell_name"
		}
		for _, c := range append(cells, "absent") {
			tc := tgts[1]
			tc.Cell = c
			tgts = append(tgts, tc)
		}
		for _, tgt := range tgts {
			for _, k := range []ShardKey{{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 7}, {Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 8}} {
				name := fmt.Sprintf("rename=%v silo=%s cell=%q shard=%d", rename, tgt.Silo, tgt.Cell, k.ID)
				tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
				if err != nil {
					t.Fatal(err)
				}
				cats, err := Run(ctx, tx, ShardCategories(tgt, k))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				depths, err := CategoryDepthSums(tgt, cats)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				given, err := Run(ctx, tx, ShardStateGivenDepth(tgt, k, depths))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				counted, err := Run(ctx, tx, ShardState(tgt, k))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				_ = tx.Rollback(ctx)
				strip := func(r *Result) [][]any {
					oc := r.Col("observed_at")
					out := [][]any{}
					for _, row := range r.Rows {
						out = append(out, append(append([]any{}, row[:oc]...), row[oc+1:]...))
					}
					return out
				}
				wantRows := 0
				switch {
				case k.ID == 8 || tgt.Cell == "absent":
				case tgt.Control() && tgt.Cell == "":
					wantRows = len(cells)
				default:
					wantRows = 1
				}
				if len(counted.Rows) != wantRows {
					t.Errorf("%s: %d state rows, want %d", name, len(counted.Rows), wantRows)
				}
				if !reflect.DeepEqual(given.Columns, counted.Columns) || !reflect.DeepEqual(strip(given), strip(counted)) {
					t.Errorf("%s: given depth %v\n given   %v %v\n counted %v %v", name, depths, given.Columns, strip(given), counted.Columns, strip(counted))
				}
			}
		}
	}
}
