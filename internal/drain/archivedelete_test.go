package drain_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// deleteCounter is a transaction that counts the DELETEs run through it.
type deleteCounter struct {
	pgx.Tx
	deletes int
}

func (c *deleteCounter) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if strings.Contains(sql, "DELETE FROM") {
		c.deletes++
	}
	return c.Tx.Query(ctx, sql, args...)
}

func archivedDelete(t *testing.T, target query.Target, command string) *drain.ArchivedDelete {
	t.Helper()
	meta := drain.OperationMeta{Command: command, User: "alice", Schema: target.Schema, Table: target.TableName(), PayloadType: "text",
		Shard: &drain.ArchiveShard{Scope: 0, ID: 1}}
	op, err := drain.OpenArchive(filepath.Join(t.TempDir(), "a.jsonl"), meta, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Close() })
	return &drain.ArchivedDelete{Op: op, Target: target, Why: query.Why{Command: command, Reason: "INC-1"}}
}

// A compact's archive-then-delete is the drain's: the staged ids are deleted a chunk at a
// time (query.DeleteChunk), so a hot shard's million superseded rows never go in one DELETE
// that outlasts the statement timeout (compact's own copy deleted them in one), and the
// commit marker names every id deleted.
func TestArchiveAndDeleteDeletesInChunks(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	n := query.DeleteChunk + 2
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
		SELECT 0, 1, 2, 1, NULL, now(), now(), now() FROM generate_series(0, %d)`, pgx.Identifier{schema}.Sanitize(), n)); err != nil {
		t.Fatal(err)
	}
	// The test server runs without autovacuum: unanalyzed, the DELETE's id = ANY (…) plans
	// as a scan of the table per id.
	if _, err := testdb.Pool(t).Exec(context.Background(), "ANALYZE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox"); err != nil {
		t.Fatal(err)
	}
	ad := archivedDelete(t, target, "compact")
	c := conn(t)
	var counter *deleteCounter
	var deleted []int64
	err := db.WriteTx(context.Background(), c, func(tx db.Tx) error {
		counter = &deleteCounter{Tx: tx}
		var err error
		deleted, err = ad.ArchiveAndDelete(context.Background(), counter, query.Superseded(target, org(1), 0, query.Why{}), nil)
		return err
	})
	if err := ad.Finish(err, true); err != nil {
		t.Fatal(err)
	}
	if len(deleted) != n || counter.deletes != 2 {
		t.Fatalf("deleted %d row(s) in %d DELETE(s), want %d in 2", len(deleted), counter.deletes, n)
	}
	if left := ids(t, schema); len(left) != 1 {
		t.Fatalf("rows left: %d, want the newest only", len(left))
	}
	f, err := drain.ReadArchiveFile(ad.Op.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Operations[0].Batches
	if len(b) != 1 || b[0].State != drain.BatchCommitted || len(b[0].Deleted) != n {
		t.Fatalf("archive batches: %d, first %s with %d deleted", len(b), b[0].State, len(b[0].Deleted))
	}
}

// A repair's DeleteArchived moves its progress as the server deletes each chunk (#40: a
// compact of 1M rows said 0 for 36 s, then done): 2,500 superseded rows at 100 a chunk are 25
// progress events, each 100 more than the last, 25 committed batches, one transaction.
func TestDeleteArchivedProgressPerChunk(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	const n, chunk = 2500, 100
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
		SELECT 0, 1, 2, g %% 5, '{"n": 1}', now(), now(), now() FROM generate_series(1, %d) g`, pgx.Identifier{schema}.Sanitize(), n+5)); err != nil {
		t.Fatal(err)
	}
	ad := archivedDelete(t, target, "compact")
	ad.SetChunk(chunk)
	var seen []int64
	ad.Progress = func(d int64) { seen = append(seen, d) }
	deleted, err := ad.DeleteArchived(context.Background(), conn(t), query.Superseded(target, org(1), 0, query.Why{}))
	if err != nil || deleted != n {
		t.Fatalf("deleted %d, %v; want %d", deleted, err, n)
	}
	if len(seen) != n/chunk {
		t.Fatalf("%d progress events, want %d: %v", len(seen), n/chunk, seen)
	}
	for i, d := range seen {
		if d != int64(chunk*(i+1)) {
			t.Fatalf("progress event %d said %d, want %d: %v", i, d, chunk*(i+1), seen)
		}
	}
	if left := ids(t, schema); len(left) != 5 {
		t.Fatalf("rows left: %d, want the 5 groups' newest", len(left))
	}
	f, err := drain.ReadArchiveFile(ad.Op.Path, 0)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, b := range f.Operations[0].Batches {
		if b.State != drain.BatchCommitted {
			t.Fatalf("batch %d: %s", b.Seq, b.State)
		}
		total += len(b.Restorable())
	}
	if len(f.Operations[0].Batches) != n/chunk || total != n {
		t.Fatalf("%d batches holding %d restorable rows, want %d holding %d", len(f.Operations[0].Batches), total, n/chunk, n)
	}
}

// Finish after a certain rollback writes an abort marker; after a COMMIT of unknown outcome
// it writes nothing and says where the staged rows are (the drain said nothing of them).
func TestArchivedDeleteFinish(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1}, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1})
	c := conn(t)
	for _, committing := range []bool{false, true} {
		ad := archivedDelete(t, target, "skip")
		failed := errors.New("boom")
		err := db.WriteTx(context.Background(), c, func(tx db.Tx) error {
			if _, err := ad.ArchiveAndDelete(context.Background(), tx, query.Superseded(target, org(1), 0, query.Why{}), nil); err != nil {
				return err
			}
			return failed // rolls back
		})
		err = ad.Finish(err, committing)
		if !errors.Is(err, failed) {
			t.Fatalf("Finish(committing=%v) = %v", committing, err)
		}
		if committing != strings.Contains(err.Error(), "keeps the rows staged without a commit marker") {
			t.Fatalf("Finish(committing=%v) = %v", committing, err)
		}
		f, rerr := drain.ReadArchiveFile(ad.Op.Path, 0)
		if rerr != nil {
			t.Fatal(rerr)
		}
		want := map[bool]drain.BatchState{false: drain.BatchAborted, true: drain.BatchStaged}[committing]
		if b := f.Operations[0].Batches; len(b) != 1 || b[0].State != want {
			t.Fatalf("committing=%v: batches %+v, want one %s", committing, b, want)
		}
	}
	if got := ids(t, schema); len(got) != 2 {
		t.Fatalf("rows after rollbacks: %v", got)
	}
}
