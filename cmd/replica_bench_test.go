package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// replicaBenchSchema holds the replica benchmark's data set: 100,000 organizations and
// 1,000,000 members (OUTBOXCTL_BENCH_ORGS, _MEMBERS) with the drift layout of
// testdb.SeedReplicas, built once and reused while its size matches.
const replicaBenchSchema = "outboxctl_bench_replicas"

func replicaBenchShape() testdb.ReplicaShape {
	s := testdb.ReplicaShape{Orgs: 100_000, Members: 1_000_000, Cell: "us"}
	if n, err := fmt.Sscan(os.Getenv("OUTBOXCTL_BENCH_ORGS"), &s.Orgs); n == 1 && err == nil {
		s.Members = 10 * s.Orgs
	}
	return s
}

func ensureReplicaBench(b *testing.B, s testdb.ReplicaShape) {
	b.Helper()
	ctx := context.Background()
	p := testdb.Pool(b)
	var orgs, members int64
	err := p.QueryRow(ctx, fmt.Sprintf("SELECT (SELECT count(*) FROM %[1]s.sentry_organization), (SELECT count(*) FROM %[1]s.sentry_organizationmember)",
		pgx.Identifier{replicaBenchSchema}.Sanitize())).Scan(&orgs, &members)
	if err == nil && orgs == int64(s.Orgs) && members == int64(s.Members) {
		return
	}
	testdb.Drop(b, replicaBenchSchema)
	if err := fixture.Create(ctx, p, replicaBenchSchema, fixture.Options{Replicas: true}); err != nil {
		b.Fatal(err)
	}
	testdb.SeedReplicas(b, replicaBenchSchema, replicaBenchSchema, s)
	if _, err := p.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{replicaBenchSchema, "sentry_organizationmembermapping"}.Sanitize()); err != nil {
		b.Fatal(err)
	}
}

// runMeasured runs the binary with env and returns its wall time and peak resident memory.
func runMeasured(b *testing.B, env []string, bin string, args ...string) (time.Duration, int64) {
	b.Helper()
	c := exec.Command(bin, args...)
	c.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	start := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
	d := time.Since(start)
	ru, _ := c.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss // KiB on Linux
	}
	return d, rss
}

// BenchmarkVerifyReplicas measures verify end to end (process start to exit) on 100,000
// organizations and 1,000,000 members, beside the bare anti-join in psql that only counts
// the missing mappings (the baseline): per pair, monolith verify (one database) and the
// anti-join; then split verify (--context us,control, two connections, streams merged) of
// both pairs and its peak resident memory. Figures: docs/performance.md.
func BenchmarkVerifyReplicas(b *testing.B) {
	shape := replicaBenchShape()
	ensureReplicaBench(b, shape)
	bin := benchBinary(b)
	psql, err := exec.LookPath("psql")
	if err != nil {
		b.Skip("psql not installed: the baseline is psql")
	}
	dsn := testdb.DSN()
	q := pgx.Identifier{replicaBenchSchema}.Sanitize()
	anti := map[string]string{
		"organization":       fmt.Sprintf("SELECT count(*) FROM %[1]s.sentry_organization o WHERE NOT EXISTS (SELECT 1 FROM %[1]s.sentry_organizationmapping m WHERE m.organization_id = o.id)", q),
		"organizationmember": fmt.Sprintf("SELECT count(*) FROM %[1]s.sentry_organizationmember o WHERE NOT EXISTS (SELECT 1 FROM %[1]s.sentry_organizationmembermapping m WHERE m.organizationmember_id = o.id)", q),
	}
	config := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[2]s\n", dsn, replicaBenchSchema)), 0o600); err != nil {
		b.Fatal(err)
	}
	type measure struct {
		metric string
		fn     func() (time.Duration, int64)
	}
	var measures []measure
	for _, pair := range []string{"organization", "organizationmember"} {
		measures = append(measures,
			measure{pair + "-verify-ms", func() (time.Duration, int64) {
				return runMeasured(b, nil, bin, "--dsn", dsn, "--schema", replicaBenchSchema, "--cell", shape.Cell, "verify", pair)
			}},
			measure{pair + "-antijoin-ms", func() (time.Duration, int64) {
				return runMeasured(b, nil, psql, "-X", "-q", "-A", "-t", "-d", dsn, "-c", anti[pair])
			}})
	}
	measures = append(measures, measure{"split-verify-ms", func() (time.Duration, int64) {
		return runMeasured(b, []string{"OUTBOXCTL_CONFIG=" + config}, bin, "--context", "us,control", "verify")
	}})
	for _, m := range measures { // warm the cache once
		m.fn()
	}
	times := make([][]time.Duration, len(measures))
	var splitRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, m := range measures {
			d, rss := m.fn()
			times[j] = append(times[j], d)
			if m.metric == "split-verify-ms" {
				splitRSS = max(splitRSS, rss)
			}
		}
	}
	b.StopTimer()
	med := map[string]float64{}
	for j, m := range measures {
		med[m.metric] = ms(medianOf(times[j]))
		b.ReportMetric(med[m.metric], m.metric)
	}
	for _, pair := range []string{"organization", "organizationmember"} {
		b.ReportMetric(med[pair+"-verify-ms"]/med[pair+"-antijoin-ms"], pair+"-vs-antijoin-x")
	}
	b.ReportMetric(float64(splitRSS)/1024, "split-peak-rss-MiB")
}
