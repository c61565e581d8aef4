package query

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDeliveryAndCompactRows (#36): the statements that choose what a drain delivers and
// what compact deletes are pinned by the rows they find in the seed, not only by their text:
// ORG 1 holds the coalesce group (ORGANIZATION_UPDATE, 1) of three rows (its head the
// lowest) and one other row. A drain delivers the group's newest row (drain-newest, and
// drain-next beside the shard's head); compact deletes every row of the group below its
// newest, never the newest (superseded, and bulk-superseded over a batch of shards).
func TestDeliveryAndCompactRows(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seed(t, schema)
	ctx := context.Background()
	cell := Target{Silo: SiloCell, Schema: schema}
	org1 := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 1}
	run := func(st Statement) [][]any { return runBound(t, st) }
	firstColumn := func(rows [][]any) []int64 {
		out := []int64{}
		for _, r := range rows {
			out = append(out, r[0].(int64))
		}
		return out
	}
	var group []int64
	var head int64
	if err := testdb.Pool(t).QueryRow(ctx, fmt.Sprintf(`SELECT array_agg(id ORDER BY id) FILTER (WHERE category = 2 AND object_identifier = 1), min(id)
		FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 1`, Ident(schema))).Scan(&group, &head); err != nil {
		t.Fatal(err)
	}
	if len(group) != 3 || group[0] != head {
		t.Fatalf("seed: group %v, head %d: want three rows, the head the lowest", group, head)
	}
	newest, older := group[2], group[:2]

	if got := firstColumn(run(DrainNewest(cell, org1, 2, 1))); !reflect.DeepEqual(got, []int64{newest}) {
		t.Errorf("drain-newest delivers %v, want the group's newest [%d]", got, newest)
	}
	next := run(DrainNext(cell, org1, 0, nil))
	if len(next) != 1 || next[0][0] != newest || next[0][6] != head {
		t.Errorf("drain-next = %v, want the newest row %d of the head %d's group", next, newest, head)
	}
	if got := firstColumn(run(Superseded(cell, org1, 0, Why{}))); !reflect.DeepEqual(got, older) {
		t.Errorf("superseded (what compact deletes) = %v, want %v: every row of the group below its newest", got, older)
	}
	if got := firstColumn(run(BulkSuperseded(cell, ShardBatch([]ShardRef{{0, 1}, {0, 2}}), Why{}))); !reflect.DeepEqual(got, older) {
		t.Errorf("bulk-superseded (what a bulk compact deletes) = %v, want %v", got, older)
	}
}
