package query

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDrainClaimNeverJoinsItsCTEsInALoop: whatever join the planner picks (hash and merge
// joins off, as stale statistics that think the shard empty make it pick), drain-claim's
// plan holds no nested loop whose inner side scans a CTE: such a loop compares every row of
// the shard with every other (8.6 s instead of 83 ms on a 6,700-row shard). The claim
// reaches the rows it updates by primary key from "old" instead. Its result is the model's:
// every row of the shard, with its schedule from before the claim.
func TestDrainClaimNeverJoinsItsCTEsInALoop(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := testdb.Pool(t)
	table := pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()
	for _, s := range []string{
		"ALTER TABLE " + table + " SET (autovacuum_enabled = false)",
		"INSERT INTO " + table + " (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for) SELECT 0, 1000 + i % 500, 3, i, '{}', now(), now() FROM generate_series(1, 5000) i",
		"ANALYZE " + table, // the statistics know nothing of shard 77
		"INSERT INTO " + table + " (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for) SELECT 0, 77, 3, i % 40, '{}', now() - interval '8 seconds', now() - interval '4 seconds' FROM generate_series(1, 700) i",
	} {
		if _, err := p.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	target := Target{Silo: SiloCell, Schema: schema}
	now := time.Now()
	sql, args, err := DrainClaim(target, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 77}, now.Add(-8*time.Second), now.Add(-4*time.Second)).Bind()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // the claim is rolled back
	for _, s := range []string{"SET LOCAL enable_hashjoin = off", "SET LOCAL enable_mergejoin = off"} {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var plan []struct{ Plan planNode }
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	if bad := loopOverCTE(plan[0].Plan); bad != "" {
		t.Fatalf("drain-claim plans a nested loop over a CTE scan (%s):\n%s", bad, raw)
	}
	// The UPDATE is Sentry's own, the shard's rows scanned and nothing joined to them: a join
	// to "old" by id once made the planner hash the whole table (55.9 s against Sentry's
	// 24.2 s on the 2M-row shard of a 20M-row table).
	if bad := updateJoins(plan[0].Plan); bad != "" {
		t.Fatalf("drain-claim's UPDATE reads its rows through a %s, not a scan of the shard:\n%s", bad, raw)
	}
	res, err := Run(ctx, tx, DrainClaim(target, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 77}, now.Add(-8*time.Second), now.Add(-4*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("claim: %d schedule groups, want 1: %v", len(res.Rows), res.Rows)
	}
	got, _ := res.Rows[0][res.Col("ids")].([]any)
	ids := make([]int64, len(got))
	for i, v := range got {
		ids[i], _ = v.(int64)
	}
	slices.Sort(ids) // array_agg's order is the scan's: the claim's ids are a set
	var want []int64
	rows, err := tx.Query(ctx, "SELECT id FROM "+table+" WHERE shard_identifier = 77 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if len(want) != 700 || !slices.Equal(ids, want) {
		t.Fatalf("claim returned %d ids (%v…), want the shard's %d", len(ids), ids[:min(3, len(ids))], len(want))
	}
}

type planNode struct {
	NodeType string     `json:"Node Type"`
	Plans    []planNode `json:"Plans"`
}

// updateJoins names the node an UPDATE (ModifyTable) reads its rows through when it is not a
// scan of the table, or "".
func updateJoins(n planNode) string {
	if n.NodeType == "ModifyTable" && len(n.Plans) > 0 {
		switch c := n.Plans[0].NodeType; c {
		case "Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan":
		default:
			return c
		}
	}
	for _, c := range n.Plans {
		if s := updateJoins(c); s != "" {
			return s
		}
	}
	return ""
}

// loopOverCTE names a nested loop whose inner side (its second child) is a CTE scan, or "".
func loopOverCTE(n planNode) string {
	if n.NodeType == "Nested Loop" && len(n.Plans) == 2 && n.Plans[1].NodeType == "CTE Scan" {
		return "Nested Loop, inner CTE Scan"
	}
	for _, c := range n.Plans {
		if s := loopOverCTE(c); s != "" {
			return s
		}
	}
	return ""
}
