package mailbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// mailBenchSchema holds the 20M-payload set (fixture.CreateMailBench), built once (about ten
// minutes on two cores) and reused while its marker is there; never another helper's schema.
const mailBenchSchema = "outboxctl_mailbench"

// mailBenchRead is one read: the outboxctl command line, and the SQL an operator would run
// in psql for the same answer (INC-2324's on-call sized the backlog with such SQL).
type mailBenchRead struct {
	name string
	args []string
	psql string
}

var mailBenchReads = []mailBenchRead{ //nolint:gochecknoglobals // the benchmark's table
	{"mailboxes (most harmful 20)", []string{"mailboxes", "-o", "json"},
		`SELECT mailbox_name, count(*), min(date_added), max(attempts) FROM hybridcloud_webhookpayload GROUP BY mailbox_name ORDER BY max(attempts) DESC, min(date_added) LIMIT 20`},
	{"inspect mailbox github:1 (4M payloads)", []string{"inspect", "mailbox", "github:1", "-o", "json"},
		`SELECT * FROM hybridcloud_webhookpayload WHERE mailbox_name = 'github:1' ORDER BY id LIMIT 10; SELECT count(*) FROM hybridcloud_webhookpayload WHERE mailbox_name = 'github:1'`},
	{"depth --table hybridcloud_webhookpayload", []string{"--table", "hybridcloud_webhookpayload", "depth", "-o", "json"},
		`SELECT provider, region_name, count(*), min(date_added) FROM hybridcloud_webhookpayload GROUP BY provider, region_name`},
}

// BenchmarkMailboxReads20M (make bench; docs/performance.md): each mailbox read on 20M
// payloads in 9,974 mailboxes (one of 4M), end to end as a fresh process (OUTBOXCTL_BIN),
// beside the hand-written psql an operator would run, on both index sets: a current
// Sentry's, then with the schedule_for and priority indexes Sentry dropped in Aug 2026
// (created for the run, dropped after: a minute or two each). The median of 3 runs of each,
// measured in one run; ratio = psql / outboxctl.
func BenchmarkMailboxReads20M(b *testing.B) {
	bin := os.Getenv("OUTBOXCTL_BIN")
	if bin == "" {
		b.Skip("OUTBOXCTL_BIN is not set: make bench builds bin/outboxctl and sets it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	pool := testdb.Pool(b)
	start := time.Now()
	built, err := fixture.CreateMailBench(ctx, pool, pool, mailBenchSchema)
	if err != nil {
		b.Fatal(err)
	}
	if built {
		b.Logf("built %s (%d payloads) in %s", mailBenchSchema, fixture.MailBenchRows, time.Since(start).Round(time.Second))
	}
	dsn := testdb.DSN()
	var table strings.Builder
	table.WriteString("| index set | read | outboxctl | psql, hand-written | ratio |\n|---|---|---|---|---|\n")
	for _, set := range []struct {
		name string
		on   bool
	}{{"current (Aug 2026 drop applied)", false}, {"before the drop (schedule_for, priority)", true}} {
		if err := fixture.MailBenchDroppedIndexes(ctx, pool, mailBenchSchema, set.on); err != nil {
			b.Fatal(err)
		}
		for _, r := range mailBenchReads {
			args := append([]string{"--dsn", dsn, "--schema", mailBenchSchema}, r.args...)
			ours := median(3, func() time.Duration { return timeProcess(b, bin, args...) })
			theirs := median(3, func() time.Duration {
				return timeProcess(b, "psql", "-X", "-q", "-d", dsn, "-c", "SET search_path = "+mailBenchSchema+"; "+r.psql)
			})
			table.WriteString(fmt.Sprintf("| %s | %s | %.2f s | %.2f s | %.1f× |\n", set.name, r.name, ours.Seconds(), theirs.Seconds(), theirs.Seconds()/ours.Seconds()))
			b.ReportMetric(ours.Seconds(), strings.Fields(r.name)[0]+"-s")
		}
	}
	if err := fixture.MailBenchDroppedIndexes(ctx, pool, mailBenchSchema, false); err != nil {
		b.Fatal(err)
	}
	fmt.Print("\nWebhook mailbox reads at 20M payloads (BenchmarkMailboxReads20M):\n\n" + table.String())
}

// timeProcess runs a process to its exit and returns its wall time.
func timeProcess(b *testing.B, name string, args ...string) time.Duration {
	b.Helper()
	c := exec.Command(name, args...)
	start := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return time.Since(start)
}

// median runs f n times and returns the median.
func median(n int, f func() time.Duration) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = f()
	}
	slices.Sort(ds)
	return ds[n/2]
}
