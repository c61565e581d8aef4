package query

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// doctorRowReaders read each doctor statement's result into its row type.
func doctorRowReaders() map[string]func(*Result) (int, error) {
	return map[string]func(*Result) (int, error){
		"doctor-unclaimed-shards":  countRows[DoctorUnclaimedRow],
		"doctor-capped-shards":     countRows[DoctorCappedRow],
		"doctor-disabled-shards":   countRows[DoctorDisabledRow],
		"doctor-lock-waits":        countRows[DoctorLockWaitRow],
		"doctor-tables":            countRows[DoctorTableRow],
		"doctor-indexes":           countRows[DoctorIndexRow],
		"doctor-server":            countRows[DoctorServerRow],
		"doctor-xmin-sessions":     countRows[DoctorXminSessionRow],
		"doctor-prepared-xacts":    countRows[DoctorPreparedXactRow],
		"doctor-replication-slots": countRows[DoctorReplicationSlotRow],
		"doctor-lock-timeout":      countRows[DoctorLockTimeoutRow],
	}
}

func countRows[T any](res *Result) (int, error) {
	rows, err := Rows[T](res)
	return len(rows), err
}

func runReadOnly(t *testing.T, st Statement) *Result {
	t.Helper()
	ctx := context.Background()
	tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	res, err := Run(ctx, tx, st)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDoctorRowTypesMatchPostgres reads every doctor statement, run on the seed in both
// silos, into its row type: each column the type names exists with the type PostgreSQL
// returns, and every column that came back NULL has a pointer field.
func TestDoctorRowTypesMatchPostgres(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	readers := doctorRowReaders()
	for _, target := range []Target{{Silo: SiloCell, Schema: schema}, {Silo: SiloControl, Schema: schema}} {
		for name, st := range doctorCases(target) {
			read, ok := readers[name]
			if !ok {
				t.Fatalf("%s has no row type", name)
			}
			res := runReadOnly(t, st)
			if n, err := read(res); err != nil || n != len(res.Rows) {
				t.Errorf("%s (%s): read %d of %d rows: %v", name, target.Silo, n, len(res.Rows), err)
			}
		}
	}
	capped, err := Rows[DoctorCappedRow](runReadOnly(t, DoctorCappedShards(Target{Silo: SiloCell, Schema: schema}, 10)))
	if err != nil || len(capped) != 1 || capped[0].ShardScope != 0 || capped[0].ShardIdentifier != 2 || capped[0].Depth != 2 || capped[0].CappedShards != 1 {
		t.Fatalf("capped shards = %+v, %v; want ORG/2 with depth 2", capped, err)
	}
}

// TestDoctorRowsRefuseNullAndMissing: a NULL in a column whose field is not a pointer, or a
// column the statement no longer returns, is an error naming the statement and the column,
// never a silent zero.
func TestDoctorRowsRefuseNullAndMissing(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	res := runReadOnly(t, DoctorCappedShards(Target{Silo: SiloCell, Schema: schema}, 10))
	if len(res.Rows) != 1 {
		t.Fatalf("capped shards = %v, want one row", res.Rows)
	}
	nulled := *res
	nulled.Rows = [][]any{slices.Clone(res.Rows[0])}
	nulled.Rows[0][res.Col("depth")] = nil
	if _, err := Rows[DoctorCappedRow](&nulled); err == nil || err.Error() != "doctor-capped-shards, column depth: NULL where int64 is expected (make the field a pointer)" {
		t.Errorf("NULL depth: %v", err)
	}
	dropped := *res
	c := res.Col("head_id")
	dropped.Columns = slices.Delete(slices.Clone(res.Columns), c, c+1)
	dropped.Rows = [][]any{slices.Delete(slices.Clone(res.Rows[0]), c, c+1)}
	if _, err := Rows[DoctorCappedRow](&dropped); err == nil || err.Error() != `doctor-capped-shards returns no column "head_id"` {
		t.Errorf("no head_id: %v", err)
	}

	// On a primary the replay lag is NULL and reads as nil; the role is never NULL.
	server := runReadOnly(t, DoctorServer())
	rows, err := Rows[DoctorServerRow](server)
	if err != nil || len(rows) != 1 || rows[0].InRecovery || rows[0].ReplayLag != nil || rows[0].ReplayLagBytes != nil || rows[0].Role == "" {
		t.Fatalf("server = %+v, %v", rows, err)
	}
	server.Rows[0][server.Col("role")] = nil
	if _, err := Rows[DoctorServerRow](server); err == nil || err.Error() != "doctor-server, column role: NULL where string is expected (make the field a pointer)" {
		t.Errorf("NULL role: %v", err)
	}
}
