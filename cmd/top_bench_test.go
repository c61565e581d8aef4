package cmd_test

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkTopFirstFrame is `make bench`'s line for top (#42's target: the first frame in
// 300 ms or less on the 2M set): the built binary's `top --once` (one findings poll on a
// fresh connection, then the frame), process start to exit, on the benchmark data set; the
// median of b.N runs is reported as ms/frame.
func BenchmarkTopFirstFrame(b *testing.B) {
	testdb.EnsureBenchData(b)
	bin := benchBinary(b)
	var ms []float64
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", testdb.BenchSchema, "top", "--once", "--width", "120", "--height", "40").CombinedOutput()
		if err != nil {
			b.Fatalf("top --once: %v\n%s", err, out)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	median := ms[len(ms)/2]
	b.ReportMetric(median, "ms/frame")
	b.Logf("top --once on %s: median %.0f ms of %d runs (target ≤ 300 ms: %v)", testdb.BenchSchema, median, len(ms), median <= 300)
}
