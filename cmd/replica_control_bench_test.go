package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// controlBenchSchemas hold the control -> cell benchmark's data set (the control silo's and
// the cell's): OUTBOXCTL_BENCH_CONTROL_N (default 200,000) sources of each control -> cell
// pair in the drift layout of testdb.SeedControlReplicas, built once and reused while its
// size matches.
const controlBenchControl, controlBenchCell = "outboxctl_bench_ctl_control", "outboxctl_bench_ctl_cell"

func ensureControlBench(b *testing.B) testdb.ControlShape {
	b.Helper()
	s := testdb.ControlShape{Orgs: 10_000, N: 200_000, Cell: "us", OtherCell: "eu"}
	if n, err := fmt.Sscan(os.Getenv("OUTBOXCTL_BENCH_CONTROL_N"), &s.N); n == 1 && err == nil {
		s.Orgs = max(30, s.N/20)
	}
	ctx := context.Background()
	p := testdb.Pool(b)
	var n int64
	if err := p.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.sentry_apikey", pgx.Identifier{controlBenchControl}.Sanitize())).Scan(&n); err == nil && n == int64(s.N) {
		return s
	}
	for _, schema := range []string{controlBenchControl, controlBenchCell} {
		testdb.Drop(b, schema)
		if err := fixture.Create(ctx, p, schema, fixture.Options{Replicas: true}); err != nil {
			b.Fatal(err)
		}
	}
	testdb.SeedControlReplicas(b, controlBenchControl, controlBenchCell, s)
	return s
}

// BenchmarkVerifyControlReplicas measures verify of the control -> cell pairs end to end
// (process start to exit): per pair apikey and apitoken, split verify (--context us,control:
// the control silo's sources and the cell's replicas, two connections) beside the bare
// anti-join in psql counting the sources without a replica across the two schemas (the
// baseline), and split verify of all five pairs with its peak resident memory. Figures:
// docs/performance.md.
func BenchmarkVerifyControlReplicas(b *testing.B) {
	ensureControlBench(b)
	bin := benchBinary(b)
	psql, err := exec.LookPath("psql")
	if err != nil {
		b.Skip("psql not installed: the baseline is psql")
	}
	dsn := testdb.DSN()
	c, r := pgx.Identifier{controlBenchControl}.Sanitize(), pgx.Identifier{controlBenchCell}.Sanitize()
	anti := map[string]string{
		"apikey":   fmt.Sprintf("SELECT count(*) FROM %s.sentry_apikey s WHERE NOT EXISTS (SELECT 1 FROM %s.hybridcloud_apikeyreplica x WHERE x.apikey_id = s.id)", c, r),
		"apitoken": fmt.Sprintf("SELECT count(*) FROM %s.sentry_apitoken s WHERE NOT EXISTS (SELECT 1 FROM %s.hybridcloud_apitokenreplica x WHERE x.apitoken_id = s.id)", c, r),
	}
	config := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		dsn, controlBenchCell, controlBenchControl)), 0o600); err != nil {
		b.Fatal(err)
	}
	env := []string{"OUTBOXCTL_CONFIG=" + config}
	type measure struct {
		metric string
		fn     func() (time.Duration, int64)
	}
	var measures []measure
	for _, pair := range []string{"apikey", "apitoken"} {
		measures = append(measures,
			measure{pair + "-split-verify-ms", func() (time.Duration, int64) {
				return runMeasured(b, env, bin, "--context", "us,control", "verify", pair)
			}},
			measure{pair + "-antijoin-ms", func() (time.Duration, int64) {
				return runMeasured(b, nil, psql, "-X", "-q", "-A", "-t", "-d", dsn, "-c", anti[pair])
			}})
	}
	measures = append(measures, measure{"split-verify-all-ms", func() (time.Duration, int64) {
		return runMeasured(b, env, bin, "--context", "us,control", "verify", "apitoken", "apikey", "orgauthtoken", "organizationslugreservation", "authidentity")
	}})
	for _, m := range measures { // warm the cache once
		m.fn()
	}
	times := make([][]time.Duration, len(measures))
	var rss int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, m := range measures {
			d, kib := m.fn()
			times[j] = append(times[j], d)
			if m.metric == "split-verify-all-ms" {
				rss = max(rss, kib)
			}
		}
	}
	b.StopTimer()
	med := map[string]float64{}
	for j, m := range measures {
		med[m.metric] = ms(medianOf(times[j]))
		b.ReportMetric(med[m.metric], m.metric)
	}
	for _, pair := range []string{"apikey", "apitoken"} {
		b.ReportMetric(med[pair+"-split-verify-ms"]/med[pair+"-antijoin-ms"], pair+"-vs-antijoin-x")
	}
	b.ReportMetric(float64(rss)/1024, "split-all-peak-rss-MiB")
}
