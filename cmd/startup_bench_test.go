package cmd_test

import (
	"os/exec"
	"sort"
	"testing"
	"time"
)

// BenchmarkStartupPrintSQL runs the built binary (`outboxctl shards --stuck --print-sql`, no
// database) once per iteration and reports the median and 90th percentile wall time: what an
// operator waits for. `make bench` passes the binary it built in OUTBOXCTL_BIN; otherwise the
// benchmark builds one.
func BenchmarkStartupPrintSQL(b *testing.B) {
	bin := benchBinary(b)
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c := exec.Command(bin, "shards", "--stuck", "--print-sql")
		c.Env = []string{"PATH=/usr/bin:/bin"}
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(durations[len(durations)*9/10].Microseconds())/1000, "p90-ms")
}
