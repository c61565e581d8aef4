package drain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

func org(shard int64) query.ShardKey {
	return query.ShardKey{Scope: query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, ID: shard}
}

func conn(t *testing.T) *db.Conn {
	t.Helper()
	c, err := db.Connect(context.Background(), db.Config{DSN: testdb.DSN(), Command: "drain-test"})
	if err != nil {
		testdb.Unreachable(t, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// recorder is a handler that records what it delivers.
type recorder struct {
	mu   sync.Mutex
	sent []drain.Message
	fail func(drain.Message) error
}

func (r *recorder) Deliver(_ context.Context, m drain.Message) error {
	if r.fail != nil {
		if err := r.fail(m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	return nil
}

func ids(t *testing.T, schema string) []int64 {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), "SELECT id FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func setup(t *testing.T) (string, query.Target) {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	return schema, query.Target{Silo: query.SiloCell, Schema: schema}
}

func TestRefusesInsideTransaction(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
	c := conn(t)
	tx, err := c.Begin(context.Background()) // the connection is now inside a transaction block
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain.Run(context.Background(), c, drain.Options{Target: target, Shard: org(1)}); !errors.Is(err, drain.ErrInTransaction) {
		t.Fatalf("Run inside BEGIN = %v, want ErrInTransaction", err)
	}
	if _, err := drain.Claim(context.Background(), c, target, org(1)); !errors.Is(err, drain.ErrInTransaction) {
		t.Fatalf("Claim inside BEGIN = %v", err)
	}
	_ = tx.Rollback(context.Background())
	if got := ids(t, schema); len(got) != 1 {
		t.Fatalf("rows after refusals: %v", got)
	}
}

// D1: a disabled shard trims its head group without delivering and keeps the newest row.
func TestDisabledShard(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	r := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Scope: 0, Shard: 2, Category: 2, Object: 2})
	c := conn(t)
	h := &recorder{}
	o := drain.Options{Target: target, Shard: org(1), Handler: h, Killswitched: true, Mode: drain.ModeExact}
	if _, err := drain.Run(context.Background(), c, o); err == nil {
		t.Fatal("trimmed without an archive")
	}
	path := filepath.Join(t.TempDir(), "archive.jsonl")
	arch := openOp(t, path, "D1")
	o.Archive, o.Command, o.Reason = arch, "test", "D1"
	res, err := drain.Run(context.Background(), c, o)
	if err != nil || len(h.sent) != 0 || res.Trimmed != 1 {
		t.Fatalf("disabled drain: %+v %v, sent %d", res, err, len(h.sent))
	}
	_ = arch.Close()
	archived := committedRows(t, path)
	if len(archived) != 1 || archived[0].ID != r[0] {
		t.Fatalf("archive = %+v; want r1 only", archived)
	}
	if got := ids(t, schema); !reflect.DeepEqual(got, []int64{r[1], r[2]}) {
		t.Fatalf("rows = %v, want r2 and r3", got)
	}
	if _, err := drain.Run(context.Background(), c, drain.Options{Target: target, Shard: org(2), Handler: h}); err != nil || len(h.sent) != 1 {
		t.Fatalf("enabled drain: sent %d, %v", len(h.sent), err)
	}
}

// D4 and the watermark: without a bound the drain takes rows inserted while it runs; with
// one, they stay.
func TestUpperBound(t *testing.T) {
	t.Parallel()
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprint("bounded=", bounded), func(t *testing.T) {
			t.Parallel()
			schema, target := setup(t)
			r := testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
			inserted := false
			h := &recorder{fail: func(drain.Message) error {
				if !inserted {
					inserted = true
					testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
				}
				return nil
			}}
			o := drain.Options{Target: target, Shard: org(1), Handler: h}
			if bounded {
				o.Watermark = r[0]
			}
			if _, err := drain.Run(context.Background(), conn(t), o); err != nil {
				t.Fatal(err)
			}
			left := ids(t, schema)
			if bounded && len(left) != 1 || !bounded && len(left) != 0 {
				t.Fatalf("rows left = %v (bounded %v)", left, bounded)
			}
		})
	}
}

// D3/D5: two drainers on one shard cooperate: every group is delivered, exactly once here,
// and the one that meets the other's lock stops quietly.
func TestConcurrentDrainers(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 3, Category: 3, Object: 1, Payload: testdb.Str(`{"user_id": 1}`)},
		testdb.Row{Scope: 0, Shard: 3, Category: 3, Object: 2, Payload: testdb.Str(`{"user_id": 2}`)})
	h := &recorder{fail: func(drain.Message) error { time.Sleep(200 * time.Millisecond); return nil }}
	var wg sync.WaitGroup
	results := make([]drain.Result, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(3), Handler: h})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if len(h.sent) != 2 || results[0].Delivered+results[1].Delivered != 2 {
		t.Fatalf("sent %d, results %+v", len(h.sent), results)
	}
	if got := ids(t, schema); len(got) != 0 {
		t.Fatalf("rows left %v", got)
	}
}

// D7: each claim applies the backoff from the lowest row: 2 s, 4 s, 8 s, … capped at 1 h.
func TestClaimBackoffSequence(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 10001, Category: 2, Object: 10001})
	c := conn(t)
	delay := func() time.Duration {
		var d time.Duration
		err := testdb.Pool(t).QueryRow(context.Background(), "SELECT scheduled_for - scheduled_from FROM "+schema+".sentry_regionoutbox ORDER BY id LIMIT 1").Scan(&d)
		if err != nil {
			t.Fatal(err)
		}
		return d.Round(time.Millisecond)
	}
	for _, want := range []time.Duration{2, 4, 8, 16} {
		if _, err := drain.Claim(context.Background(), c, target, org(10001)); err != nil {
			t.Fatal(err)
		}
		if got := delay(); got != want*time.Second {
			t.Fatalf("delay %s, want %ds", got, want)
		}
	}
	if _, err := testdb.Pool(t).Exec(context.Background(), "UPDATE "+schema+".sentry_regionoutbox SET scheduled_for = scheduled_from + interval '2048 seconds'"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := drain.Claim(context.Background(), c, target, org(10001)); err != nil {
			t.Fatal(err)
		}
		if got := delay(); got != time.Hour {
			t.Fatalf("delay after the cap %s, want 1h", got)
		}
	}
	// A new row (scheduled in 2016) makes the shard due again, and the next claim still
	// computes from the lowest row: 1 h.
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 10001, Category: 2, Object: 10001})
	if _, err := drain.Claim(context.Background(), c, target, org(10001)); err != nil || delay() != time.Hour {
		t.Fatalf("claim after a new row: %v, %s", err, delay())
	}
}

// D10: the drain ignores scheduled_for: future rows go too.
func TestDrainIgnoresSchedule(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 5, Category: 2, Object: 5, ScheduledFrom: time.Now(), ScheduledFor: time.Now().Add(time.Hour)},
		testdb.Row{Scope: 0, Shard: 5, Category: 3, Object: 6})
	if _, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(5), Handler: &recorder{}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, schema); len(got) != 0 {
		t.Fatalf("rows left %v", got)
	}
}

// D15: a claim meeting a held lock returns at once with ErrShardLocked, never waits.
func TestClaimDoesNotWait(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9})
	holder := conn(t)
	tx, err := holder.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // test
	if _, err := tx.Exec(context.Background(), "SELECT id FROM "+schema+".sentry_regionoutbox FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := drain.Claim(context.Background(), conn(t), target, org(9)); !errors.Is(err, drain.ErrShardLocked) {
		t.Fatalf("claim under a held lock = %v", err)
	}
	res, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(9), Handler: &recorder{}})
	if err != nil || !res.Contended || res.Delivered != 0 {
		t.Fatalf("run under a held lock: %+v %v", res, err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("waited for the lock")
	}
}

// threeMessages is a schema whose shard organization/1 holds three messages, objects 1, 7
// and 8, in that order.
func threeMessages(t *testing.T) (string, query.Target, []int64) {
	t.Helper()
	schema, target := setup(t)
	return schema, target, testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 7},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 8})
}

// A delivery failure stops the drain at that message (head-of-line), keeps it, and keeps
// everything delivered before it deleted, in both modes.
func TestFailureStopsAtTheFailingMessage(t *testing.T) {
	t.Parallel()
	for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target, r := threeMessages(t)
			h := &recorder{fail: func(m drain.Message) error {
				if m.Object == 7 {
					return errors.New("handler says no")
				}
				return nil
			}}
			res, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode})
			if err != nil || res.Delivered != 1 || res.Failed == nil || res.Failed.Object != 7 {
				t.Fatalf("%+v %v", res, err)
			}
			if got := ids(t, schema); !reflect.DeepEqual(got, r[1:]) {
				t.Fatalf("rows left %v, want %v", got, r[1:])
			}
		})
	}
}

// TestModesAgree: on random shards, exact and batch deliver the same messages in the same
// order and leave the same table.
func TestModesAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 4 {
		var rows []testdb.Row
		for i := range 200 + rng.IntN(200) {
			rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 2 + rng.IntN(3), Object: int64(rng.IntN(1 + round*20)),
				Payload: testdb.Str(fmt.Sprintf(`{"n": %d}`, i))})
		}
		var sent [2][]drain.Message
		var left [2][]int64
		for i, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
			schema, target := setup(t)
			testdb.Insert(t, schema, "sentry_regionoutbox", rows...)
			h := &recorder{}
			if _, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode, BatchSize: 7}); err != nil {
				t.Fatal(err)
			}
			for _, m := range h.sent {
				m.Table = ""
				sent[i] = append(sent[i], m)
			}
			left[i] = ids(t, schema)
		}
		if len(sent[0]) == 0 || !reflect.DeepEqual(deliveryKeys(sent[0]), deliveryKeys(sent[1])) {
			t.Fatalf("round %d: deliveries differ:\nexact %v\nbatch %v", round, deliveryKeys(sent[0]), deliveryKeys(sent[1]))
		}
		if len(left[0]) != 0 || len(left[1]) != 0 {
			t.Fatalf("round %d: rows left %v / %v", round, left[0], left[1])
		}
	}
}

// deliveryKeys are what must agree: the group, and the payload of the delivered (newest)
// row, in order. Ids differ between the two schemas' sequences only by offset.
func deliveryKeys(ms []drain.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		p := ""
		if m.Payload != nil {
			p = *m.Payload
		}
		out[i] = fmt.Sprintf("%d/%d %s", m.Category, m.Object, p)
	}
	return out
}

// The discard handler deletes without delivering, archiving every row first, in both modes.
func TestDiscardArchivesEverything(t *testing.T) {
	t.Parallel()
	for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target := setup(t)
			r := testdb.Insert(t, schema, "sentry_regionoutbox",
				testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: testdb.Str(`{"a": 1}`)},
				testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: testdb.Str(`{"a": 2}`)},
				testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 5})
			path := filepath.Join(t.TempDir(), "a.jsonl")
			arch := openOp(t, path, "")
			res, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: drain.Discard{}, Discard: true, Mode: mode, Archive: arch, Command: "skip"})
			if err != nil || res.Deleted != 3 {
				t.Fatalf("%+v %v", res, err)
			}
			_ = arch.Close()
			archived := committedRows(t, path)
			if len(archived) != 3 {
				t.Fatalf("archived %d rows", len(archived))
			}
			for i, a := range archived {
				if a.ID != r[i] || a.DateAdded.IsZero() || a.ScheduledFor.IsZero() {
					t.Fatalf("archived row %d: %+v", i, a)
				}
			}
			if archived[1].Payload == nil || *archived[1].Payload != `{"a": 2}` || archived[2].Payload != nil {
				t.Fatalf("payloads: %v %v", archived[1].Payload, archived[2].Payload)
			}
		})
	}
}

// The handler document says which rows a delivery stands for: the count always, the first
// ids with CoalescedIDs, in both modes.
func TestCoalescedInDocument(t *testing.T) {
	t.Parallel()
	for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target := setup(t)
			r := testdb.Insert(t, schema, "sentry_regionoutbox",
				testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
				testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 9},
				testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1},
				testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
			h := &recorder{}
			if _, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode, CoalescedIDs: true}); err != nil {
				t.Fatal(err)
			}
			if len(h.sent) != 2 {
				t.Fatalf("sent %d", len(h.sent))
			}
			first := drain.NewDocument(h.sent[0])
			if first.ID != r[3] || first.CoalescedCount != 3 || !reflect.DeepEqual(first.Coalesced, []int64{r[0], r[2], r[3]}) {
				t.Fatalf("document: id %d count %d ids %v", first.ID, first.CoalescedCount, first.Coalesced)
			}
		})
	}
}

// D6: a row inserted into the group being delivered, after its newest row was read, is not
// deleted: it stays for the next delivery.
func TestRowInsertedDuringDeliveryStays(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1},
		testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 2},
		testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: 2})
	var a3 []int64
	h := &recorder{fail: func(m drain.Message) error {
		if a3 == nil {
			a3 = testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1})
		}
		return nil
	}}
	if _, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(1), Handler: h, Mode: drain.ModeExact, MaxMessages: 1}); err != nil {
		t.Fatal(err)
	}
	left := ids(t, schema)
	if len(left) != 3 || !slices.Contains(left, a3[0]) {
		t.Fatalf("rows left %v: want A3 (%d), B and C", left, a3[0])
	}
}

// D8: draining converges: two groups of two rows each give exactly two deliveries.
func TestDrainConverges(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 10001, Category: 2, Object: 10001}, testdb.Row{Scope: 0, Shard: 10001, Category: 2, Object: 10001},
		testdb.Row{Scope: 0, Shard: 10002, Category: 2, Object: 10002}, testdb.Row{Scope: 0, Shard: 10002, Category: 2, Object: 10002})
	h := &recorder{}
	for range 3 {
		for _, shard := range []int64{10001, 10002} {
			if _, err := drain.Run(context.Background(), conn(t), drain.Options{Target: target, Shard: org(shard), Handler: h}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(h.sent) != 2 {
		t.Fatalf("%d deliveries, want 2", len(h.sent))
	}
}

// openOp opens an archive operation for a test drain of shard org(1).
func openOp(t *testing.T, path, reason string) *drain.Operation {
	t.Helper()
	op, err := drain.OpenOperation(path, drain.OperationMeta{Command: drain.CommandDrainDiscard, Reason: reason, User: "test",
		Table: "sentry_regionoutbox", PayloadType: "jsonb", Shard: &drain.ArchiveShard{Scope: 0, ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// committedRows reads back the rows an archive records as deleted.
func committedRows(t *testing.T, path string) []drain.Row {
	t.Helper()
	f, err := drain.ReadArchiveFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []drain.Row
	for _, op := range f.Operations {
		for _, b := range op.Batches {
			out = append(out, b.Restorable()...)
		}
	}
	return out
}

// TestAbandonDuringDelivery: an HTTP receiver that never answers the second message. The
// first cancel (Run's context) only says what the drain waits for (OnWaiting, once); the
// second (Options.Abandon) cancels the request at once: message 1 is delivered and
// deleted, message 2 and 3 stay, Run reports message 2 as abandoned and returns
// context.Canceled, in both modes.
func TestAbandonDuringDelivery(t *testing.T) {
	t.Parallel()
	for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target, r := threeMessages(t)
			hung := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				var d drain.Document
				_ = json.NewDecoder(req.Body).Decode(&d)
				if d.Object == 7 {
					close(hung)
					<-req.Context().Done() // until the client gives up
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			h, err := drain.ParseHandler(drain.HandlerConfig{Spec: srv.URL, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			ctx, interrupt := context.WithCancel(context.Background())
			abandonCtx, abandon := context.WithCancel(context.Background())
			go func() {
				<-hung
				interrupt()
			}()
			var notes []string
			res, err := drain.Run(ctx, conn(t), drain.Options{Target: target, Shard: org(1), Handler: h, Mode: mode, HandlerTimeout: time.Minute,
				Abandon: abandonCtx, OnWaiting: func(m drain.Message, left time.Duration) {
					notes = append(notes, fmt.Sprintf("message %d, object %d, under a minute left: %v", m.ID, m.Object, left > 0 && left < time.Minute))
					abandon() // the second Ctrl-C, once the first was answered
				}})
			if !errors.Is(err, context.Canceled) || res.Delivered != 1 || res.Failed != nil || res.Abandoned == nil || res.Abandoned.ID != r[1] {
				t.Fatalf("%+v %v", res, err)
			}
			if want := []string{fmt.Sprintf("message %d, object 7, under a minute left: true", r[1])}; !reflect.DeepEqual(notes, want) {
				t.Fatalf("notes %q, want %q", notes, want)
			}
			if got := ids(t, schema); !reflect.DeepEqual(got, r[1:]) {
				t.Fatalf("rows left %v, want %v", got, r[1:])
			}
		})
	}
}
