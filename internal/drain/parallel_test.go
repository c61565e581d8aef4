package drain_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// shardLog records deliveries by shard, for handlers made one per worker.
type shardLog struct {
	mu   sync.Mutex
	sent map[int64][]drain.Message
	// deliver, when set, runs before a delivery is recorded; its error fails the delivery.
	deliver func(ctx context.Context, m drain.Message) error
}

func (l *shardLog) newHandler() (drain.Handler, error) {
	return drain.HandlerFunc(func(ctx context.Context, m drain.Message) error {
		if l.deliver != nil {
			if err := l.deliver(ctx, m); err != nil {
				return err
			}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.sent[m.Shard] = append(l.sent[m.Shard], m)
		return nil
	}), nil
}

func connector(ctx context.Context) (*db.Conn, error) {
	return db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "drain-test"})
}

func parallelOptions(target query.Target, mode drain.Mode, log *shardLog, workers int, jobs []drain.Job) drain.ParallelOptions {
	return drain.ParallelOptions{
		Base: drain.Options{Target: target, Mode: mode, BatchSize: 3, HandlerTimeout: 10 * time.Second, Command: "drain", Reason: "parallel test",
			CategoryName: func(int) string { return "C" }, ScopeName: func(int) string { return "S" }},
		Jobs: jobs, Workers: workers, Connect: connector, NewHandler: log.newHandler,
	}
}

// drawShards draws rows for shards 1..n of the organization scope, interleaved, with hot
// groups larger than the batch size (3) and rows of another scope under the same ids,
// which no job names.
func drawShards(seed uint64, n int) []mrow {
	r := rand.New(rand.NewPCG(seed, 0x9a11))
	var rows []mrow
	for range 40 * n {
		row := mrow{scope: 0, shard: int64(1 + r.IntN(n)), cat: 2 + r.IntN(3), obj: int64(r.IntN(6))}
		if r.IntN(10) == 0 {
			row.scope = 3
		}
		s := fmt.Sprintf(`{"n": %d}`, len(rows))
		row.payload = &s
		rows = append(rows, row)
	}
	return rows
}

func seed(t *testing.T, schema string, rows []mrow) []mrow {
	t.Helper()
	got, err := insertRows(context.Background(), testdb.Pool(t), schema, "sentry_regionoutbox", true, rows)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(rows)
	for i := range out {
		out[i].id = got[i]
	}
	return out
}

func tableRows(t *testing.T, schema string) []mrow {
	t.Helper()
	res, err := testdb.Pool(t).Query(context.Background(), "SELECT id, shard_scope, shard_identifier, category, object_identifier, payload::text FROM "+
		pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var out []mrow
	for res.Next() {
		var r mrow
		if err := res.Scan(&r.id, &r.scope, &r.shard, &r.cat, &r.obj, &r.payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParallelDrainMatchesSentryModel drains 24 shards, 4 at a time, in both modes, and
// checks every shard against the model of Sentry's drain (model_test.go) run shard after
// shard: the same messages delivered in the same order with the same payloads, and exactly
// the rows it leaves; a kill-switched job is reported and untouched, an empty one empty.
func TestParallelDrainMatchesSentryModel(t *testing.T) {
	t.Parallel()
	for i, mode := range []drain.Mode{drain.ModeBatch, drain.ModeExact} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target := setup(t)
			const n = 24
			rows := seed(t, schema, drawShards(uint64(7+i), n))
			var jobs []drain.Job
			for s := int64(1); s <= n+1; s++ { // shard n+1 is empty
				j := drain.Job{Shard: org(s)}
				if s == 5 {
					j.Skip = drain.StatusKillswitched
				}
				jobs = append(jobs, j)
			}
			log := &shardLog{sent: map[int64][]drain.Message{}}
			res, err := drain.RunParallel(context.Background(), parallelOptions(target, mode, log, 4, jobs))
			if err != nil {
				t.Fatal(err)
			}
			table := rows
			for _, j := range jobs {
				var want []mrow
				if j.Skip == "" {
					want, table = modelWhole(table, j.Shard.ID)
				}
				got := log.sent[j.Shard.ID]
				if len(got) != len(want) {
					t.Fatalf("shard %d: delivered %d, model %d", j.Shard.ID, len(got), len(want))
				}
				for k := range want {
					if got[k].ID != want[k].id || got[k].Category != want[k].cat || got[k].Object != want[k].obj || *got[k].Payload != *want[k].payload {
						t.Fatalf("shard %d message %d: got %d (%d/%d), model %s", j.Shard.ID, k, got[k].ID, got[k].Category, got[k].Object, show(want[k]))
					}
				}
			}
			if d := diffRows(tableRows(t, schema), table); d != "" {
				t.Fatalf("rows left differ from the model:\n%s", d)
			}
			for i, sh := range res.Shards {
				id := jobs[i].Shard.ID
				var left int64
				for _, r := range table {
					if r.sameShard(mrow{scope: 0, shard: id}) {
						left++
					}
				}
				wantStatus := drain.StatusDone
				switch id {
				case 5:
					wantStatus = drain.StatusKillswitched
				case n + 1:
					wantStatus = drain.StatusEmpty
				}
				if sh.Shard.ID != id || sh.Status != wantStatus || sh.Err != nil || sh.Left == nil || *sh.Left != left || sh.Result.Delivered != len(log.sent[id]) {
					t.Fatalf("shard %d: %+v (left %v), want %s with %d left", id, sh, sh.Left, wantStatus, left)
				}
			}
		})
	}
}

// threeEach seeds shards 1..n with three messages each (three groups).
func threeEach(t *testing.T, schema string, n int) {
	t.Helper()
	var rows []mrow
	for s := 1; s <= n; s++ {
		for o := range 3 {
			p := fmt.Sprintf(`{"s": %d, "o": %d}`, s, o)
			rows = append(rows, mrow{scope: 0, shard: int64(s), cat: 3, obj: int64(o), payload: &p})
		}
	}
	seed(t, schema, rows)
}

func statuses(res drain.ParallelResult) []string {
	var out []string
	for _, sh := range res.Shards {
		left := "?"
		if sh.Left != nil {
			left = fmt.Sprint(*sh.Left)
		}
		out = append(out, fmt.Sprintf("%d:%s:%d:%s", sh.Shard.ID, sh.Status, sh.Result.Delivered, left))
	}
	return out
}

func jobsOf(ids ...int64) []drain.Job {
	var jobs []drain.Job
	for _, id := range ids {
		jobs = append(jobs, drain.Job{Shard: org(id)})
	}
	return jobs
}

// TestParallelDrainFailingShard: a delivery failing in shard 3 stops that shard at the
// message (head-of-line) and no other; with --fail-fast the shards after it are not
// started.
func TestParallelDrainFailingShard(t *testing.T) {
	t.Parallel()
	failing := func(ctx context.Context, m drain.Message) error {
		if m.Shard == 3 && m.Object == 1 {
			return errors.New("receiver said 500")
		}
		return nil
	}
	t.Run("carry on", func(t *testing.T) {
		t.Parallel()
		schema, target := setup(t)
		threeEach(t, schema, 6)
		log := &shardLog{sent: map[int64][]drain.Message{}, deliver: failing}
		res, err := drain.RunParallel(context.Background(), parallelOptions(target, drain.ModeBatch, log, 3, jobsOf(1, 2, 3, 4, 5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1:done:3:0", "2:done:3:0", "3:failed:1:2", "4:done:3:0", "5:done:3:0", "6:done:3:0"}
		if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) || res.Shards[2].Err == nil || res.Count(drain.StatusFailed) != 1 {
			t.Fatalf("got %v (%v), want %v", got, res.Shards[2].Err, want)
		}
		if d, del, left := res.Totals(); d != 16 || del != 16 || left == nil || *left != 2 {
			t.Fatalf("totals %d %d %v", d, del, left)
		}
	})
	t.Run("fail fast", func(t *testing.T) {
		t.Parallel()
		schema, target := setup(t)
		threeEach(t, schema, 6)
		log := &shardLog{sent: map[int64][]drain.Message{}, deliver: failing}
		o := parallelOptions(target, drain.ModeExact, log, 1, jobsOf(1, 2, 3, 4, 5, 6))
		o.FailFast = true
		res, err := drain.RunParallel(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1:done:3:0", "2:done:3:0", "3:failed:1:2", "4:not started:0:?", "5:not started:0:?", "6:not started:0:?"}
		if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if got := len(ids(t, schema)); got != 2+3*3 {
			t.Fatalf("rows left %d", got)
		}
	})
}

// TestParallelDrainLockedShard: a shard whose head another drainer holds is "being
// drained", untouched, and not a failure; nothing waits for it.
func TestParallelDrainLockedShard(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	threeEach(t, schema, 4)
	ctx := context.Background()
	holder, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, "SELECT id FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 2 ORDER BY id LIMIT 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	log := &shardLog{sent: map[int64][]drain.Message{}}
	res, err := drain.RunParallel(ctx, parallelOptions(target, drain.ModeBatch, log, 2, jobsOf(1, 2, 3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1:done:3:0", "2:being drained:0:3", "3:done:3:0", "4:done:3:0"}
	if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) || res.Count(drain.StatusFailed) != 0 || res.Shards[1].Err != nil {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestParallelDrainInterrupted: Ctrl-C while both workers deliver lets each delivery finish
// and commit; those shards are "interrupted" with what is left, the rest "not started".
func TestParallelDrainInterrupted(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	threeEach(t, schema, 6)
	entered, release := make(chan int64, 10), make(chan struct{})
	log := &shardLog{sent: map[int64][]drain.Message{}, deliver: func(ctx context.Context, m drain.Message) error {
		entered <- m.Shard
		<-release
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan drain.ParallelResult)
	go func() {
		res, err := drain.RunParallel(ctx, parallelOptions(target, drain.ModeBatch, log, 2, jobsOf(1, 2, 3, 4, 5, 6)))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	in := []int64{<-entered, <-entered} // both workers are delivering
	cancel()
	close(release)
	res := <-done
	slices.Sort(in)
	if fmt.Sprint(in) != "[1 2]" {
		t.Fatalf("first deliveries in shards %v", in)
	}
	want := []string{"1:interrupted:1:2", "2:interrupted:1:2", "3:not started:0:?", "4:not started:0:?", "5:not started:0:?", "6:not started:0:?"}
	if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := len(ids(t, schema)); got != 16 {
		t.Fatalf("rows left %d, want 16", got)
	}
}

// TestParallelDrainServerGone: a worker that cannot connect fails its shard and takes no
// more (each would wait its connect timeout for the same answer): with no worker left, the
// rest are not started, and nothing waits once per shard.
func TestParallelDrainServerGone(t *testing.T) {
	t.Parallel()
	_, target := setup(t)
	log := &shardLog{sent: map[int64][]drain.Message{}}
	o := parallelOptions(target, drain.ModeBatch, log, 2, jobsOf(1, 2, 3, 4, 5))
	calls := 0
	var mu sync.Mutex
	o.Connect = func(context.Context) (*db.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return nil, errors.New("connection refused")
	}
	res, err := drain.RunParallel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(drain.StatusFailed) != 2 || res.Count(drain.StatusNotStarted) != 3 || calls > 4 {
		t.Fatalf("got %v after %d connects", statuses(res), calls)
	}
}
