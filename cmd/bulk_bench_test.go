package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// benchShards and benchRowsPerShard are the bulk benchmarks' shape: the issue's ~2,000
// shards / ~240,000 rows in backoff of the 2M-row set, in a schema of their own (the
// benchmarks write; the shared bench set stays untouched). BULK_BENCH_SHARDS scales it.
func benchShards() int {
	if n, err := strconv.Atoi(os.Getenv("BULK_BENCH_SHARDS")); err == nil && n > 0 {
		return n
	}
	return 2000
}

const benchRowsPerShard = 120

// bulkBenchSchema makes a schema of shards in backoff at the cap (benchShards ×
// benchRowsPerShard rows of ORGANIZATION_UPDATE, 12 objects each) and returns it with the
// statement that puts them back in backoff between measures.
func bulkBenchSchema(b *testing.B) (string, string) {
	b.Helper()
	schema := testdb.Schema(b, fixture.Options{})
	ident := pgx.Identifier{schema}.Sanitize()
	ctx := context.Background()
	if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 2, i %% 12, '{"n": 1}', now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, %d) s, generate_series(1, %d) i ORDER BY s, i`, ident, benchShards(), benchRowsPerShard)); err != nil {
		b.Fatal(err)
	}
	if _, err := testdb.Pool(b).Exec(ctx, "ANALYZE "+ident+".sentry_regionoutbox"); err != nil {
		b.Fatal(err)
	}
	return schema, fmt.Sprintf(`UPDATE %s.sentry_regionoutbox SET scheduled_from = now() - interval '20 minutes', scheduled_for = now() + interval '40 minutes'`, ident)
}

// BenchmarkBulkReschedule measures `reschedule --stuck` end to end (process, plan, batches)
// on benchShards() shards in backoff against the same rows made due by one set-based UPDATE
// in psql, and against a loop of single-shard `outboxctl reschedule SCOPE ID` (50 of them,
// scaled to every shard). While the bulk command runs, a Sentry-style drainer keeps taking
// the head-row lock of one shard after another (FOR UPDATE, blocking, as the synchronous
// drain does); drainer-max-wait-ms is its longest wait. The same bulk run with --group-heads
// (each coalesce group's lowest row rewritten: 24,000 rows of the 240,000) is group-heads-ms,
// under the same drainer (drainer-max-wait-group-heads-ms).
func BenchmarkBulkReschedule(b *testing.B) {
	bin := benchBinary(b)
	schema, backoff := bulkBenchSchema(b)
	dsn := testdb.DSN()
	ident := pgx.Identifier{schema}.Sanitize()
	reset := func() { // back in backoff, and vacuumed: the test server runs no autovacuum
		for _, sql := range []string{backoff, "VACUUM (ANALYZE) " + ident + ".sentry_regionoutbox"} {
			if _, err := testdb.Pool(b).Exec(context.Background(), sql); err != nil {
				b.Fatal(err)
			}
		}
	}
	psqlUpdate := fmt.Sprintf("UPDATE %s.sentry_regionoutbox SET scheduled_for = '2016-08-01', scheduled_from = now() WHERE scheduled_for > now()", ident)
	var bulkT, headsT, psqlT, loopT []time.Duration
	var maxWait, headsWait time.Duration
	// bulk is one bulk run under the drainer: its time, and the drainer's longest wait.
	bulk := func(mode ...string) (time.Duration, time.Duration) {
		reset()
		stop, _ := drainerLoop(b, schema)
		d := timeCommand(b, bin, append([]string{"reschedule", "--stuck", "--yes", "--dsn", dsn, "--schema", schema}, mode...)...)()
		return d, stop()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, w := bulk()
		bulkT, maxWait = append(bulkT, d), max(maxWait, w)
		d, w = bulk("--group-heads")
		headsT, headsWait = append(headsT, d), max(headsWait, w)
		reset()
		start := time.Now()
		if out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", psqlUpdate).CombinedOutput(); err != nil {
			b.Fatalf("psql: %v\n%s", err, out)
		}
		psqlT = append(psqlT, time.Since(start))
		reset()
		start = time.Now()
		for s := 1; s <= 50; s++ {
			timeCommand(b, bin, "reschedule", "organization", strconv.Itoa(s), "--yes", "--dsn", dsn, "--schema", schema)()
		}
		loopT = append(loopT, time.Since(start)*time.Duration(benchShards())/50)
	}
	b.StopTimer()
	all, heads, psql, loop := ms(medianOf(bulkT)), ms(medianOf(headsT)), ms(medianOf(psqlT)), ms(medianOf(loopT))
	b.ReportMetric(all, "bulk-ms")
	b.ReportMetric(psql, "psql-update-ms")
	b.ReportMetric(loop, "single-loop-scaled-ms")
	b.ReportMetric(all/psql, "bulk-vs-psql-x")
	b.ReportMetric(loop/all, "loop-vs-bulk-x")
	b.ReportMetric(ms(maxWait), "drainer-max-wait-ms")
	b.ReportMetric(heads, "group-heads-ms")
	b.ReportMetric(loop/heads, "loop-vs-group-heads-x")
	b.ReportMetric(ms(headsWait), "drainer-max-wait-group-heads-ms")
}

// drainerLoop starts a Sentry-style drainer on its own connection: it locks the head row of
// shard 1, 2, 3, … (FOR UPDATE, blocking; 5 ms held, as a delivery would) until stopped, and
// returns the stop function (the longest wait) and the number of locks taken.
func drainerLoop(b *testing.B, schema string) (func() time.Duration, *atomic.Int64) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, testdb.DSN())
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var maxWait time.Duration
	var n atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer conn.Close(context.Background())
		q := fmt.Sprintf("SELECT id FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = $1 ORDER BY id LIMIT 1 FOR UPDATE", pgx.Identifier{schema}.Sanitize())
		for shard := 1; ctx.Err() == nil; shard = shard%benchShards() + 1 {
			tx, err := conn.Begin(ctx)
			if err != nil {
				return
			}
			start := time.Now()
			var id int64
			err = tx.QueryRow(ctx, q, shard).Scan(&id)
			if w := time.Since(start); err == nil && w > maxWait {
				maxWait = w
			}
			time.Sleep(5 * time.Millisecond) // the delivery
			_ = tx.Commit(context.Background())
			n.Add(1)
		}
	}()
	return func() time.Duration { cancel(); wg.Wait(); return maxWait }, &n
}

// BenchmarkBulkSkip measures `skip --category` end to end on 100,000 matching rows (1,000
// shards of 100 rows of ORGANIZATION_MEMBER_UPDATE in 10 groups, beside 20 rows of
// ORGANIZATION_UPDATE each), archive fsynced per shard's batch as skip MESSAGE_ID does:
// rows-per-s is rows archived and deleted per second.
func BenchmarkBulkSkip(b *testing.B) {
	bin := benchBinary(b)
	dsn := testdb.DSN()
	seed := func() string {
		schema := testdb.Schema(b, fixture.Options{})
		if _, err := testdb.Pool(b).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
			(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
			SELECT 0, s, CASE WHEN i <= 100 THEN 3 ELSE 2 END, i %% 10, '{"member": {"id": 1, "role": "member"}}', now(), '2016-08-01'
			  FROM generate_series(1, 1000) s, generate_series(1, 120) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize())); err != nil {
			b.Fatal(err)
		}
		_, _ = testdb.Pool(b).Exec(context.Background(), "ANALYZE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox")
		return schema
	}
	var rates, deletes []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		schema := seed()
		archive := filepath.Join(b.TempDir(), "skip.jsonl")
		b.StartTimer()
		d := timeCommand(b, bin, "skip", "--category", "ORGANIZATION_MEMBER_UPDATE", "--archive", archive, "--yes", "--dsn", dsn, "--schema", schema)()
		rates = append(rates, 100000/d.Seconds())
		b.StopTimer()
		// The physical limit under the same load: one DELETE of the same rows in psql, unarchived.
		schema = seed()
		start := time.Now()
		if out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c",
			"DELETE FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox WHERE category = 3").CombinedOutput(); err != nil {
			b.Fatalf("psql: %v\n%s", err, out)
		}
		deletes = append(deletes, 100000/time.Since(start).Seconds())
		b.StartTimer()
	}
	b.ReportMetric(rates[len(rates)/2], "rows-per-s")
	b.ReportMetric(deletes[len(deletes)/2], "psql-delete-rows-per-s")
	b.ReportMetric(rates[len(rates)/2]/deletes[len(deletes)/2], "skip-vs-delete-x")
}
