package query

import (
	"strings"
	"testing"
)

// TestRowsByName reads rows by column name whatever the column order, takes NULL only into
// pointers, and refuses a missing column or a wrong type instead of reading 0.
func TestRowsByName(t *testing.T) {
	t.Parallel()
	type row struct {
		Scope    int    `db:"shard_scope"`
		Depth    int64  `db:"depth"`
		Cell     string `db:"cell"`
		Newest   *int64 `db:"newest_id"`
		Untagged int
	}
	res := &Result{Statement: "x", Columns: []string{"depth", "newest_id", "cell", "shard_scope"},
		Rows: [][]any{{int64(7), nil, "us", int64(1)}, {int64(9), int64(42), "de", int64(0)}}}
	got, err := Rows[row](res)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (row{Scope: 1, Depth: 7, Cell: "us"}) || got[1].Depth != 9 || got[1].Newest == nil || *got[1].Newest != 42 {
		t.Fatalf("Rows = %+v", got)
	}
	for _, tc := range []struct {
		res  *Result
		want string
	}{
		{&Result{Statement: "x", Columns: []string{"depth"}}, `x returns no column "shard_scope"`},
		{&Result{Statement: "x", Columns: []string{"depth", "newest_id", "cell", "shard_scope"}, Rows: [][]any{{nil, nil, "us", int64(1)}}}, "x, column depth: NULL where int64 is expected"},
		{&Result{Statement: "x", Columns: []string{"depth", "newest_id", "cell", "shard_scope"}, Rows: [][]any{{"7", nil, "us", int64(1)}}}, "x, column depth: string where int64 is expected"},
	} {
		if _, err := Rows[row](tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Rows error = %v, want %q", err, tc.want)
		}
	}
}

// TestRowsOptionalColumnsAndTypedArrays: a column tagged optional may be absent (the control
// silo's cell column is one of two names, or none), an array column reads into a typed
// slice element by element, and a column no db tag declares is named by Undeclared.
func TestRowsOptionalColumnsAndTypedArrays(t *testing.T) {
	t.Parallel()
	type row struct {
		Cell *string `db:"region_name,optional"`
		IDs  []int64 `db:"ids"`
	}
	rows, err := Rows[row](&Result{Columns: []string{"ids"}, Rows: [][]any{{[]any{int64(1), int64(2)}}}})
	if err != nil || len(rows) != 1 || rows[0].Cell != nil || len(rows[0].IDs) != 2 || rows[0].IDs[1] != 2 {
		t.Fatalf("%+v, %v", rows, err)
	}
	if _, err := Rows[row](&Result{Columns: []string{"ids"}, Rows: [][]any{{[]any{int64(1), nil}}}}); err == nil {
		t.Error("a NULL array element in an []int64: no error")
	}
	if c := Undeclared[row](&Result{Columns: []string{"ids", "extra"}}); c != "extra" {
		t.Errorf("Undeclared = %q, want extra", c)
	}
}
