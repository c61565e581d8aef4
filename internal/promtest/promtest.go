// Package promtest is the tests' real Prometheus (tests only: imported from _test.go files):
// a Prometheus server of the test's own (a temporary directory, a port of its own, a 200 ms
// scrape interval) scraping an exporter the test serves, and its query API read back. The
// exporter's, the history reader's and top's tests share it.
package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Need returns the path of a binary of Debian's prometheus package (prometheus, promtool),
// skipping the test without it, or failing it under CI=true, where .ci/run installs it.
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (apt-get install prometheus): %v", name, err)
		}
		t.Skipf("%s is not installed (apt-get install prometheus)", name)
	}
	return p
}

// FreeAddr is a loopback host:port nothing listens on (it did, for a moment).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Exporter is what Serve runs: internal/exporter's Exporter (named by its methods, so the
// exporter's own tests can use this package without an import cycle).
type Exporter interface {
	Run(ctx context.Context)
	Serve(ctx context.Context, ln net.Listener) error
	Wait()
}

// Serve runs e's collections and its HTTP server on a port of its own until the test ends,
// and returns the server's host:port.
func Serve(t testing.TB, e Exporter) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.Run(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		e.Wait()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// Start runs a Prometheus server scraping target (host:port; an http:// before it is
// dropped) every 200 ms until the test ends, and returns its URL. Its log is shown when the
// test failed.
func Start(t testing.TB, target string) string {
	t.Helper()
	bin := Need(t, "prometheus")
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: outboxctl\n    static_configs:\n      - targets: [%q]\n",
		strings.TrimPrefix(target, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s", logs.String())
		}
	})
	return "http://" + addr
}

// Query is the value of a PromQL expression of one series at base ("" while there is no
// such series yet).
func Query(base, expr string) (string, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value []any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", err
	}
	if len(r.Data.Result) != 1 || len(r.Data.Result[0].Value) != 2 {
		return "", nil
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return s, nil
}
