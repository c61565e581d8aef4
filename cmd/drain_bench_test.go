package cmd_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkDrainEndToEnd is the drain as a user runs it: the real binary (plan reads,
// claim, drain, summary), delivering over HTTP to a receiver on this machine, on the two
// shapes of BenchmarkDrainModes. It reports messages per second and, per shape, the wall
// clock of each mode: docs/performance.md gives the batch/exact ratio of one run.
func BenchmarkDrainEndToEnd(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var received atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { received.Add(1) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	bin := sharedBinary(b)
	shapes := []struct {
		name          string
		rows, objects int
	}{{"coalesce-heavy", 100_000, 1_000}, {"unique-heavy", 20_000, 20_000}}
	for _, sh := range shapes {
		for _, mode := range []string{"exact", "batch"} {
			b.Run(sh.name+"/"+mode, func(b *testing.B) {
				var elapsed time.Duration
				var msgs int64
				for range b.N {
					b.StopTimer()
					schema := testdb.Schema(b, fixture.Options{})
					ctx := context.Background()
					if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
						(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
						SELECT 0, 1, 3, i %% %d, '{"n": 1}', now(), '2016-08-01' FROM generate_series(1, %d) i`,
						pgx.Identifier{schema}.Sanitize(), sh.objects, sh.rows)); err != nil {
						b.Fatal(err)
					}
					if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox"); err != nil {
						b.Fatal(err)
					}
					before := received.Load()
					b.StartTimer()
					start := time.Now()
					out, err := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1", "--mode", mode,
						"--handler", "http://"+ln.Addr().String()+"/outbox", "--yes").CombinedOutput()
					elapsed += time.Since(start)
					b.StopTimer()
					if err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					if got := received.Load() - before; got != int64(sh.objects) {
						b.Fatalf("%d deliveries, want %d", got, sh.objects)
					}
					msgs += int64(sh.objects)
				}
				b.ReportMetric(float64(msgs)/elapsed.Seconds(), "messages/s")
				b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/drain")
			})
		}
	}
}
