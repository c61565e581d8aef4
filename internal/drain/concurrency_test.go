package drain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDrainersAndWriter runs three drainers (both modes) on one shard while a writer inserts
// into it for two seconds: no deadlock, no error, every coalesce group's latest payload is
// delivered at least once, and no row is deleted without a delivery of its group at or
// after it (nothing lost).
func TestDrainersAndWriter(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	latest := map[string]int{}    // group -> highest sequence written
	delivered := map[string]int{} // group -> highest sequence delivered
	h := drain.HandlerFunc(func(_ context.Context, m drain.Message) error {
		var p struct{ Seq int }
		if m.Payload != nil {
			_ = json.Unmarshal([]byte(*m.Payload), &p)
		}
		mu.Lock()
		defer mu.Unlock()
		g := fmt.Sprintf("%d/%d", m.Category, m.Object)
		delivered[g] = max(delivered[g], p.Seq)
		return nil
	})

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		deadline := time.Now().Add(2 * time.Second)
		for seq := 1; time.Now().Before(deadline); seq++ {
			g := seq % 7
			testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: int64(g),
				Payload: testdb.Str(fmt.Sprintf(`{"Seq": %d}`, seq))})
			mu.Lock()
			latest[fmt.Sprintf("3/%d", g)] = seq
			mu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i, mode := range []drain.Mode{drain.ModeBatch, drain.ModeExact, drain.ModeBatch} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conn(t)
			for {
				select {
				case <-writerDone:
					// One last pass after the writer stops, then done.
					_, err := drain.Run(ctx, c, drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode, BatchSize: 3})
					if err != nil {
						errs <- fmt.Errorf("drainer %d: %w", i, err)
					}
					return
				default:
				}
				if _, err := drain.Run(ctx, c, drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode, BatchSize: 3}); err != nil {
					errs <- fmt.Errorf("drainer %d: %w", i, err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A final single drain empties whatever the last contended passes left.
	if _, err := drain.Run(ctx, conn(t), drain.Options{Target: target, Shard: org(1), Handler: h}); err != nil {
		t.Fatal(err)
	}
	if left := ids(t, schema); len(left) != 0 {
		t.Fatalf("%d rows left", len(left))
	}
	for g, seq := range latest {
		if delivered[g] < seq {
			t.Errorf("group %s: latest payload %d written, only %d delivered", g, seq, delivered[g])
		}
	}
	if len(latest) == 0 {
		t.Fatal("the writer wrote nothing")
	}
}

// D11 and faults: the database ends the drainer's session in the middle of a delivery. The
// drain reports an error, the message stays, and a re-run completes it.
func TestDatabaseDropsTheDrainer(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 2})
	c := conn(t)
	var pid uint32
	if err := c.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	killed := false
	h := drain.HandlerFunc(func(ctx context.Context, m drain.Message) error {
		if !killed {
			killed = true
			if _, err := testdb.Pool(t).Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	})
	if _, err := drain.Run(context.Background(), c, drain.Options{Target: target, Shard: org(1), Handler: h, Mode: drain.ModeExact}); err == nil {
		t.Fatal("no error after the session was terminated")
	}
	if left := ids(t, schema); len(left) != 2 {
		t.Fatalf("rows after the failed drain: %v (the interrupted message must stay)", left)
	}
	res, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: h})
	if err != nil || res.Delivered != 2 || len(ids(t, schema)) != 0 {
		t.Fatalf("re-run: %+v %v", res, err)
	}
}

// D17: get_shard_depths_descending on the control table with cells: deepest first, the total.
func TestControlShardDepths(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	add := func(cell string, shard int64, n int) {
		for i := range n {
			rows = append(rows, testdb.Row{Cell: cell, Scope: 3, Shard: shard, Category: 5, Object: shard*10000 + int64(i), Payload: testdb.Str(`{"foo": "bar"}`)})
		}
	}
	add("eu", 1, 4)
	add("us", 2, 7)
	add("us", 3, 1)
	testdb.Insert(t, schema, "sentry_controloutbox", rows...)
	target := query.Target{Silo: query.SiloControl, Schema: schema}
	ctx := context.Background()
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	res, err := query.Run(ctx, tx, query.TopShards(target, query.ShardFilter{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%v/%v/%v/%v", r[0], r[1], r[2], r[3]))
	}
	if fmt.Sprint(got) != "[us/3/2/7 eu/3/1/4 us/3/3/1]" {
		t.Fatalf("control depths = %v, want [(us,3,2,7) (eu,3,1,4) (us,3,3,1)]", got)
	}
	one, err := query.Run(ctx, tx, query.TopShards(target, query.ShardFilter{Limit: 1}))
	if err != nil || len(one.Rows) != 1 {
		t.Fatalf("limit 1: %v %v", one, err)
	}
	total, err := query.Run(ctx, tx, query.Depth(target))
	if err != nil || total.Rows[0][1] != int64(12) {
		t.Fatalf("total: %v %v", total, err)
	}
}
