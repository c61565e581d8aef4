package drain_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestSettleArchiveWaitsForACommitInFlight (#36): a batch staged with no marker whose
// DELETE's transaction the server is still finishing (held open here, as a killed run's
// COMMIT in flight) is settled only once that transaction ends: SettleArchive reads its ids
// FOR SHARE, waits, and marks it committed when it commits. A plain read saw the rows (the
// DELETE not yet committed) and marked it rolled back, and restore then left its rows out.
func TestSettleArchiveWaitsForACommitInFlight(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	ctx := context.Background()
	qs := pgx.Identifier{schema}.Sanitize()
	if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, 1, 2, i, '{}', now(), now() FROM generate_series(1, 3) i`, qs)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	op, err := drain.OpenOperation(path, drain.OperationMeta{Command: "compact", User: "alice", Schema: schema, Table: target.TableName(), PayloadType: "jsonb",
		Shard: &drain.ArchiveShard{Scope: 0, ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := testdb.Pool(t).Query(ctx, fmt.Sprintf("SELECT id, shard_scope, shard_identifier, category, object_identifier, NULL::text AS cell, payload::text AS payload, scheduled_from, scheduled_for, date_added FROM %s.sentry_regionoutbox ORDER BY id LIMIT 2", qs))
	if err != nil {
		t.Fatal(err)
	}
	var rows []drain.Row
	for res.Next() {
		var r drain.Row
		var scope, cat int32
		var cell *string
		if err := res.Scan(&r.ID, &scope, &r.ShardID, &cat, &r.ObjectID, &cell, &r.Payload, &r.ScheduledFrom, &r.ScheduledFor, &r.DateAdded); err != nil {
			t.Fatal(err)
		}
		r.ShardScope, r.Category = int(scope), int(cat)
		rows = append(rows, r)
	}
	if _, err := op.Stage(rows); err != nil { // staged, never marked: the run died
		t.Fatal(err)
	}
	_ = op.Close()
	inFlight, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inFlight.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := inFlight.Exec(ctx, fmt.Sprintf("DELETE FROM %s.sentry_regionoutbox WHERE id IN ($1, $2)", qs), rows[0].ID, rows[1].ID); err != nil {
		t.Fatal(err)
	}
	c, err := db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "settle-test", LockTimeout: time.Minute})
	if err != nil {
		testdb.Unreachable(t, err)
	}
	defer c.Close(ctx)
	type result struct {
		settled []drain.SettledBatch
		err     error
	}
	done := make(chan result, 1)
	go func() {
		s, err := drain.SettleArchive(ctx, c, path, query.Target{Silo: query.SiloCell, Schema: schema})
		done <- result{s, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for waiting := 0; waiting == 0; {
		_ = testdb.Pool(t).QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE '%settle-test%'").Scan(&waiting)
		select {
		case r := <-done:
			t.Fatalf("settled without waiting for the transaction in flight: %+v, %v", r.settled, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the settle never waited on the DELETE's row locks")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := inFlight.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || len(r.settled) != 1 || r.settled[0].Outcome != drain.Committed || r.settled[0].Rows != 2 {
		t.Fatalf("settled %+v, %v: want the batch committed", r.settled, r.err)
	}
}
