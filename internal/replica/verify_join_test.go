package replica_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// failing is a side whose statement fails at once.
type failing struct{}

func (failing) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("the source side failed")
}

// tracking counts the result sets of q still open (not yet closed).
type tracking struct {
	q    query.Querier
	open atomic.Int32
}

func (t *tracking) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	t.open.Add(1)
	return &closing{Rows: rows, t: t}, nil
}

type closing struct {
	pgx.Rows
	t    *tracking
	once atomic.Bool
}

func (c *closing) Close() {
	c.Rows.Close()
	if c.once.CompareAndSwap(false, true) {
		c.t.open.Add(-1)
	}
}

// When one side of a split verify fails, VerifySplit returns the error only once the other
// side's producer has stopped and closed its result set (more rows than the merge's buffer,
// so it was mid-stream): the caller's next statement on that connection, a rollback, never
// meets a stream still running on it.
func TestVerifySplitStopsBothSidesBeforeReturning(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 200, Members: 2000, Cell: "us"}
	cell, control := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cell, control, shape)
	pair, err := replica.Lookup("organizationmember")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		rep := &tracking{q: testdb.Pool(t)}
		c := &replica.Collector{Pair: pair}
		err := replica.VerifySplit(context.Background(), failing{}, rep, replica.Sides{SourceSchema: cell, ReplicaSchema: control}, shape.Cell, nil, c)
		if err == nil || err.Error() != "the source side failed" {
			t.Fatalf("err %v, want the source side's", err)
		}
		if n := rep.open.Load(); n != 0 {
			t.Fatalf("VerifySplit returned with %d replica result set(s) still open", n)
		}
	}
}

// stopped is a side whose statement ends with the context's error.
type stopped struct{}

func (stopped) Query(ctx context.Context, _ string, _ ...any) (pgx.Rows, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A split verify whose context ends (Ctrl-C, SIGTERM) returns the context's error: its
// producers may close their channels without a last record (each send races ctx.Done), and
// the merge must take that for the end, not for endless zero records (a busy loop) nor wait
// for a record that never comes (a hang). 20 tries: the lost send was 3 in 20 when found.
func TestVerifySplitReturnsWhenCancelled(t *testing.T) {
	t.Parallel()
	pair, err := replica.Lookup("organizationmember")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan error, 1)
		go func() {
			done <- replica.VerifySplit(ctx, stopped{}, stopped{}, replica.Sides{SourceSchema: "a", ReplicaSchema: "b"}, "us", nil, &replica.Collector{Pair: pair})
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("try %d: err %v, want context.Canceled", i, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("try %d: VerifySplit did not return after its context ended", i)
		}
	}
}
