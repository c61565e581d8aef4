package query

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// analyzedNode is a node of EXPLAIN (ANALYZE, FORMAT JSON): what it read of which table.
type analyzedNode struct {
	NodeType string         `json:"Node Type"`
	Relation string         `json:"Relation Name"`
	Rows     float64        `json:"Actual Rows"`
	Loops    float64        `json:"Actual Loops"`
	Plans    []analyzedNode `json:"Plans"`
}

// rowsRead adds up the rows every scan of table returned (rows × loops), and the rows the
// UPDATE wrote.
func rowsRead(n analyzedNode, table string) (read, updated float64) {
	if n.Relation == table && n.NodeType != "ModifyTable" {
		read += n.Rows * n.Loops
	}
	if n.NodeType == "ModifyTable" && len(n.Plans) > 0 {
		updated += n.Plans[0].Rows * n.Plans[0].Loops
	}
	for _, c := range n.Plans {
		r, u := rowsRead(c, table)
		read, updated = read+r, updated+u
	}
	return read, updated
}

// TestBulkRescheduleGroupHeadsReadsEachShardOnce (#23): on the bench's shape (shards of 120
// rows in 12 coalesce groups, beside 2,920 shards it does not touch), bulk-reschedule
// --group-heads over a batch of 100 shards (--batch-shards' default) updates exactly their
// 1,200 group heads and reads no more than each shard's rows once (the heads' min(id) per
// group), the heads by id and each shard's head row twice (found, then locked): 13,400 rows.
// With the heads' CTE inlined the planner read every row of each shard again to hash-join
// the heads (24,200 rows).
func TestBulkRescheduleGroupHeadsReadsEachShardOnce(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := testdb.Pool(t)
	table := pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()
	for _, s := range []string{
		"INSERT INTO " + table + ` (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
			SELECT 0, s, 2, i % 12, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
			  FROM generate_series(1, 3020) s, generate_series(1, 120) i ORDER BY s, i`,
		"VACUUM ANALYZE " + table,
	} {
		if _, err := p.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	refs := make([]ShardRef, 100)
	for i := range refs {
		refs[i] = ShardRef{Scope: 0, ID: int64(1001 + i)}
	}
	sql, args, err := BulkReschedule(Target{Silo: SiloCell, Schema: schema}, ShardBatch(refs), RescheduleGroupHeads, Why{}).Bind()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the reschedule is rolled back
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var plan []struct{ Plan analyzedNode }
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	read, updated := rowsRead(plan[0].Plan, "sentry_regionoutbox")
	if want := float64(100 * 12); updated != want {
		t.Errorf("the UPDATE wrote %v rows, want the %v group heads:\n%s", updated, want, raw)
	}
	if limit := float64(100*120 + 100*12 + 2*100); read > limit {
		t.Errorf("the statement read %v rows of the table, more than each shard's once, its heads and its head row twice (%v):\n%s", read, limit, raw)
	}
}
