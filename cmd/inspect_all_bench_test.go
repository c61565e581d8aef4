package cmd_test

import (
	"bufio"
	"fmt"
	"syscall"
	"testing"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkInspectAllStreams runs the built binary's `inspect shard … --all -o jsonl` on
// shards of different depths of the benchmark data set and reports the process's peak
// resident memory for each: streaming means the figure stays flat as the shard grows.
// (Restored: a rename of the handler benchmark had dropped it while make bench still named it.)
func BenchmarkInspectAllStreams(b *testing.B) {
	testdb.EnsureBenchData(b)
	bin := benchBinary(b)
	// Shard 1 is the hot shard (~10% of the rows); 2 and 50 are ordinary skewed shards.
	for _, shard := range []int{50, 2, 1} {
		b.Run(fmt.Sprintf("shard-%d", shard), func(b *testing.B) {
			var rows, peakKB int64
			for i := 0; i < b.N; i++ {
				c := execCommand(bin, "--dsn", testdb.DSN(), "--schema", testdb.BenchSchema, "--statement-timeout", "5m",
					"inspect", "shard", "organization", fmt.Sprint(shard), "--all", "-o", "jsonl")
				out, err := c.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				rows = 0
				for sc.Scan() {
					rows++
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
				if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peakKB = max(peakKB, ru.Maxrss)
				}
			}
			b.ReportMetric(float64(rows), "lines")
			b.ReportMetric(float64(peakKB)/1024, "peak-rss-MiB")
		})
	}
}
