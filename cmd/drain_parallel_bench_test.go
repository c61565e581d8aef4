package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// Shape of BenchmarkDrainParallel: 1,000 shards in backoff of 10 rows each (5 coalesce
// groups of 2 rows: 5 deliveries per shard).
const (
	parallelShards       = 1000
	parallelRowsPerShard = 10
	parallelGroups       = 5
	// loopShards is how many shards the one-command-per-shard loop drains (its time is
	// scaled to parallelShards): the loop is the slowest by far.
	loopShards = 50
)

// stuckShards seeds parallelShards shards in backoff.
func stuckShards(b *testing.B) string {
	b.Helper()
	schema := testdb.Schema(b, fixture.Options{})
	ctx := context.Background()
	tbl := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
	if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, 3, r %% %d, '{"n": 1}', now(), now() + interval '1 hour'
		  FROM generate_series(1, %d) s, generate_series(1, %d) r ORDER BY r, s`,
		tbl, parallelGroups, parallelShards, parallelRowsPerShard)); err != nil {
		b.Fatal(err)
	}
	if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+tbl); err != nil {
		b.Fatal(err)
	}
	return schema
}

// machineBusy is the machine's busy time so far in seconds (user, nice, system, irq and softirq
// of /proc/stat's cpu line; 0 where there is none).
func machineBusy() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var jiffies float64
	for _, i := range []int{1, 2, 3, 6, 7} {
		v, _ := strconv.ParseFloat(f[i], 64)
		jiffies += v
	}
	return jiffies / 100 // USER_HZ
}

func rowsLeft(b *testing.B, schema string) int {
	var n int
	if err := testdb.Pool(b).QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkDrainParallel is drain --stuck --parallel N end to end (the binary, as a user
// runs it) over 1,000 shards of 10 rows through a stream handler (one Python co-process
// per worker), for N = 1, 2 and 4, beside the loop an operator writes today: one
// `drain SCOPE ID` per shard (50 of them timed, scaled to 1,000). Each reports s/1000shards
// (and the parallel runs outboxctl's own CPU seconds);
// docs/performance.md gives the ratios of one run.
func BenchmarkDrainParallel(b *testing.B) {
	bin := sharedBinary(b)
	const handler = "stream:python3 testdata/stream/bench_handler.py"
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("parallel-%d", n), func(b *testing.B) {
			var elapsed, cpu time.Duration
			var busy float64
			for range b.N {
				b.StopTimer()
				schema := stuckShards(b)
				b.StartTimer()
				busy0 := machineBusy()
				start := time.Now()
				c := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "--stuck", "--parallel", fmt.Sprint(n),
					"--handler", handler, "--yes", "-o", "json")
				out, err := c.CombinedOutput()
				elapsed += time.Since(start)
				busy += machineBusy() - busy0
				b.StopTimer()
				if c.ProcessState != nil {
					cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
				}
				if err != nil {
					b.Fatalf("%v\n%s", err, out[max(0, len(out)-2000):])
				}
				if left := rowsLeft(b, schema); left != 0 {
					b.Fatalf("%d rows left", left)
				}
			}
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/1000shards")
			b.ReportMetric(float64(parallelShards*parallelGroups*b.N)/elapsed.Seconds(), "messages/s")
			// outboxctl's own CPU (its handlers' Python and the server are not counted): over
			// the wall clock, how many of the machine's cores it kept busy.
			b.ReportMetric(cpu.Seconds()/float64(b.N), "outboxctl-cpu-s")
			// The whole machine's busy time (every process: outboxctl, the backends, the
			// handlers; anything else running too, so measure on a quiet machine): at
			// --parallel 1, 2 × wall ÷ busy is the most any N can gain on 2 cores.
			if busy > 0 {
				b.ReportMetric(busy/float64(b.N), "machine-busy-core-s")
				b.ReportMetric(busy/elapsed.Seconds(), "machine-cores-busy")
				b.ReportMetric(float64(runtime.NumCPU())*elapsed.Seconds()/busy, "ceiling-x")
			}
		})
	}
	b.Run("one-command-per-shard", func(b *testing.B) {
		var elapsed time.Duration
		for range b.N {
			b.StopTimer()
			schema := stuckShards(b)
			b.StartTimer()
			start := time.Now()
			for s := 1; s <= loopShards; s++ {
				out, err := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", fmt.Sprint(s),
					"--handler", handler, "--yes", "-o", "json").CombinedOutput()
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
			}
			elapsed += time.Since(start)
			b.StopTimer()
			if left := rowsLeft(b, schema); left != (parallelShards-loopShards)*parallelRowsPerShard {
				b.Fatalf("%d rows left", left)
			}
		}
		b.ReportMetric(elapsed.Seconds()/float64(b.N)*parallelShards/loopShards, "s/1000shards")
	})
}
