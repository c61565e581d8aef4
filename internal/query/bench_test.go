package query

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The benchmarks compare outboxctl's statements with the operators' guide's templates for the
// same question, on the demo incident at 2,000,000 rows (110,000 organization shards of skewed
// depth, 150,000+ shards in all, a hot shard with 10% of the rows in 600 coalesce groups at the
// 1 h backoff cap, ~2% of shards in backoff, 4,000 control rows). They alternate the two
// queries in one run and report each median and the ratio. Run them with `make bench`; the
// data set is built once (a few minutes) in schema outboxctl_bench and reused while it
// matches OUTBOXCTL_BENCH_ROWS and the shape.

var benchSchema = testdb.BenchSchema //nolint:gochecknoglobals // the size's schema

func ensureBenchData(b *testing.B) { testdb.EnsureBenchData(b) }

// timed runs sql (with args) to completion, reading every row, and returns the wall time.
func timed(b *testing.B, sql string, args ...any) time.Duration {
	b.Helper()
	return timedOn(b, testdb.Pool(b), sql, args...)
}

// timedOn is timed on q: outboxctl's statements run in a transaction with the command's
// settings (testdb.CommandConn), the guide's with the server's defaults, as a DBA's psql
// runs them.
func timedOn(b *testing.B, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args ...any) time.Duration {
	b.Helper()
	start := time.Now()
	rows, err := q.Query(context.Background(), sql, args...)
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
func compare(b *testing.B, guide string, ours Statement) { compareScript(b, guide, Script{ours}) }

// compareScript is compare for a command that runs several statements: its time is their sum.
func compareScript(b *testing.B, guide string, ours Script) {
	ensureBenchData(b)
	type bound struct {
		sql  string
		args []any
	}
	var stmts []bound
	for _, st := range ours {
		sql, args, err := st.Bind()
		if err != nil {
			b.Fatal(err)
		}
		stmts = append(stmts, bound{sql, append([]any{pgx.QueryExecModeExec}, args...)})
	}
	// Ours run as the command runs them: on a connection opened by db.Connect, in a read
	// transaction with the command's settings (jit = off among them).
	conn := testdb.CommandConn(b)
	runOurs := func() time.Duration {
		var d time.Duration
		err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
			for _, st := range stmts {
				d += timedOn(b, tx, st.sql, st.args...)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	// Warm both once, so neither pays for a cold cache the other does not.
	timed(b, guide, pgx.QueryExecModeSimpleProtocol)
	runOurs()
	var g, o []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g = append(g, timed(b, guide, pgx.QueryExecModeSimpleProtocol))
		o = append(o, runOurs())
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

var orgScope = Enum{0, "ORGANIZATION_SCOPE"} //nolint:gochecknoglobals // constant

// inspect shard on the hot shard, as the command runs it: its categories, its state (given
// the categories' depth) and first page of messages, against the guide's one template (which
// shows neither state, categories nor coalescing).
func BenchmarkInspectHotShard(b *testing.B) {
	ensureBenchData(b)
	k := ShardKey{Scope: orgScope, ID: fixture.DemoHotShard}
	cats, err := Run(context.Background(), testdb.Pool(b), ShardCategories(benchTarget(), k))
	if err != nil {
		b.Fatal(err)
	}
	depths, err := CategoryDepthSums(benchTarget(), cats)
	if err != nil {
		b.Fatal(err)
	}
	compareScript(b, fmt.Sprintf(`SELECT id, category, object_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d ORDER BY id DESC LIMIT 50`, benchSchema, fixture.DemoHotShard),
		Script{ShardCategories(benchTarget(), k), ShardStateGivenDepth(benchTarget(), k, depths), ShardMessages(benchTarget(), k, 50, false)})
}

// The state alone, counting the hot shard (as --print-sql still prints it) and
// given the depth (as inspect shard runs it), against the guide's bare count of the shard.
func BenchmarkHotShardState(b *testing.B) {
	k := ShardKey{Scope: orgScope, ID: fixture.DemoHotShard}
	guide := fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d`, benchSchema, fixture.DemoHotShard)
	b.Run("counted", func(b *testing.B) { compare(b, guide, ShardState(benchTarget(), k)) })
	b.Run("given", func(b *testing.B) {
		compare(b, guide, ShardStateGivenDepth(benchTarget(), k, map[string]int64{"": 200000}))
	})
}

func BenchmarkInspectCategory(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT count(*) AS pending FROM %s.sentry_regionoutbox WHERE category = 3`, benchSchema),
		CategoryDepth(benchTarget(), Enum{3, "ORGANIZATION_MEMBER_UPDATE"}))
}

// The exact distinct counts (query.CategoryDepthExact): two sorts of every row of the category.
func BenchmarkInspectCategoryExact(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT count(*) AS pending FROM %s.sentry_regionoutbox WHERE category = 3`, benchSchema),
		CategoryDepthExact(benchTarget(), Enum{3, "ORGANIZATION_MEMBER_UPDATE"}))
}

// The floor of any exact depth per category: the cheapest pass that reads the category of
// every row (a parallel scan of the heap, with nothing to group), against the guide's
// count(*), which reads only the narrow (…, scheduled_for) index.
func BenchmarkDepthFloor(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox`, benchSchema),
		Statement{Name: "depth-floor", Text: fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox o WHERE o.category >= 0`, benchSchema)})
}

// depth against get_total_outbox_count (the total alone).
func BenchmarkDepth(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox`, benchSchema), Depth(benchTarget()))
}

func BenchmarkDepthEstimate(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox`, benchSchema), DepthEstimate(benchTarget()))
}

// An ORGANIZATION_MEMBER_UPDATE whose organization is given (inspect object --shard).
func BenchmarkObjectGivenShard(b *testing.B) {
	const member = 1 // a member of the hot organization
	compare(b, fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE category = 3 AND object_identifier = %d ORDER BY id DESC LIMIT 20`, benchSchema, member),
		ObjectOutboxes(benchTarget(), ObjectLookup{Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Scope: &orgScope, ObjectID: member, Shard: i64(fixture.DemoHotShard)}))
}

func BenchmarkStuckShardsControl(b *testing.B) {
	compare(b, fmt.Sprintf(`SELECT region_name, shard_scope, shard_identifier, category, count(*) AS depth, min(scheduled_for) AS next_attempt
FROM %s.sentry_controloutbox WHERE scheduled_for > NOW()
GROUP BY region_name, shard_scope, shard_identifier, category ORDER BY depth DESC LIMIT 20`, benchSchema),
		StuckShards(Target{Silo: SiloControl, Schema: benchSchema}, ShardFilter{}))
}
