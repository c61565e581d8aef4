package cmd_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkHandlers drains unique messages end to end (the binary, as a user runs it)
// through each kind of handler: stream: and exec: with the same Python handler logic, and
// HTTP to a local (Go) server. exec: starts one Python per message, so it drains only
// $OUTBOXCTL_BENCH_EXEC_MESSAGES (default 2,000) of them; compare messages/s.
// docs/performance.md ("Handlers") has the figures.
func BenchmarkHandlers(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	bin := sharedBinary(b)
	for _, h := range []struct {
		name, handler string
		messages      int
	}{
		{"stream-python", "stream:python3 testdata/stream/bench_handler.py", 20_000},
		{"http-local", "http://" + ln.Addr().String() + "/outbox", 20_000},
		{"exec-python", "exec:python3 testdata/stream/bench_handler.py --once", execMessages(b)},
	} {
		b.Run(h.name, func(b *testing.B) {
			var elapsed time.Duration
			for range b.N {
				b.StopTimer()
				schema := uniqueMessages(b, h.messages)
				b.StartTimer()
				start := time.Now()
				out, err := exec.Command(bin, "--dsn", testdb.DSN(), "--schema", schema, "drain", "organization", "1",
					"--handler", h.handler, "--yes", "-o", "json").CombinedOutput()
				elapsed += time.Since(start)
				b.StopTimer()
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				var left int
				if err := testdb.Pool(b).QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox").Scan(&left); err != nil || left != 0 {
					b.Fatalf("%d rows left (%v)\n%s", left, err, out)
				}
			}
			b.ReportMetric(float64(h.messages*b.N)/elapsed.Seconds(), "messages/s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/drain")
		})
	}
}

func execMessages(b *testing.B) int {
	n, err := strconv.Atoi(os.Getenv("OUTBOXCTL_BENCH_EXEC_MESSAGES"))
	switch {
	case os.Getenv("OUTBOXCTL_BENCH_EXEC_MESSAGES") == "":
		return 2_000
	case err != nil || n <= 0:
		b.Fatalf("OUTBOXCTL_BENCH_EXEC_MESSAGES=%q: want a positive number", os.Getenv("OUTBOXCTL_BENCH_EXEC_MESSAGES"))
	}
	return n
}

// uniqueMessages seeds one shard with n rows, each its own coalesce group.
func uniqueMessages(b *testing.B, n int) string {
	schema := testdb.Schema(b, fixture.Options{})
	ctx := context.Background()
	if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, 1, 3, i, '{"n": 1}', now(), '2016-08-01' FROM generate_series(1, %d) i`,
		pgx.Identifier{schema}.Sanitize(), n)); err != nil {
		b.Fatal(err)
	}
	if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox"); err != nil {
		b.Fatal(err)
	}
	return schema
}
