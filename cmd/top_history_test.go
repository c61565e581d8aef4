package cmd_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/exporter"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/promtest"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/testtmux"
)

// TestPrometheusURLIsAContextSetting: context show lists a context's prometheus-url with
// its line and its password hidden; top's --history below a minute is a usage error.
func TestPrometheusURLIsAContextSetting(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, 0o600, "contexts:\n  us:\n    dsn: postgres://postgres@127.0.0.1:1/x\n    prometheus-url: https://ops:s3cretPW@prom.internal:9090/prom\n")
	code, out, errOut := runConfig(config, []string{"--context", "us", "context", "show"})
	if code != 0 || strings.Contains(out+errOut, "s3cretPW") || !strings.Contains(out, "prometheus-url") || !strings.Contains(out, "prom.internal:9090") {
		t.Fatalf("context show: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConfig(config, []string{"--context", "us", "top", "--once", "--history", "30s"})
	if code != cmd.ExitUsage || !strings.Contains(errOut, "`--history` must be at least 1m") {
		t.Fatalf("top --history 30s: exit %d\n%s", code, errOut)
	}
}

// TestTopInTmuxDrawsTheHistory: top on a real terminal over a context whose prometheus-url
// is a real Prometheus scraping a real exporter of that context (label context="us") draws
// the shards pane's history line, its latest depth the database's count; a context without
// prometheus-url draws none (TestNoHistoryWithoutPrometheus holds it on the model).
func TestTopInTmuxDrawsTheHistory(t *testing.T) {
	t.Parallel()
	testtmux.Require(t)
	promtest.Need(t, "prometheus")
	schema := seedTopDemo(t)
	rows := countRows(t, schema)
	e := exporter.New([]exporter.Source{{Name: "us", Config: db.Config{DSN: testdb.DSN()},
		Target: query.Target{Silo: query.SiloCell, Schema: schema}, Registry: enums.Builtin()}},
		exporter.Options{CheapInterval: 200 * time.Millisecond, ExpensiveInterval: 200 * time.Millisecond})
	prom := promtest.Start(t, promtest.Serve(t, e))
	// top reads the history at start and then once a minute: start it once Prometheus has
	// the series.
	c, err := history.New(prom, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Prometheus to hold the exporter's depth", func() bool {
		d, ok := c.Read(context.Background(), "us", time.Minute, 20, time.Now()).Latest(history.Depth)
		return ok && d == float64(rows)
	})
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %s\n    schema: %s\n    prometheus-url: %s\n", testdb.DSN(), schema, prom))
	s := newTmux(t, 120, 30)
	s.Command(fmt.Sprintf("LANG=C.UTF-8 OUTBOXCTL_CONFIG=%s outboxctl --context us top --history 1m; echo rc=$?", config))
	s.Wait(regexp.MustCompile(`crit +outage_or_poison`))
	s.Keys("2")
	s.Wait(regexp.MustCompile(`(?m)^depth 1m [ ▁▂▃▄▅▆▇█]+ ` + regexp.QuoteMeta(render.Count(rows)) + `  oldest [ ▁▂▃▄▅▆▇█]+ \d`))
	s.Wait(regexp.MustCompile(`1 Prometheus queries/min`))
	s.Keys("q")
	if screen := s.WaitDone(); exitStatus(screen) != "0" {
		t.Fatalf("not exit 0:\n%s", screen)
	}
}
