package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkDatabaseCommand measures what an operator waits for against a database, on the
// benchmark data set (make bench builds it): per iteration, alternately, the process start
// alone (`outboxctl version`), `shards --stuck --silo control` (4,000 rows: its statements
// take about a millisecond, so it is nearly all fixed cost), `shards --stuck` on the
// 2,000,000-row cell table, and the operators' guide's stuck-shards template as a bare
// statement. control-stmt-ms is the two statements `shards --stuck --silo control` runs
// (the listing and the kill-switch read) on an open connection, so control-ms minus it is
// the fixed cost: process start, connection, transaction, introspection. With
// OUTBOXCTL_BIN_BASE (a binary built from another commit) both commands also run with it,
// in the same loop, so the two are compared under the same load.
func BenchmarkDatabaseCommand(b *testing.B) {
	testdb.EnsureBenchData(b)
	bin := benchBinary(b)
	base := os.Getenv("OUTBOXCTL_BIN_BASE")
	dsn := testdb.DSN()
	run := func(bin string, args ...string) func() time.Duration { return timeCommand(b, bin, args...) }
	control := []string{"shards", "--stuck", "--silo", "control", "--dsn", dsn, "--schema", testdb.BenchSchema}
	cell := []string{"shards", "--stuck", "--dsn", dsn, "--schema", testdb.BenchSchema}
	guide := fmt.Sprintf(`SELECT shard_scope, shard_identifier, category, count(*) AS depth,
    min(scheduled_for) AS next_attempt, min(date_added) AS oldest_message, max(date_added) AS newest_message
FROM %s.sentry_regionoutbox WHERE scheduled_for > NOW()
GROUP BY shard_scope, shard_identifier, category ORDER BY depth DESC LIMIT 20`, testdb.BenchSchema)
	ctlStmts := query.Script{
		query.StuckShards(query.Target{Silo: query.SiloControl, Schema: testdb.BenchSchema}, query.ShardFilter{}),
		options.KillswitchStatement(testdb.BenchSchema, query.OptionTable),
	}
	conn := testdb.CommandConn(b)
	type measure struct {
		metric string
		fn     func() time.Duration
	}
	measures := []measure{
		{"version-ms", run(bin, "version")},
		{"control-ms", run(bin, control...)},
		{"control-stmt-ms", func() time.Duration { return timeAsCommand(b, conn, ctlStmts) }},
		{"stuck-ms", run(bin, cell...)},
		{"guide-stuck-ms", func() time.Duration { return timeSQL(b, guide) }},
	}
	if base != "" {
		measures = append(measures,
			measure{"control-base-ms", run(base, control...)}, measure{"stuck-base-ms", run(base, cell...)})
	}
	for _, m := range measures { // warm every path once
		m.fn()
	}
	times := make([][]time.Duration, len(measures))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, m := range measures {
			times[j] = append(times[j], m.fn())
		}
	}
	b.StopTimer()
	med := map[string]float64{}
	for j, m := range measures {
		med[m.metric] = ms(medianOf(times[j]))
		b.ReportMetric(med[m.metric], m.metric)
	}
	b.ReportMetric(med["control-ms"]-med["control-stmt-ms"], "fixed-ms")
	b.ReportMetric(med["guide-stuck-ms"]/med["stuck-ms"], "stuck-speedup-x")
	if base != "" {
		b.ReportMetric(med["control-base-ms"]-med["control-stmt-ms"], "fixed-base-ms")
		b.ReportMetric(med["guide-stuck-ms"]/med["stuck-base-ms"], "stuck-base-speedup-x")
	}
}

// benchBinary is the binary a benchmark runs: OUTBOXCTL_BIN (make bench passes the one it
// built), or one built here as make build builds it.
func benchBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("OUTBOXCTL_BIN"); bin != "" {
		return bin
	}
	bin := b.TempDir() + "/outboxctl"
	c := exec.Command("go", "build", "-trimpath", "-o", bin, "..")
	c.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build ships it
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("building: %v\n%s", err, out)
	}
	return bin
}

// timeSQL runs sql on the shared pool (simple protocol, as psql does) and reads every row.
func timeSQL(b *testing.B, sql string, args ...any) time.Duration {
	b.Helper()
	start := time.Now()
	rows, err := testdb.Pool(b).Query(context.Background(), sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() { //nolint:revive // reading every row is the point
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// timeAsCommand times the statements of s as a command runs them: bound, in a read
// transaction with the command's settings, on conn (testdb.CommandConn).
func timeAsCommand(b *testing.B, conn *db.Conn, s query.Script) (d time.Duration) {
	b.Helper()
	err := db.ReadTx(context.Background(), conn, func(tx pgx.Tx) error {
		d = timeScriptOn(b, tx, s)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// execCommand is the binary run with a bare environment (no PG* variables, no config).
func execCommand(bin string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Env = []string{"PATH=/usr/bin:/bin"}
	return c
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func medianOf(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
