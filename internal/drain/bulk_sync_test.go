package drain_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// syncAtDelete is a batch's transaction that records, at each DELETE run through it, how
// many times the bulk run's archive had been synced.
type syncAtDelete struct {
	pgx.Tx
	ba     *drain.BulkArchive
	synced *[]int
}

func (s *syncAtDelete) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if strings.Contains(sql, "DELETE FROM") {
		*s.synced = append(*s.synced, s.ba.FileSyncs())
	}
	return s.Tx.Query(ctx, sql, args...)
}

// TestBulkArchiveSyncsBeforeEveryDelete (#36): a bulk compact's shared archive (one handle
// for every shard's operation, its writes waiting for one sync a batch) is synced before each
// batch's DELETE, which deletes only rows it covers: at the first batch's DELETE it had been
// synced once (the staged rows), at the second's three times (the first batch's markers, then
// its own rows). A handle that forgot its writes waited for a sync (dirty never set) synced
// nothing, and a crash then lost rows from both the table and the archive.
func TestBulkArchiveSyncsBeforeEveryDelete(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	// Two shards, each three rows of one coalesce group: compact deletes the older two.
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 2, 1, '{}', now(), now() FROM generate_series(1, 2) s, generate_series(1, 3) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	why := query.Why{Command: "compact"}
	ba := &drain.BulkArchive{Path: filepath.Join(t.TempDir(), "a.jsonl"), ID: "20261201T101500Z-compact-3fa9c1", Target: target, Why: why, KeepBackoff: true,
		Meta: func(ref query.ShardRef) drain.OperationMeta {
			return drain.OperationMeta{Command: "compact", User: "alice", Schema: schema, Table: target.TableName(), PayloadType: "jsonb",
				Shard: &drain.ArchiveShard{Scope: ref.Scope, ID: ref.ID}, Started: time.Now().UTC()}
		}}
	t.Cleanup(func() { _ = ba.Close() })
	batch := ba.Batch(func(shards query.Statement) query.Statement { return query.BulkSuperseded(target, shards, why) })
	var synced []int
	bulk := &drain.Bulk{Shards: []query.ShardRef{{Scope: 0, ID: 1}, {Scope: 0, ID: 2}}, BatchShards: 1, After: ba.Finish}
	sum, err := bulk.Run(context.Background(), conn(t), func(ctx context.Context, tx db.Tx, refs []query.ShardRef) ([]query.BulkShardRow, error) {
		return batch(ctx, &syncAtDelete{Tx: tx, ba: ba, synced: &synced}, refs)
	})
	if err != nil || sum.Done != 2 || sum.Rows != 4 {
		t.Fatalf("compact: %+v, %v", sum.BulkCounts, err)
	}
	if want := []int{1, 3}; !reflect.DeepEqual(synced, want) {
		t.Errorf("the archive's syncs at each DELETE: %v, want %v (synced before each)", synced, want)
	}
}
