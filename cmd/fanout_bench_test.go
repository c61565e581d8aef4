package cmd_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// blackhole accepts connections and never answers: a context there costs its whole
// connect-timeout, like a cell whose network went away.
func blackhole(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	b.Cleanup(func() {
		_ = l.Close()
		for _, c := range held {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// BenchmarkFanOutSlowContexts runs `--all-contexts depth` over one real cell and three that
// each take their 300ms connect-timeout to fail: run concurrently, an operation takes about
// one timeout (the slowest context), not three. Reported as ms/op.
func BenchmarkFanOutSlowContexts(b *testing.B) {
	schema := testdb.Schema(b, fixture.Options{})
	hole := blackhole(b)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "contexts:\n  real:\n    dsn: %s\n    schema: %s\n", testdb.DSN(), schema)
	for i := range 3 {
		fmt.Fprintf(&cfg, "  slow%d:\n    dsn: postgres://postgres@%s/test?sslmode=disable\n    connect-timeout: 300ms\n", i, hole)
	}
	config := writeConfig(b, 0o600, cfg.String())
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if code, _, errOut := runConfig(config, []string{"--all-contexts", "depth", "-o", "csv"}); code != cmd.ExitPartial {
			b.Fatalf("exit %d, want %d: %s", code, cmd.ExitPartial, errOut)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/op")
}
