package exporter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/promtest"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// waitFor polls cond until it holds or 30 s pass; the failure says what was awaited and
// the last observation.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, seen := cond()
		if ok {
			return
		}
		last = seen
		time.Sleep(50 * time.Millisecond) // a poll of a condition, not a wait for time
	}
	t.Fatalf("timed out waiting for %s; last seen: %s", what, last)
}

// A real Prometheus server scraping the exporter sees what the database holds: the exact
// depth summed over categories equals count(*), the estimate the analyzed count.
func TestPrometheusScrapesTheDatabasesValues(t *testing.T) {
	schema := seeded(t)
	var count int64
	if err := testdb.Pool(t).QueryRow(context.Background(),
		fmt.Sprintf(`SELECT count(*) FROM %q.sentry_regionoutbox`, schema)).Scan(&count); err != nil {
		t.Fatal(err)
	}
	e := New([]Source{source(schema, "c1")}, Options{CheapInterval: 100 * time.Millisecond, ExpensiveInterval: 200 * time.Millisecond})
	base := "http://" + promtest.Serve(t, e)
	prom := promtest.Start(t, base)
	for expr, want := range map[string]string{
		`sum(outboxctl_outbox_rows{context="c1"})`:                                 strconv.FormatInt(count, 10),
		`outboxctl_outbox_rows_estimate{context="c1",table="sentry_regionoutbox"}`: strconv.FormatInt(count, 10),
		`sum(outboxctl_shards_stuck{context="c1"})`:                                "2",
		`outboxctl_shards_at_cap{context="c1",scope="ORGANIZATION_SCOPE"}`:         "1",
		`outboxctl_killswitched_rows{context="c1",scope="ORGANIZATION_SCOPE"}`:     "4",
		`outboxctl_top_shard_rows{context="c1",rank="1"}`:                          "4",
		`outboxctl_up{context="c1"}`:                                               "1",
		`sum(outboxctl_collect_errors_total{context="c1"})`:                        "0",
		`count(up{job="outboxctl"} == 1)`:                                          "1",
	} {
		waitFor(t, expr+" = "+want, func() (bool, string) {
			got, err := promtest.Query(prom, expr)
			if err != nil {
				return false, err.Error()
			}
			return got == want, got
		})
	}
}

// /healthz answers as soon as the server listens; /readyz 503 until both tiers ran, then 200.
func TestReadyzWaitsForBothTiers(t *testing.T) {
	schema := seeded(t)
	// The expensive tier's first run is held until the test lets it go.
	e := New([]Source{source(schema, "c1")}, Options{})
	release := make(chan struct{})
	exp := e.tiers[1]
	collect := exp.collect
	exp.collect = func(ctx context.Context, conn *db.Conn) ([]sample, error) {
		<-release
		return collect(ctx, conn)
	}
	base := "http://" + promtest.Serve(t, e)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	if code := httpStatus(t, base+"/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	waitFor(t, "the cheap tier's first run", func() (bool, string) { return e.cycles.Load() >= 1, "" })
	if code := httpStatus(t, base+"/readyz"); code != 503 {
		t.Fatalf("/readyz = %d before the expensive tier ran, want 503", code)
	}
	close(release)
	waitFor(t, "/readyz 200", func() (bool, string) {
		code := httpStatus(t, base+"/readyz")
		return code == 200, strconv.Itoa(code)
	})
}

func httpStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// promtool check metrics is clean on the exporter's /metrics (Go and process collectors
// included) and on the textfile; the textfile is written whole.
func TestPromtoolChecksTheOutput(t *testing.T) {
	promtool := promtest.Need(t, "promtool")
	schema := seeded(t)
	e := New([]Source{source(schema, "c1")}, Options{CheapInterval: time.Hour, ExpensiveInterval: time.Hour})
	base := "http://" + promtest.Serve(t, e)
	<-e.Ready()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	path := filepath.Join(t.TempDir(), "outboxctl.prom")
	if err := e.WriteTextfile(path); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := e.Text()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, text) {
		t.Errorf("the textfile is not what Text prints:\n%s\n---\n%s", file, text)
	}
	for name, in := range map[string][]byte{"/metrics": body, "textfile": file} {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(in)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("promtool check metrics on %s: %v\n%s", name, err, out)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the textfile's directory holds %d entries, want the file alone (no temporary left)", len(entries))
	}
}

// Many collection cycles at fast intervals, scraped meanwhile, leave the goroutines and
// the heap flat, on the two connections made first (kept open).
func TestSoakIsFlat(t *testing.T) {
	schema := seeded(t)
	e := New([]Source{source(schema, "c1")}, Options{CheapInterval: time.Millisecond, ExpensiveInterval: time.Millisecond})
	base := "http://" + promtest.Serve(t, e)
	scrape := func() {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	measure := func() (int, uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return runtime.NumGoroutine(), m.HeapAlloc
	}
	waitCycles := func(n int64) {
		target := e.cycles.Load() + n
		waitFor(t, fmt.Sprintf("%d cycles", n), func() (bool, string) {
			scrape()
			return e.cycles.Load() >= target, strconv.FormatInt(e.cycles.Load(), 10)
		})
	}
	waitCycles(40) // warm: pools, the HTTP keep-alive, the statement caches
	g0, h0 := measure()
	waitCycles(400)
	g1, h1 := measure()
	if g1 > g0+2 {
		t.Errorf("goroutines grew from %d to %d over 400 cycles", g0, g1)
	}
	if h1 > h0+4<<20 {
		t.Errorf("heap grew from %d to %d bytes over 400 cycles", h0, h1)
	}
	if n := e.connects.Load(); n != 2 {
		t.Errorf("%d connections made, want 2 (one per tier, kept open)", n)
	}
	for _, err := range e.Errors() {
		t.Error(err)
	}
}

// TestReadyzMeansHasData: an exporter whose every collection failed (both tiers of its one
// context tried, the database refusing) answers /readyz 503 "no data", not 200 (issue 36:
// it answered 200 with nothing read); /healthz stays 200.
func TestReadyzMeansHasData(t *testing.T) {
	src := Source{Name: "gone", Config: db.Config{DSN: "postgres://postgres@127.0.0.1:1/none?sslmode=disable", ConnectTimeout: time.Second},
		Target: query.Target{Silo: query.SiloCell, Schema: "public"}, Registry: enums.Builtin()}
	e := New([]Source{src}, Options{CheapInterval: time.Hour, ExpensiveInterval: time.Hour})
	base := "http://" + promtest.Serve(t, e)
	<-e.Ready()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.HasPrefix(string(body), "no data: every collection so far has failed") {
		t.Errorf("/readyz = %d %q with every collection failed, want 503 no data", resp.StatusCode, body)
	}
	if code := httpStatus(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
}
