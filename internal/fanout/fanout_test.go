package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// closedPortDSN is a DSN whose port nothing listens on: listen on a free port, then close it.
func closedPortDSN(t testing.TB) (dsn, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	_ = l.Close()
	return "postgres://postgres@" + addr + "/test?sslmode=disable", addr
}

// sleepRows is one target's read: its own connection (with its own timeouts), one read-only
// transaction, pg_sleep, then two rows, like a read command's session.
func sleepRows(ctx context.Context, dsn string, sleep time.Duration, statementTimeout time.Duration) (fanout.Table, error) {
	conn, err := db.Connect(ctx, db.Config{DSN: dsn, Command: "fanout-test", StatementTimeout: statementTimeout, ConnectTimeout: 2 * time.Second})
	if err != nil {
		return fanout.Table{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var res *query.Result
	err = db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_sleep($1)", sleep.Seconds()); err != nil {
			return db.Classify(err, "sleep")
		}
		res, err = query.Run(ctx, tx, query.Statement{Name: "rows",
			Text: "SELECT n AS depth, 'shard ' || n AS shard FROM generate_series(1, 2) AS n"})
		return err
	})
	if err != nil {
		return fanout.Table{}, err
	}
	return fanout.Table{Columns: res.Columns, Rows: res.Rows}, nil
}

func TestRunKeepsTargetOrderAndLimit(t *testing.T) {
	testdb.Pool(t) // skips, or fails under CI, without a server
	sleeps := map[string]time.Duration{"us": 300 * time.Millisecond, "de": 50 * time.Millisecond, "control": 150 * time.Millisecond, "s4s": 0}
	var running, peak atomic.Int32
	results := fanout.Run(context.Background(), []string{"us", "de", "control", "s4s"}, fanout.Options{Limit: 2},
		func(ctx context.Context, name string) (fanout.Table, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			return sleepRows(ctx, testdb.DSN(), sleeps[name], 5*time.Second)
		})
	var got []string
	for _, r := range results {
		got = append(got, fmt.Sprintf("%s:%v:%d", r.Target, r.Err, len(r.Value.Rows)))
	}
	if want := "us:<nil>:2 de:<nil>:2 control:<nil>:2 s4s:<nil>:2"; strings.Join(got, " ") != want {
		t.Fatalf("results %v, want %s", got, want)
	}
	if peak.Load() != 2 {
		t.Fatalf("at most 2 at once, and 2 should have run together: peak %d", peak.Load())
	}
	if o := fanout.OutcomeOf(results); o != fanout.Complete {
		t.Fatalf("outcome %d, want Complete", o)
	}
}

func TestUnreachableTargetGivesPartialResults(t *testing.T) {
	testdb.Pool(t)
	gone, addr := closedPortDSN(t)
	dsns := map[string]string{"us": testdb.DSN(), "de": gone, "control": testdb.DSN()}
	results := fanout.Run(context.Background(), []string{"us", "de", "control"}, fanout.Options{},
		func(ctx context.Context, name string) (fanout.Table, error) {
			return sleepRows(ctx, dsns[name], 0, 5*time.Second)
		})
	if o := fanout.OutcomeOf(results); o != fanout.Partial {
		t.Fatalf("outcome %d, want Partial", o)
	}
	failed := fanout.Failures(results)
	want := "cannot reach PostgreSQL at " + addr + ": connection refused; check that the server is running and --dsn / PGHOST / PGPORT point at it"
	if len(failed) != 1 || failed[0].Target != "de" || failed[0].Err.Error() != want {
		t.Fatalf("failures %+v, want de: %s", failed, want)
	}
	merged, err := fanout.Merge(results, fanout.ByColumns(fanout.Key{Index: 0, Desc: true}))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(merged.Columns, merged.Rows); got != "[context depth shard] [[us 2 shard 2] [control 2 shard 2] [us 1 shard 1] [control 1 shard 1]]" {
		t.Fatalf("merged %s", got)
	}
}

func TestEachTargetHasItsOwnTimeout(t *testing.T) {
	testdb.Pool(t)
	results := fanout.Run(context.Background(), []string{"slow", "fast"}, fanout.Options{},
		func(ctx context.Context, name string) (fanout.Table, error) {
			if name == "slow" {
				return sleepRows(ctx, testdb.DSN(), 5*time.Second, 200*time.Millisecond)
			}
			return sleepRows(ctx, testdb.DSN(), 0, 5*time.Second)
		})
	var dbErr *db.Error
	if !errors.As(results[0].Err, &dbErr) || dbErr.Kind != db.KindTimeout {
		t.Fatalf("slow: %v, want a statement timeout", results[0].Err)
	}
	if results[0].Elapsed > 3*time.Second {
		t.Fatalf("slow took %s: its 200ms statement timeout did not stop it", results[0].Elapsed)
	}
	if results[1].Err != nil || len(results[1].Value.Rows) != 2 {
		t.Fatalf("fast: %+v", results[1])
	}
}

func TestRunDeadlineAndPanic(t *testing.T) {
	results := fanout.Run(context.Background(), []string{"hangs", "panics", "ok"}, fanout.Options{Timeout: 50 * time.Millisecond},
		func(ctx context.Context, name string) (int, error) {
			switch name {
			case "hangs":
				<-ctx.Done()
				return 0, ctx.Err()
			case "panics":
				panic("boom")
			}
			return 7, nil
		})
	got := fmt.Sprintf("%v | %v | %d %v", results[0].Err, results[1].Err, results[2].Value, results[2].Err)
	if want := "context deadline exceeded | internal error in context panics: boom | 7 <nil>"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	results := fanout.Run(ctx, []string{"a", "b", "c"}, fanout.Options{Limit: 1}, func(ctx context.Context, _ string) (int, error) {
		calls.Add(1)
		return 0, ctx.Err()
	})
	if fanout.OutcomeOf(results) != fanout.AllFailed {
		t.Fatalf("outcome %d, want AllFailed", fanout.OutcomeOf(results))
	}
	for _, r := range results {
		if !errors.Is(r.Err, context.Canceled) {
			t.Fatalf("%s: %v, want context.Canceled", r.Target, r.Err)
		}
	}
}

func TestOutcome(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		errs []error
		want fanout.Outcome
	}{
		{nil, fanout.Complete},
		{[]error{nil, nil}, fanout.Complete},
		{[]error{nil, boom}, fanout.Partial},
		{[]error{boom, boom}, fanout.AllFailed},
	} {
		var rs []fanout.Result[int]
		for _, e := range tc.errs {
			rs = append(rs, fanout.Result[int]{Err: e})
		}
		if got := fanout.OutcomeOf(rs); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.errs, got, tc.want)
		}
	}
}

func TestWorst(t *testing.T) {
	// cmd's order: ok, pending (8), threshold (3), warn (4), critical (5).
	severity := []int{0, 8, 3, 4, 5}
	for _, tc := range []struct {
		codes []int
		want  int
	}{
		{nil, 0},
		{[]int{0, 0}, 0},
		{[]int{0, 8, 0}, 8},
		{[]int{8, 3}, 3},
		{[]int{5, 4, 3}, 5},
		{[]int{4, 0, 8}, 4},
		{[]int{0, 42}, 42}, // unknown: worse than all
	} {
		if got := fanout.Worst(tc.codes, severity); got != tc.want {
			t.Errorf("Worst(%v) = %d, want %d", tc.codes, got, tc.want)
		}
	}
}

func TestMerge(t *testing.T) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	results := []fanout.Result[fanout.Table]{
		{Target: "us", Value: fanout.Table{Columns: []string{"depth", "scope", "since"}, Rows: [][]any{{int64(5), "organization", ts}, {int64(1), "user", nil}}}},
		{Target: "de", Err: errors.New("gone")},
		{Target: "control", Value: fanout.Table{Columns: []string{"depth", "scope", "since"}, Rows: [][]any{{int64(5), "audit", ts.Add(time.Hour)}, {int64(9), "user", ts}}}},
	}
	for _, tc := range []struct {
		name    string
		compare func(a, b []any) int
		want    string
	}{
		{"targets' order", nil, "[us 5 organization 2026-01-01] [us 1 user <nil>] [control 5 audit 2026-01-01] [control 9 user 2026-01-01]"},
		{"depth desc, ties keep target order", fanout.ByColumns(fanout.Key{Index: 0, Desc: true}),
			"[control 9 user 2026-01-01] [us 5 organization 2026-01-01] [control 5 audit 2026-01-01] [us 1 user <nil>]"},
		{"scope, then depth", fanout.ByColumns(fanout.Key{Index: 1}, fanout.Key{Index: 0}),
			"[control 5 audit 2026-01-01] [us 5 organization 2026-01-01] [us 1 user <nil>] [control 9 user 2026-01-01]"},
		{"time, nil first", fanout.ByColumns(fanout.Key{Index: 2}),
			"[us 1 user <nil>] [us 5 organization 2026-01-01] [control 9 user 2026-01-01] [control 5 audit 2026-01-01]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := fanout.Merge(results, tc.compare)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, r := range m.Rows {
				if tm, ok := r[3].(time.Time); ok {
					r = append(r[:3:3], tm.Format(time.DateOnly))
				}
				rows = append(rows, fmt.Sprint(r))
			}
			if got := strings.Join(rows, " "); got != tc.want || fmt.Sprint(m.Columns) != "[context depth scope since]" {
				t.Fatalf("got %v %s\nwant %s", m.Columns, got, tc.want)
			}
		})
	}
	results[2].Value.Columns = []string{"depth", "scope", "first"}
	_, err := fanout.Merge(results, nil)
	if want := "context control returned columns [depth scope first], context us [depth scope since]: the schemas differ"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestFlatten(t *testing.T) {
	type shard struct {
		scope string
		depth int
	}
	results := []fanout.Result[[]shard]{
		{Target: "us", Value: []shard{{"org", 3}, {"user", 1}}},
		{Target: "de", Err: errors.New("gone")},
		{Target: "control", Value: []shard{{"org", 3}, {"audit", 7}}},
	}
	got := fanout.Flatten(results, func(a, b shard) int { return b.depth - a.depth })
	if s := fmt.Sprint(got); s != "[{control {audit 7}} {us {org 3}} {control {org 3}} {us {user 1}}]" {
		t.Fatalf("got %s", s)
	}
}

// BenchmarkFanoutSlowTargets shows that a fan-out costs about its slowest target, not the
// sum: 4 targets each sleeping 200 ms in PostgreSQL on their own connection take ~200 ms
// concurrently (ms/op), ~800 ms one after the other.
func BenchmarkFanoutSlowTargets(b *testing.B) {
	testdb.Pool(b)
	targets := []string{"us", "de", "eu", "control"}
	read := func(ctx context.Context, _ string) (fanout.Table, error) {
		return sleepRows(ctx, testdb.DSN(), 200*time.Millisecond, 5*time.Second)
	}
	for _, mode := range []struct {
		name  string
		limit int
	}{{"concurrent", fanout.DefaultLimit}, {"sequential", 1}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				rs := fanout.Run(context.Background(), targets, fanout.Options{Limit: mode.limit}, read)
				if fanout.OutcomeOf(rs) != fanout.Complete {
					b.Fatalf("failures: %v", fanout.Failures(rs)[0].Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
