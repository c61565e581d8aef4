package exporter

import (
	"context"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkExporterTiers is `make bench`'s exporter figures on the benchmark data set
// (docs/performance.md): the cheap tier's database time (each collection on its kept-open
// connection, snapshot and catalog read included; target ≤ 50 ms), the expensive tier
// against the statements of `depth` plus `shards --limit 10` in one snapshot of their own
// (target ≤ 1.5×), and one scrape of /metrics (target ≤ 5 ms). Alternated per iteration so
// they share the machine's load; medians reported.
func BenchmarkExporterTiers(b *testing.B) {
	testdb.EnsureBenchData(b)
	ctx := context.Background()
	cell := query.Target{Silo: query.SiloCell, Schema: testdb.BenchSchema}
	e := New([]Source{{Name: "bench", Config: db.Config{DSN: testdb.DSN()}, Target: cell, Registry: enums.Builtin()}}, Options{})
	cheap, exp := e.tiers[0], e.tiers[1]
	for _, t := range e.tiers { // connect and warm
		if err := e.once(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	conn := testdb.CommandConn(b)
	baseline := func() time.Duration {
		start := time.Now()
		err := db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
			if _, err := query.LoadSchema(ctx, tx, cell.Schema, query.SchemaTables(outbox.Introspected(cell))); err != nil {
				return err
			}
			for _, st := range []query.Statement{query.Depth(cell), query.TopShards(cell, query.ShardFilter{Limit: 10})} {
				if _, err := query.Run(ctx, tx, st); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	h := e.Handler()
	scrape := func() time.Duration {
		start := time.Now()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != 200 {
			b.Fatalf("scrape: %d", w.Code)
		}
		return time.Since(start)
	}
	tier := func(t *tier) time.Duration {
		if err := e.once(ctx, t); err != nil {
			b.Fatal(err)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return time.Duration(t.duration * float64(time.Second))
	}
	var cheapT, expT, baseT, scrapeT []time.Duration
	b.ResetTimer()
	for range b.N {
		cheapT = append(cheapT, tier(cheap))
		expT = append(expT, tier(exp))
		baseT = append(baseT, baseline())
		scrapeT = append(scrapeT, scrape())
	}
	b.StopTimer()
	c, x, base, s := med(cheapT), med(expT), med(baseT), med(scrapeT)
	b.ReportMetric(ms(c), "cheap-ms")
	b.ReportMetric(ms(x), "expensive-ms")
	b.ReportMetric(ms(base), "depth+shards-ms")
	b.ReportMetric(float64(x)/float64(base), "expensive/baseline")
	b.ReportMetric(ms(s), "scrape-ms")
	b.Logf("cheap tier %.1f ms (target ≤ 50), expensive tier %.1f ms vs depth + shards --limit 10 %.1f ms = %.2f× (target ≤ 1.5×), scrape %.2f ms (target ≤ 5)",
		ms(c), ms(x), ms(base), float64(x)/float64(base), ms(s))
}

func med(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
