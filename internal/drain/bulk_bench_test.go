package drain_test

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkBulkArchiveSkip is `skip --category`'s batches at the library level, without the
// process, the plan or the selection: drain.Bulk with a drain.BulkArchive over the shape of
// cmd's BenchmarkBulkSkip (1,000 shards × 100 rows of category 3 in 10 groups, beside 20 of
// category 2), every batch's archive lines fsynced before its DELETE commits, against one
// unarchived DELETE of the same rows on the same connection, one after the other.
func BenchmarkBulkArchiveSkip(b *testing.B) {
	ctx := context.Background()
	seed := func() string {
		schema := testdb.Schema(b, fixture.Options{})
		ident := pgx.Identifier{schema}.Sanitize()
		if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
			(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
			SELECT 0, s, CASE WHEN i <= 100 THEN 3 ELSE 2 END, i %% 10, '{"member": {"id": 1, "role": "member"}}', now(), '2016-08-01'
			  FROM generate_series(1, 1000) s, generate_series(1, 120) i ORDER BY s, i`, ident)); err != nil {
			b.Fatal(err)
		}
		if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+ident+".sentry_regionoutbox"); err != nil {
			b.Fatal(err)
		}
		return schema
	}
	who := "bench"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	var bulkT, deleteT time.Duration
	var rows int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		schema := seed()
		c, err := db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "skip"})
		if err != nil {
			b.Fatal(err)
		}
		t := query.Target{Silo: query.SiloCell, Schema: schema}
		bulk := &drain.Bulk{}
		for s := int64(1); s <= 1000; s++ {
			bulk.Shards, bulk.Depths = append(bulk.Shards, query.ShardRef{Scope: 0, ID: s}), append(bulk.Depths, 120)
		}
		cat := query.Enum{Value: 3, Name: "ORGANIZATION_MEMBER_UPDATE"}
		ba := &drain.BulkArchive{Path: filepath.Join(b.TempDir(), "skip.jsonl"), ID: drain.NewOperationID("skip", time.Now()), Target: t,
			Meta: func(r query.ShardRef) drain.OperationMeta {
				return drain.OperationMeta{Command: "skip", User: who, Schema: schema, Table: t.TableName(), PayloadType: "jsonb", Shard: &drain.ArchiveShard{Scope: r.Scope, ID: r.ID}}
			}}
		bulk.After = ba.Finish
		b.StartTimer()
		start := time.Now()
		sum, err := bulk.Run(ctx, c, ba.Batch(func(shards query.Statement) query.Statement {
			return query.BulkSkipRows(t, shards, cat, nil, nil, query.Why{Command: "skip"})
		}))
		bulkT += time.Since(start)
		b.StopTimer()
		if err != nil || sum.Rows != 100_000 {
			b.Fatalf("%+v: %v", sum, err)
		}
		rows += sum.Rows
		_ = ba.Close()
		other := seed()
		start = time.Now()
		if _, err := c.Exec(ctx, "DELETE FROM "+pgx.Identifier{other}.Sanitize()+".sentry_regionoutbox WHERE category = 3"); err != nil {
			b.Fatal(err)
		}
		deleteT += time.Since(start)
		_ = c.Close(ctx)
	}
	b.ReportMetric(float64(rows)/bulkT.Seconds(), "rows-per-s")
	b.ReportMetric(float64(rows)/deleteT.Seconds(), "delete-rows-per-s")
	b.ReportMetric(deleteT.Seconds()/bulkT.Seconds(), "bulk-vs-delete-x")
}
