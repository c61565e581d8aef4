package query_test

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

type pair struct {
	A int64   `db:"a"`
	B *string `db:"b"`
}

func statement(text string) query.Statement { return query.Statement{Name: "rowscan-test", Text: text} }

// TestAllByName scans by column name whatever the column order, NULL into a pointer.
func TestAllByName(t *testing.T) {
	t.Parallel()
	rows, err := query.All[pair](context.Background(), testdb.Pool(t), statement("SELECT NULL::text AS b, 7::bigint AS a UNION ALL SELECT 'x', 8"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].A != 7 || rows[0].B != nil || rows[1].A != 8 || *rows[1].B != "x" {
		t.Fatalf("rows %+v", rows)
	}
}

// TestAllRefusesAnUnknownColumn: a column the struct does not name is an error, not dropped.
func TestAllRefusesAnUnknownColumn(t *testing.T) {
	t.Parallel()
	_, err := query.All[pair](context.Background(), testdb.Pool(t), statement("SELECT 1::bigint AS a, 'x'::text AS b, 2 AS c"))
	if err == nil || err.Error() != "struct doesn't have corresponding row field c" {
		t.Fatalf("error %v", err)
	}
}

// TestPickedDropsExtraColumnsButNotMissingOnes: Picked reads a result with an extra column
// (a control outbox's cell column) and refuses one that lacks a field.
func TestPickedDropsExtraColumnsButNotMissingOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows, err := query.Picked[pair](ctx, testdb.Pool(t), statement("SELECT 'eu'::text AS region_name, 3::bigint AS a, 'y'::text AS b"))
	if err != nil || len(rows) != 1 || rows[0].A != 3 || *rows[0].B != "y" {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	_, err = query.Picked[pair](ctx, testdb.Pool(t), statement("SELECT 3::bigint AS a"))
	if err == nil || err.Error() != "cannot find field b in returned row" {
		t.Fatalf("error %v", err)
	}
}

// TestOne wants exactly one row.
func TestOne(t *testing.T) {
	t.Parallel()
	_, err := query.One[pair](context.Background(), testdb.Pool(t), statement("SELECT 1::bigint AS a, NULL::text AS b WHERE false"))
	if err == nil || err.Error() != "rowscan-test returned 0 rows, want 1" {
		t.Fatalf("error %v", err)
	}
}
