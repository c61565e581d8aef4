package doctor

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestReadShardRowsCell reads the control silo's cell under the column name the table gives
// it, and refuses a NULL cell or a result without the column instead of an empty cell.
func TestReadShardRowsCell(t *testing.T) {
	t.Parallel()
	type shard struct {
		Scope int64 `db:"shard_scope"`
	}
	control := query.Target{Silo: query.SiloControl, CellColumn: "cell_name"}
	res := &query.Result{Statement: "doctor-capped-shards", Columns: []string{"cell_name", "shard_scope"},
		Rows: [][]any{{"us", int64(1)}, {"de", int64(0)}}}
	rows, cells, err := readShardRows[shard](res, control)
	if err != nil || !reflect.DeepEqual(rows, []shard{{1}, {0}}) || !reflect.DeepEqual(cells, []string{"us", "de"}) {
		t.Fatalf("control rows = %v, cells %q, %v", rows, cells, err)
	}
	if res.Columns[0] != "cell_name" {
		t.Fatalf("the result's columns were renamed: %v", res.Columns)
	}
	_, cells, err = readShardRows[shard](&query.Result{Statement: "x", Columns: []string{"shard_scope"}, Rows: [][]any{{int64(1)}}}, query.Target{Silo: query.SiloCell})
	if err != nil || !reflect.DeepEqual(cells, []string{""}) {
		t.Fatalf("cell silo cells = %q, %v", cells, err)
	}
	for _, tc := range []struct {
		res  *query.Result
		want string
	}{
		{&query.Result{Statement: "x", Columns: []string{"cell_name", "shard_scope"}, Rows: [][]any{{nil, int64(1)}}},
			"x, column cell: NULL where string is expected (make the field a pointer)"},
		{&query.Result{Statement: "x", Columns: []string{"shard_scope"}, Rows: [][]any{{int64(1)}}}, `x returns no column "cell_name"`},
	} {
		if _, _, err := readShardRows[shard](tc.res, control); err == nil || err.Error() != tc.want {
			t.Errorf("readShardRows error = %v, want %q", err, tc.want)
		}
	}
}
