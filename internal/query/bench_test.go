package query

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The benchmarks compare outboxctl's statements with the operators' guide's templates for the
// same question, on the demo incident at 2,000,000 rows (50,000 organization shards of skewed
// depth, a hot shard with ~10% of the rows, ~2% of shards in backoff). They alternate the two
// queries in one run and report each median and the ratio. Run them with `make bench`; the
// data set is built once (about a minute) in schema outboxctl_bench and reused while it
// matches OUTBOXCTL_BENCH_ROWS.

const benchSchema = testdb.BenchSchema

func ensureBenchData(b *testing.B) { testdb.EnsureBenchData(b) }

// timed runs sql (with args) to completion, reading every row, and returns the wall time.
func timed(b *testing.B, sql string, args ...any) time.Duration {
	b.Helper()
	start := time.Now()
	rows, err := testdb.Pool(b).Query(context.Background(), sql, args...)
	if err != nil {
		b.Fatalf("%v\n%s", err, sql)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		b.Fatalf("%v\n%s", err, sql)
	}
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// compare alternates the guide's SQL and outboxctl's statement and reports both medians and
// guide/outboxctl (above 1: outboxctl is faster).
func compare(b *testing.B, guide string, ours Statement) {
	ensureBenchData(b)
	sql, args, err := ours.Bind()
	if err != nil {
		b.Fatal(err)
	}
	args = append([]any{pgx.QueryExecModeExec}, args...)
	// Warm both once, so neither pays for a cold cache the other does not.
	timed(b, guide, pgx.QueryExecModeSimpleProtocol)
	timed(b, sql, args...)
	var g, o []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g = append(g, timed(b, guide, pgx.QueryExecModeSimpleProtocol))
		o = append(o, timed(b, sql, args...))
	}
	b.StopTimer()
	gm, om := median(g), median(o)
	b.ReportMetric(float64(gm.Microseconds())/1000, "guide-ms")
	b.ReportMetric(float64(om.Microseconds())/1000, "outboxctl-ms")
	b.ReportMetric(float64(gm)/float64(om), "speedup-x")
}

func benchTarget() Target { return Target{Silo: SiloCell, Schema: benchSchema} }

func BenchmarkStuckShards(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT shard_scope, shard_identifier, category, count(*) AS depth,
    min(scheduled_for) AS next_attempt, min(date_added) AS oldest_message, max(date_added) AS newest_message
FROM %s.sentry_regionoutbox WHERE scheduled_for > NOW()
GROUP BY shard_scope, shard_identifier, category ORDER BY depth DESC LIMIT 20`, benchSchema),
		StuckShards(benchTarget(), ShardFilter{}))
}

func BenchmarkTopShards(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT shard_scope, shard_identifier, count(*) AS depth
FROM %s.sentry_regionoutbox GROUP BY shard_scope, shard_identifier ORDER BY depth DESC LIMIT 10`, benchSchema),
		TopShards(benchTarget(), ShardFilter{Limit: 10}))
}

// An ORGANIZATION_UPDATE's object is its organization: the shard is inferred.
func BenchmarkObjectInferredShard(b *testing.B) {
	const org = 2 // a deep shard of the demo
	compare(b, fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE category = 2 AND object_identifier = %d ORDER BY id DESC LIMIT 20`, benchSchema, org),
		ObjectOutboxes(benchTarget(), ObjectLookup{Category: Enum{2, "ORGANIZATION_UPDATE"}, Scope: &Enum{0, "ORGANIZATION_SCOPE"}, ObjectID: org, ShardFromObject: true}))
}

// An ORGANIZATION_MEMBER_UPDATE's object is a member: no shard to infer, the scope narrows.
func BenchmarkObjectNoShard(b *testing.B) {
	const member = 123456
	compare(b, fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE category = 3 AND object_identifier = %d ORDER BY id DESC LIMIT 20`, benchSchema, member),
		ObjectOutboxes(benchTarget(), ObjectLookup{Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Scope: &Enum{0, "ORGANIZATION_SCOPE"}, ObjectID: member}))
}

func BenchmarkHotShardMessages(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT id, category, object_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d ORDER BY id DESC LIMIT 50`, benchSchema, fixture.DemoHotShard),
		ShardMessages(benchTarget(), ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: fixture.DemoHotShard}, 50, false))
}
