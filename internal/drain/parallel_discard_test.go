package drain_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/testdb"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
)

// TestParallelDiscardMatchesSentryModel discards 24 shards, 4 at a time, with hot groups
// larger than the batch size: the rows left are the model's (the same groups a delivering
// drain visits, each deleted up to its newest row), every deleted row is in its shard's own
// operation of the one archive file, committed; a shard whose archive cannot be opened fails
// untouched, its schedule put back as it was before the claim.
func TestParallelDiscardMatchesSentryModel(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	const n = 24
	rows := seed(t, schema, drawShards(41, n))
	before := tableRows(t, schema)
	schedules := func() []string { return scheduleRows(t, schema, 3) }
	sched3 := schedules()
	path := filepath.Join(t.TempDir(), "discard.jsonl")
	var jobs []drain.Job
	for s := int64(1); s <= n; s++ {
		jobs = append(jobs, drain.Job{Shard: org(s)})
	}
	var mu sync.Mutex
	opened := map[int64]string{}
	o := parallelOptions(target, drain.ModeBatch, nil, 4, jobs)
	o.NewHandler = nil
	o.Base.Discard = true
	o.OpenArchive = func(k query.ShardKey) (*drain.Operation, error) {
		if k.ID == 3 {
			return nil, errors.New("disk full")
		}
		op, err := drain.OpenArchive(path, drain.OperationMeta{Command: drain.CommandDrainDiscard, User: "test", Schema: schema, Table: "sentry_regionoutbox",
			PayloadType: "text", Shard: &drain.ArchiveShard{Scope: k.Scope.Value, ID: k.ID}}, time.Now())
		if err == nil {
			mu.Lock()
			opened[k.ID] = op.Meta.ID
			mu.Unlock()
		}
		return op, err
	}
	res, err := drain.RunParallel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	table := rows
	for _, j := range jobs {
		if j.Shard.ID == 3 {
			continue
		}
		_, table = modelWhole(table, j.Shard.ID)
	}
	after := tableRows(t, schema)
	if d := diffRows(after, table); d != "" {
		t.Fatalf("rows left differ from the model:\n%s", d)
	}
	if got := scheduleRows(t, schema, 3); !slices.Equal(got, sched3) {
		t.Fatalf("shard 3's schedule %v, want it put back: %v", got, sched3)
	}
	for i, sh := range res.Shards {
		id := jobs[i].Shard.ID
		switch {
		case id == 3:
			if sh.Status != drain.StatusFailed || !sh.Restored || sh.Operation != "" || sh.Err == nil {
				t.Fatalf("shard 3: %+v, want failed and restored, no operation", sh)
			}
		case sh.Status != drain.StatusDone || sh.Operation != opened[id] || sh.Left == nil || *sh.Left != 0 || sh.Result.Deleted == 0:
			t.Fatalf("shard %d: %+v", id, sh)
		}
	}
	// The archive holds, committed, exactly the rows that are gone, each in its shard's operation.
	f, err := drain.ReadArchiveFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int64]bool{}
	for _, r := range after {
		kept[r.id] = true
	}
	archived := map[int64]bool{}
	for _, op := range f.Operations {
		if op.Problem != nil || opened[op.Shard.ID] != op.ID {
			t.Fatalf("operation %s of shard %d: problem %v", op.ID, op.Shard.ID, op.Problem)
		}
		for _, b := range op.Batches {
			if b.State != drain.BatchCommitted {
				t.Fatalf("operation %s batch %d not committed", op.ID, b.Seq)
			}
			for _, r := range b.Rows {
				if r.ShardID != op.Shard.ID || archived[r.ID] {
					t.Fatalf("row %d archived twice or outside its shard's operation", r.ID)
				}
				archived[r.ID] = true
			}
		}
	}
	for _, r := range before {
		if gone := !kept[r.id]; gone != archived[r.id] {
			t.Fatalf("row %d: deleted %v, archived %v", r.id, gone, archived[r.id])
		}
	}
	if len(f.Operations) != n-1 {
		t.Fatalf("%d operations, want %d", len(f.Operations), n-1)
	}
}

// scheduleRows is shard's rows' schedules, in id order.
func scheduleRows(t *testing.T, schema string, shard int64) []string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), "SELECT id || ' ' || scheduled_from || ' ' || scheduled_for FROM "+
		pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = $1 ORDER BY id", shard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// modelWhole is the model's drain of organization shard id up to its highest id (a parallel
// drain's watermark): what it delivers, and the table it leaves.
func modelWhole(table []mrow, id int64) (delivered, left []mrow) {
	key := mrow{scope: 0, shard: id}
	var bound int64
	for _, r := range table {
		if r.sameShard(key) {
			bound = max(bound, r.id)
		}
	}
	if bound == 0 {
		return nil, table
	}
	return modelDrain(table, key, bound, 0, func(int) []mrow { return nil })
}
