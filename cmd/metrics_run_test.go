package cmd_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// metricsSchema is a schema holding 5 rows of shard (0, 1) and 2 of shard (1, 9).
func metricsSchema(t *testing.T) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	var rows []testdb.Row
	for i := range 5 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i)})
	}
	rows = append(rows, testdb.Row{Scope: 1, Shard: 9, Category: 0, Object: 1}, testdb.Row{Scope: 1, Shard: 9, Category: 0, Object: 2})
	testdb.Insert(t, schema, query.CellTable, rows...)
	return schema
}

// withConfig is streams whose environment points OUTBOXCTL_CONFIG at a file holding text.
func withConfig(t *testing.T, text string) (*render.Streams, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	streams, out, errOut := render.Test()
	streams.Getenv = func(k string) string {
		if k == "OUTBOXCTL_CONFIG" {
			return path
		}
		return ""
	}
	return streams, out, errOut
}

// parseText parses the text exposition format into "name{labels}" → value.
func parseText(t *testing.T, text string) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, text)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			ls := model.LabelSet{}
			for _, l := range m.GetLabel() {
				ls[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			out[name+ls.String()] = v
		}
	}
	return out
}

// metrics --all-contexts reads each context's replica-dsn (the primary here is a closed
// port), counts every row, and says a context that is gone: up 0, exit 6 (partial).
func TestMetricsReadsTheReplicaAndSaysAContextGone(t *testing.T) {
	schema := metricsSchema(t)
	streams, out, errOut := withConfig(t, fmt.Sprintf(`contexts:
  us:
    dsn: postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable
    replica-dsn: %s
    schema: %s
  gone:
    dsn: postgres://postgres@127.0.0.1:1/nowhere?sslmode=disable
    schema: %s
`, testdb.DSN(), schema, schema))
	code := cmd.Main(context.Background(), []string{"metrics", "--all-contexts"}, streams)
	if code != 6 {
		t.Fatalf("exit %d, want 6\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got := parseText(t, out.String())
	var sum float64
	for k, v := range got {
		if strings.HasPrefix(k, `outboxctl_outbox_rows{`) && strings.Contains(k, `context="us"`) {
			sum += v
		}
	}
	if sum != 7 {
		t.Errorf("us: the exact depth sums to %v, want 7\n%s", sum, out)
	}
	for k, want := range map[string]float64{`outboxctl_up{context="us"}`: 1, `outboxctl_up{context="gone"}`: 0} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if n := strings.Count(errOut.String(), "Error: "); n != 1 || !strings.Contains(errOut.String(), "context gone") {
		t.Errorf("stderr, want one Error: line naming context gone:\n%s", errOut)
	}
}

// --textfile writes the same families to the file and nothing to stdout; a name
// node_exporter would not read is a usage error (exit 2), as are bad intervals and addresses.
func TestMetricsTextfileAndUsageErrors(t *testing.T) {
	schema := metricsSchema(t)
	path := filepath.Join(t.TempDir(), "outboxctl.prom")
	out, _ := mustRun(t, 0, schema, "metrics", "--textfile", path)
	if out != "" {
		t.Errorf("stdout %q with --textfile", out)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseText(t, string(text))[`outboxctl_up{context="default"}`]; got != 1 {
		t.Errorf("textfile: up = %v\n%s", got, text)
	}
	for _, args := range [][]string{
		{"metrics", "--textfile", filepath.Join(t.TempDir(), "x.txt")},
		{"metrics", "--cheap-timeout", "0s"},
		{"exporter", "--listen", "nowhere"},
		{"exporter", "--cheap-interval", "1s", "--cheap-timeout", "5s"},
		{"exporter", "--max-connections", "0"},
		{"exporter", "--max-scrapes", "-1"},
	} {
		_, errOut := mustRun(t, 2, schema, args...)
		if !strings.Contains(errOut, "Try: outboxctl ") {
			t.Errorf("%v: no Try: line:\n%s", args, errOut)
		}
	}
}

// outboxctl exporter serves /metrics once ready and stops cleanly (exit 0) when its
// context ends, as on SIGTERM.
func TestExporterServesAndStopsCleanly(t *testing.T) {
	schema := metricsSchema(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	streams, _, _ := render.Test()
	var errOut syncBuffer
	streams.Err = &errOut
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmd.Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "exporter", "--listen", addr}, streams)
	}()
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for body == "" && time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			ready := resp.StatusCode == 200
			resp.Body.Close()
			if ready {
				resp, err := http.Get("http://" + addr + "/metrics")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body = string(b)
			}
		}
		if body == "" {
			time.Sleep(20 * time.Millisecond) // polling /readyz, a condition
		}
	}
	if body == "" {
		cancel()
		t.Fatalf("never ready; stderr:\n%s", errOut.String())
	}
	// (No outbox_rows_estimate: the table was never analyzed, and no estimate is not 0.)
	if !strings.Contains(body, `outboxctl_up{context="default"} 1`) ||
		!strings.Contains(body, `outboxctl_outbox_rows{category="ORGANIZATION_UPDATE",cell="",context="default",scope="ORGANIZATION_SCOPE",silo="cell",table="sentry_regionoutbox"} 5`) ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics:\n%s", body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after its context ended, want 0; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "serving http://"+addr+"/metrics for 1 context(s)") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}

// An exporter whose database is down still serves (outboxctl_up 0) and says once why its
// first collection failed, password redacted. The warning is written before Main returns:
// the goroutine that tells it is joined, so reading stderr afterwards (a plain buffer, not a
// locked one) is not a data race, which -race (make test/race) checks.
func TestExporterTellsFirstFailureBeforeReturning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downAddr := down.Addr().String()
	down.Close() // nothing listens there: the connection is refused at once
	streams, out, errOut := render.Test()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- cmd.Main(ctx, []string{"--dsn", "postgres://ops:hunter2secret@" + downAddr + "/test", "exporter", "--listen", addr}, streams)
	}()
	// Its first round ends with no data: /readyz says so (503), no longer "collecting".
	ready := false
	for deadline := time.Now().Add(30 * time.Second); !ready && time.Now().Before(deadline); {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			ready = resp.StatusCode == 503 && strings.HasPrefix(string(body), "no data: ")
			resp.Body.Close()
		}
		if !ready {
			time.Sleep(20 * time.Millisecond) // polling /readyz, a condition
		}
	}
	cancel()
	code := <-done
	if !ready {
		t.Fatalf("never done with its first round; exit %d", code)
	}
	if code != 0 {
		t.Errorf("exit %d after its context ended, want 0", code)
	}
	got := errOut.String()
	if !strings.Contains(got, "first collection failed: ") || strings.Contains(got, "hunter2secret") || out.Len() != 0 {
		t.Errorf("stdout %q; stderr:\n%s", out.String(), got)
	}
}
