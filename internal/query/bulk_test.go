package query

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// bulkCases are the bulk repairs' statements (they write or lock, so they are not among the
// read cases): each with one batch, and printed over a selector as --print-sql shows them.
func bulkCases(t Target) map[string]Script {
	after := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	batch := ShardBatch([]ShardRef{{0, 1}, {0, 2}})
	return map[string]Script{
		"bulk-reschedule-batch":                {BulkReschedule(t, batch, RescheduleAllRows, Why{})},
		"bulk-reschedule-selected":             {BulkReschedule(t, SelectedShards(t, ShardSelector{Stuck: true, AtCap: true}, nil), RescheduleAllRows, Why{Command: "reschedule", Reason: "INC-9"})},
		"bulk-reschedule-group-heads-batch":    {BulkReschedule(t, batch, RescheduleGroupHeads, Why{})},
		"bulk-reschedule-group-heads-selected": {BulkReschedule(t, SelectedShards(t, ShardSelector{Stuck: true}, nil), RescheduleGroupHeads, Why{Command: "reschedule", Reason: "INC-9"})},
		"bulk-lock-heads":                      {BulkLockHeads(t, ShardBatch([]ShardRef{{0, 1}, {1, 5}}))},
		"bulk-make-due":                        {BulkMakeDue(t, batch, Why{Command: "skip"})},
		"bulk-skip-rows":                       {BulkSkipRows(t, batch, Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, &after, &after, Why{})},
		"bulk-skip-rows-selected":              {BulkSkipRows(t, SelectedShards(t, ShardSelector{Category: enum(2, "ORGANIZATION_UPDATE")}, nil), Enum{2, "ORGANIZATION_UPDATE"}, nil, nil, Why{})},
		"bulk-superseded":                      {BulkSuperseded(t, ShardBatch([]ShardRef{{0, 1}}), Why{})},
		"bulk-group-heads":                     {BulkCount(BulkGroupHeads(t, SelectedShards(t, ShardSelector{Stuck: true}, nil)))},
		"bulk-count":                           {BulkCount(BulkSkipRows(t, SelectedShards(t, ShardSelector{Category: enum(3, "ORGANIZATION_MEMBER_UPDATE")}, nil), Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, nil, &after, Why{}))},
	}
}

// TestGoldenBulk compares the bulk statements' printed SQL with their golden files.
func TestGoldenBulk(t *testing.T) {
	t.Parallel()
	for tname, target := range targets("") {
		for name, sc := range bulkCases(target) {
			got, err := sc.Render()
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tname, name, got)
		}
	}
}

// TestBulkStatementsRunInPsql pipes every printed bulk statement into psql inside a
// transaction it rolls back, in every target, against seeded rows.
func TestBulkStatementsRunInPsql(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText})
	seed(t, schema)
	var script strings.Builder
	script.WriteString("BEGIN;\n")
	for _, target := range targetsWithCell(schema, "us") {
		for _, sc := range bulkCases(target) {
			out, err := sc.Render()
			if err != nil {
				t.Fatal(err)
			}
			script.WriteString(out + "\n")
		}
	}
	script.WriteString("ROLLBACK;\n")
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN())
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}

// TestBulkRescheduleSkipsALockedShard: a second connection holds the head row of ORG/2 as a
// Sentry drainer does (FOR UPDATE); a batch of ORG/1, ORG/2 and an empty ORG/404 reschedules
// ORG/1's 4 rows at once, reports ORG/2 being drained without waiting, and ORG/404 empty.
func TestBulkRescheduleSkipsALockedShard(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx := context.Background()
	cell := Target{Silo: SiloCell, Schema: schema}
	drainer, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer drainer.Rollback(ctx) //nolint:errcheck // the drainer's lock ends with the test
	if _, err := drainer.Exec(ctx, "SELECT id FROM "+cell.From()+" WHERE shard_scope = 0 AND shard_identifier = 2 ORDER BY id LIMIT 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // checked below
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, tx, BulkReschedule(cell, ShardBatch([]ShardRef{{0, 1}, {0, 2}, {0, 404}}), RescheduleAllRows, Why{}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Rows[BulkShardRow](res)
	if err != nil {
		t.Fatal(err)
	}
	want := []BulkShardRow{{Scope: 0, ID: 1, Rows: 4}, {Scope: 0, ID: 2, BeingDrained: true}, {Scope: 0, ID: 404, Empty: true}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("bulk reschedule = %+v, want %+v", got, want)
	}
	var past, untouched int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FILTER (WHERE shard_identifier = 1 AND scheduled_for = '2016-08-01'::timestamptz), count(*) FILTER (WHERE shard_identifier = 2 AND scheduled_for > now()) FROM "+cell.From()+" WHERE shard_scope = 0", pgx.QueryExecModeSimpleProtocol).Scan(&past, &untouched); err != nil {
		t.Fatal(err)
	}
	if past != 4 || untouched != 2 {
		t.Fatalf("ORG/1 rows due now = %d (want 4), ORG/2 rows still in backoff = %d (want 2)", past, untouched)
	}
}
