package query

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// doctorCases are the doctor's statements for one outbox table (and, for the lock query,
// both tables, as in a monolith).
func doctorCases(t Target) map[string]Statement {
	other := Target{Silo: SiloControl, Schema: t.Schema}
	if t.Control() {
		other = Target{Silo: SiloCell, Schema: t.Schema}
	}
	return map[string]Statement{
		"doctor-unclaimed-shards":  DoctorUnclaimed(t, 1000, 10),
		"doctor-capped-shards":     DoctorCappedShards(t, 10),
		"doctor-disabled-shards":   DoctorDisabledShards(t, Enum{0, "ORGANIZATION_SCOPE"}, []int64{1, 2}),
		"doctor-lock-waits":        DoctorLockWaits([]Target{t, other}),
		"doctor-tables":            DoctorTables(t.Schema, []string{CellTable, ControlTable}),
		"doctor-indexes":           DoctorIndexes(t.Schema, []string{CellTable, ControlTable}),
		"doctor-server":            DoctorServer(),
		"doctor-xmin-sessions":     DoctorXminSessions(10),
		"doctor-prepared-xacts":    DoctorPreparedXacts(10),
		"doctor-replication-slots": DoctorReplicationSlots(),
		"doctor-lock-timeout":      DoctorLockTimeout(time.Second),
	}
}

// serverWide statements read views whose rows belong to other sessions (which come and go
// between two runs): their printed and bound forms are compared by columns only.
var serverWide = map[string]bool{ //nolint:gochecknoglobals // test table
	"doctor-xmin-sessions": true, "doctor-prepared-xacts": true, "doctor-replication-slots": true, "doctor-lock-waits": true,
}

// TestGoldenDoctor compares the doctor's printed SQL with testdata/golden/<target>/<name>.sql
// (make golden rewrites them).
func TestGoldenDoctor(t *testing.T) {
	t.Parallel()
	for tname, target := range targets("") {
		for name, st := range doctorCases(target) {
			t.Run(tname+"/"+name, func(t *testing.T) {
				t.Parallel()
				got, err := st.Render()
				if err != nil {
					t.Fatal(err)
				}
				assertGolden(t, tname, name, got)
			})
		}
	}
}

// TestDoctorPrintedAndBound runs every doctor statement as printed and as bound in one
// snapshot, on the seed, in both silos.
func TestDoctorPrintedAndBound(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	nonEmpty := 0
	for tname, target := range targets(schema) {
		for name, st := range doctorCases(target) {
			printed, err := st.Render()
			if err != nil {
				t.Fatal(err)
			}
			sql, args, err := st.Bind()
			if err != nil {
				t.Fatal(err)
			}
			a := collect(ctx, t, tx, printed, pgx.QueryExecModeSimpleProtocol)
			b := collect(ctx, t, tx, sql, args...)
			if serverWide[name] {
				continue
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s/%s: printed and bound forms differ\nprinted: %v\nbound:   %v\n%s", tname, name, a, b, printed)
			}
			if len(a) > 0 {
				nonEmpty++
			}
		}
	}
	// unclaimed, capped, disabled, tables, indexes, server and timeout return rows for
	// every target; the hostile cell has rows too.
	if nonEmpty < 3*7 {
		t.Fatalf("only %d statements returned rows; the seed does not exercise them", nonEmpty)
	}
}

// TestDoctorFindsTheSeed pins what the queue statements find in the seed.
func TestDoctorFindsTheSeed(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx := context.Background()
	cell := Target{Silo: SiloCell, Schema: schema}
	run := func(st Statement) *Result {
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
	capped := run(DoctorCappedShards(cell, 10))
	if len(capped.Rows) != 1 || capped.Rows[0][capped.Col("shard_identifier")] != int64(2) || capped.Rows[0][capped.Col("depth")] != int64(2) {
		t.Fatalf("capped shards = %v, want ORG/2 with depth 2", capped.Rows)
	}
	// Every shard but ORG/2 (capped) and USER/5 (claimed now, 4 s step) is due.
	unclaimed := run(DoctorUnclaimed(cell, 1000, 10))
	if len(unclaimed.Rows) != 5 {
		t.Fatalf("due shards among the oldest = %d, want 5: %v", len(unclaimed.Rows), unclaimed.Rows)
	}
	disabled := run(DoctorDisabledShards(cell, Enum{0, "ORGANIZATION_SCOPE"}, []int64{1, 2, 99}))
	stalled := map[int64]bool{}
	for _, r := range disabled.Rows {
		stalled[r[disabled.Col("shard_identifier")].(int64)] = r[disabled.Col("trimming_stalled")].(bool)
	}
	// ORG/1's head (category 2, object 1) has newer rows in its group; ORG/2's head is alone.
	if !reflect.DeepEqual(stalled, map[int64]bool{1: false, 2: true}) {
		t.Fatalf("trimming stalled = %v, want ORG/1 false, ORG/2 true (and no ORG/99: it holds no rows)", stalled)
	}
}

// TestDoctorStatementsAreIndexAligned: with sequential scans priced out, no doctor statement
// reads an outbox table by a sequential scan, so each has an index path (the reference's
// §1.4 indexes, the primary key, or a TID probe): nothing scans the heap on a large table.
func TestDoctorStatementsAreIndexAligned(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	for tname, target := range targets(schema) {
		for _, name := range []string{"doctor-unclaimed-shards", "doctor-capped-shards", "doctor-disabled-shards", "doctor-lock-waits"} {
			printed, err := doctorCases(target)[name].Render()
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range collect(ctx, t, tx, "EXPLAIN "+printed, pgx.QueryExecModeSimpleProtocol) {
				if plan := line[0].(string); strings.Contains(plan, "Seq Scan on sentry_") {
					t.Fatalf("%s/%s reads the table sequentially: %s\n%s", tname, name, plan, printed)
				}
			}
		}
	}
}
