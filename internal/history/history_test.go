package history_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/exporter"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/promtest"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
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

func count(t *testing.T, schema string) int64 {
	t.Helper()
	var n int64
	if err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf(`SELECT count(*) FROM %q.sentry_regionoutbox`, schema)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func rows(n int, added time.Time) []testdb.Row {
	var out []testdb.Row
	for i := range n {
		out = append(out, testdb.Row{Scope: 0, Shard: int64(1 + i%3), Category: 2, Object: int64(i), DateAdded: added})
	}
	return out
}

// valid are the values of vals that are samples (not gaps).
func valid(vals []float64) []float64 {
	var out []float64
	for _, v := range vals {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// TestReadsTheExportersSeries: a real Prometheus scraping a real exporter over a seeded
// schema answers Read with the context's depth and oldest age over the window: the latest
// depth is the database's count(*), the latest age the oldest row's (an hour), and after
// more rows arrive the window holds both depths, so the sparkline rises.
//
// Broken on purpose: an index of start + k·step read as k-1 (the points one step early)
// leaves the window's end a gap, and the latest depth is never read.
func TestReadsTheExportersSeries(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, schema, query.CellTable, rows(12, time.Now().Add(-time.Hour))...)
	first := count(t, schema)
	e := exporter.New([]exporter.Source{{Name: "us", Config: db.Config{DSN: testdb.DSN()},
		Target: query.Target{Silo: query.SiloCell, Schema: schema}, Registry: enums.Builtin()}},
		exporter.Options{CheapInterval: 100 * time.Millisecond, ExpensiveInterval: 200 * time.Millisecond})
	prom := promtest.Start(t, promtest.Serve(t, e))
	c, err := history.New(prom, 0)
	if err != nil {
		t.Fatal(err)
	}
	const window, points = 8 * time.Second, 20
	read := func() history.History { return c.Read(context.Background(), "us", window, points, time.Now()) }
	waitFor(t, fmt.Sprintf("5 samples of depth in the window, the latest %d", first), func() (bool, string) {
		h := read()
		d, ok := h.Latest(history.Depth)
		return h.Err == nil && ok && d == float64(first) && len(valid(h.Series[history.Depth])) >= 5, fmt.Sprintf("%v %v", h.Series, h.Err)
	})
	h := read()
	if len(h.Series[history.Depth]) != points || len(h.Series[history.Oldest]) != points {
		t.Fatalf("series of %d and %d points, want %d: %v", len(h.Series[history.Depth]), len(h.Series[history.Oldest]), points, h.Series)
	}
	if age, ok := h.Latest(history.Oldest); !ok || age < 3600 || age > 3600+60 {
		t.Errorf("latest oldest age %v (%v), want an hour", age, ok)
	}
	if _, ok := h.Series[history.MailboxDepth]; ok {
		t.Errorf("a cell's history has a mailbox series: %v", h.Series)
	}
	if n := c.Queries(); n < 1 {
		t.Errorf("%d queries counted", n)
	}

	testdb.Insert(t, schema, query.CellTable, rows(12, time.Now())...)
	second := count(t, schema)
	waitFor(t, fmt.Sprintf("the window to hold depth %d and then %d", first, second), func() (bool, string) {
		h := read()
		d, ok := h.Latest(history.Depth)
		vals := valid(h.Series[history.Depth])
		return ok && d == float64(second) && len(vals) > 0 && vals[0] == float64(first), fmt.Sprint(h.Series[history.Depth])
	})
	h = read()
	// The cost figure of docs/top.md: one read of the default window, 20 times.
	var took []time.Duration
	for range 20 {
		t0 := time.Now()
		if h := c.Read(context.Background(), "us", history.DefaultWindow, history.DefaultPoints, time.Now()); h.Err != nil {
			t.Fatal(h.Err)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	t.Logf("a read of %s in %d points: median %s, max %s", history.DefaultWindow, history.DefaultPoints, took[len(took)/2], took[len(took)-1])
	line := render.Sparkline(h.Series[history.Depth], false)
	if !strings.Contains(line, "▅") || !strings.HasSuffix(line, "█") {
		t.Errorf("depth %d then %d drew %q: want half height (▅) then full (█)", first, second, line)
	}
}

// TestReadErrorsAreOneRedactedLine: a Prometheus that does not answer, and a URL that is
// not its API (a path prefix it does not have), are errors of one line, the URL's password
// never in them; nothing panics.
func TestReadErrorsAreOneRedactedLine(t *testing.T) {
	// A real Prometheus with nothing to scrape, for the wrong prefix's 404.
	prom := promtest.Start(t, promtest.FreeAddr(t))
	waitFor(t, "prometheus to listen", func() (bool, string) {
		c, _ := history.New(prom, time.Second)
		h := c.Read(context.Background(), "us", time.Minute, 10, time.Now())
		return h.Err == nil, fmt.Sprint(h.Err)
	})
	for name, u := range map[string]string{
		"refused":      "http://alice:s3cretPW@" + promtest.FreeAddr(t),
		"wrong prefix": strings.Replace(prom, "http://", "http://alice:s3cretPW@", 1) + "/nothere",
	} {
		c, err := history.New(u, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		h := c.Read(context.Background(), "us", time.Hour, 20, time.Now())
		if h.Err == nil || strings.Contains(h.Err.Error(), "s3cretPW") || strings.Contains(h.Err.Error(), "\n") || !strings.HasPrefix(h.Err.Error(), "prometheus: ") {
			t.Errorf("%s: error %v, want one line without the password", name, h.Err)
		}
		t.Logf("%s: %v", name, h.Err)
	}
	for _, bad := range []string{"prom:9090", "ftp://x", "http://u:s3cretPW@h/?q=1", "http://"} {
		if _, err := history.Parse(bad); err == nil || strings.Contains(err.Error(), "s3cretPW") {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}
