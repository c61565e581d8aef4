package cmd_test

import (
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkMetricsCommand is the exporter's figure end to end: `outboxctl metrics` (both
// tiers once, process start to exit) beside `outboxctl depth` plus `outboxctl shards
// --limit 10` run one after the other, the commands an operator would run for the same
// answer, alternated per iteration; medians and their ratio.
func BenchmarkMetricsCommand(b *testing.B) {
	testdb.EnsureBenchData(b)
	bin := benchBinary(b)
	common := []string{"--dsn", testdb.DSN(), "--schema", testdb.BenchSchema}
	metrics := timeCommand(b, bin, append(common, "metrics")...)
	depth := timeCommand(b, bin, append(common, "depth")...)
	shards := timeCommand(b, bin, append(common, "shards", "--limit", "10")...)
	var m, base []time.Duration
	b.ResetTimer()
	for range b.N {
		m = append(m, metrics())
		base = append(base, depth()+shards())
	}
	b.StopTimer()
	mm, bb := medianOf(m), medianOf(base)
	b.ReportMetric(ms(mm), "metrics-ms")
	b.ReportMetric(ms(bb), "depth+shards-ms")
	b.ReportMetric(float64(mm)/float64(bb), "metrics/baseline")
	b.Logf("outboxctl metrics %.0f ms vs depth + shards --limit 10 %.0f ms = %.2f×", ms(mm), ms(bb), float64(mm)/float64(bb))
}
