package exporter

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// seeded is a schema with a known shape: shard (0,1) due with 3 rows, shard (0,2) in
// backoff at the cap with 2 rows, shard (1,5) in backoff at 60 s with 1 row, and shard
// (0,7) kill-switched with 4 rows; 10 rows in all.
func seeded(t *testing.T) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	var rows []testdb.Row
	for i := range 3 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: int64(i), DateAdded: now.Add(-time.Hour)})
	}
	for i := range 2 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: int64(i), ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)})
	}
	rows = append(rows, testdb.Row{Scope: 1, Shard: 5, Category: 0, Object: 1, ScheduledFrom: now, ScheduledFor: now.Add(time.Minute)})
	for i := range 4 {
		rows = append(rows, testdb.Row{Scope: 0, Shard: 7, Category: 2, Object: int64(i)})
	}
	testdb.Insert(t, schema, query.CellTable, rows...)
	execSQL(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, '[7]', now())`,
		pgx.Identifier{schema}.Sanitize()), options.DisabledOrgShards)
	execSQL(t, fmt.Sprintf(`ANALYZE %s.sentry_regionoutbox`, pgx.Identifier{schema}.Sanitize()))
	return schema
}

func execSQL(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

func source(schema, name string) Source {
	return Source{Name: name, Config: db.Config{DSN: testdb.DSN()},
		Target: query.Target{Silo: query.SiloCell, Schema: schema}, Registry: enums.Builtin()}
}

// values gathers the exporter and returns each series of the outboxctl_ families as
// "name{label=value,…}" → value, labels sorted by name.
func values(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	mfs, err := e.Registry(false).Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[seriesName(mf.GetName(), m)] = metricValue(m)
		}
	}
	return out
}

func seriesName(name string, m *dto.Metric) string {
	var ls []string
	for _, l := range m.GetLabel() {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// k is the series name of name with labels ("a=1,b=2" pieces, in any order), as values
// spells it.
func k(name string, labels ...string) string {
	var ls []string
	for _, l := range labels {
		if l != "" {
			ls = append(ls, strings.Split(l, ",")...)
		}
	}
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return 0
}

func TestCollectOnceReadsTheSeededShape(t *testing.T) {
	schema := seeded(t)
	e := New([]Source{source(schema, "c1")}, Options{Version: "test"})
	if err := e.CollectOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := values(t, e)
	base := "context=c1,silo=cell,table=sentry_regionoutbox"
	want := map[string]float64{
		k("outboxctl_outbox_rows", "category=ORGANIZATION_UPDATE,cell=", base, "scope=ORGANIZATION_SCOPE"):        7,
		k("outboxctl_outbox_rows", "category=ORGANIZATION_MEMBER_UPDATE,cell=", base, "scope=ORGANIZATION_SCOPE"): 2,
		k("outboxctl_outbox_rows", "category=USER_UPDATE,cell=", base, "scope=USER_SCOPE"):                        1,
		k("outboxctl_outbox_rows_estimate", base):                                                                 10,
		k("outboxctl_shards_stuck", "cell=", base, "scope=ORGANIZATION_SCOPE"):                                    1,
		k("outboxctl_shards_at_cap", "cell=", base, "scope=ORGANIZATION_SCOPE"):                                   1,
		k("outboxctl_shards_stuck", "cell=", base, "scope=USER_SCOPE"):                                            1,
		k("outboxctl_shards_at_cap", "cell=", base, "scope=USER_SCOPE"):                                           0,
		k("outboxctl_shards_killswitched_with_rows", "cell=", base, "scope=ORGANIZATION_SCOPE"):                   1,
		k("outboxctl_killswitched_rows", "cell=", base, "scope=ORGANIZATION_SCOPE"):                               4,
		k("outboxctl_top_shard_rows", base, "rank=1"):                                                             4,
		k("outboxctl_top_shard_rows", base, "rank=2"):                                                             3,
		k("outboxctl_top_shard_rows", base, "rank=3"):                                                             2,
		k("outboxctl_top_shard_rows", base, "rank=4"):                                                             1,
		k("outboxctl_up", "context=c1"):                                                                           1,
		k("outboxctl_collect_errors_total", "context=c1,tier=cheap"):                                              0,
		k("outboxctl_collect_errors_total", "context=c1,tier=expensive"):                                          0,
		k("outboxctl_build_info", "goversion="+goVersion(), "version=test"):                                       1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	// The age of the oldest row is the hour-old rows'; the due shard (0,1) was never claimed
	// (its head's scheduled_from is its insert time) and the kill-switched (0,7) is due too.
	if age := got[k("outboxctl_oldest_row_age_seconds", "cell=", base)]; age < 3500 || age > 4000 {
		t.Errorf("oldest_row_age_seconds = %v, want about 3600", age)
	}
	if _, ok := got[k("outboxctl_oldest_unclaimed_due_seconds", "cell=", base)]; !ok {
		t.Error("no oldest_unclaimed_due_seconds")
	}
	var sum float64
	for k, v := range got {
		if strings.HasPrefix(k, "outboxctl_outbox_rows{") {
			sum += v
		}
	}
	if sum != 10 {
		t.Errorf("the exact depth sums to %v over categories, want count(*) = 10", sum)
	}
	select {
	case <-e.Ready():
	default:
		t.Error("not ready after CollectOnce")
	}
}

// A tier that fails keeps its last values, counts the error and is down; after the
// database comes back it collects again on a new connection.
func TestAFailedCollectionKeepsTheLastValues(t *testing.T) {
	schema := seeded(t)
	e := New([]Source{source(schema, "c1")}, Options{})
	if err := e.CollectOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	execSQL(t, fmt.Sprintf(`ALTER TABLE %s.sentry_regionoutbox RENAME TO gone`, pgx.Identifier{schema}.Sanitize()))
	if err := e.CollectOnce(context.Background()); err == nil {
		t.Fatal("collected a renamed table")
	}
	got := values(t, e)
	base := "context=c1,silo=cell,table=sentry_regionoutbox"
	for k, v := range map[string]float64{
		k("outboxctl_outbox_rows_estimate", base):                        10,
		k("outboxctl_up", "context=c1"):                                  0,
		k("outboxctl_collect_errors_total", "context=c1,tier=cheap"):     1,
		k("outboxctl_collect_errors_total", "context=c1,tier=expensive"): 1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if e.tiers[0].conn != nil {
		t.Error("a failed tier kept its connection")
	}
	execSQL(t, fmt.Sprintf(`ALTER TABLE %s.gone RENAME TO sentry_regionoutbox`, pgx.Identifier{schema}.Sanitize()))
	if err := e.CollectOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := values(t, e)[k("outboxctl_up", "context=c1")]; got != 1 {
		t.Errorf("up = %v after the table came back", got)
	}
}

func goVersion() string { return runtimeVersion() }

// A database that refuses connections is retried with backoff, well before the tier's
// interval, each failure counted; up stays 0 and the exporter is ready (both tiers tried).
func TestAnUnreachableDatabaseIsRetriedWithBackoff(t *testing.T) {
	src := Source{Name: "gone", Config: db.Config{DSN: "postgres://postgres@127.0.0.1:1/none?sslmode=disable", ConnectTimeout: time.Second},
		Target: query.Target{Silo: query.SiloCell, Schema: "public"}, Registry: enums.Builtin()}
	e := New([]Source{src}, Options{CheapInterval: time.Hour, ExpensiveInterval: time.Hour, Backoff: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	e.Run(ctx)
	defer func() { cancel(); e.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for values(t, e)[k("outboxctl_collect_errors_total", "context=gone,tier=cheap")] < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("not retried: %v", values(t, e))
		}
		time.Sleep(10 * time.Millisecond) // polling a counter, a condition
	}
	<-e.Ready()
	if got := values(t, e)[k("outboxctl_up", "context=gone")]; got != 0 {
		t.Errorf("up = %v for a refused database", got)
	}
	if e.HasData() {
		t.Error("HasData with every collection failed")
	}
	if n := e.connects.Load(); n < 4 {
		t.Errorf("%d connection attempts", n)
	}
}

// In the control silo the expensive tier's per-cell families carry the cell (region_name):
// two cells' rows and shards are counted apart, and a --cell context sees its own only.
func TestControlSiloCountsPerCell(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	testdb.Insert(t, schema, query.ControlTable,
		testdb.Row{Cell: "us", Scope: 0, Shard: 1, Category: 2, Object: 1},
		testdb.Row{Cell: "us", Scope: 0, Shard: 1, Category: 2, Object: 2},
		testdb.Row{Cell: "de", Scope: 0, Shard: 1, Category: 2, Object: 1, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)})
	all := source(schema, "control")
	all.Target.Silo = query.SiloControl
	de := all
	de.Name, de.Target.Cell = "control-de", "de"
	e := New([]Source{all, de}, Options{})
	if err := e.CollectOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := values(t, e)
	base := "silo=control,table=sentry_controloutbox,scope=ORGANIZATION_SCOPE"
	for key, want := range map[string]float64{
		k("outboxctl_outbox_rows", "context=control,cell=us,category=ORGANIZATION_UPDATE", base):    2,
		k("outboxctl_outbox_rows", "context=control,cell=de,category=ORGANIZATION_UPDATE", base):    1,
		k("outboxctl_outbox_rows", "context=control-de,cell=de,category=ORGANIZATION_UPDATE", base): 1,
		k("outboxctl_shards_stuck", "context=control,cell=de", base):                                1,
		k("outboxctl_shards_at_cap", "context=control,cell=de", base):                               1,
		k("outboxctl_shards_stuck", "context=control-de,cell=de", base):                             1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	for key := range got {
		if strings.Contains(key, "context=control-de") && strings.Contains(key, "cell=us") {
			t.Errorf("the --cell de context reports cell us: %s", key)
		}
	}
}

// TestLabelsAreCapped: a control table of 71 cells, 41 scopes and 151 categories (most of
// them unknown integers) makes at most each label's cap of values (the heaviest: the cell,
// scope and category of the deepest rows keep their names), the rest summed under
// "other", their number in outboxctl_label_values_folded, and no row lost from the sum.
func TestLabelsAreCapped(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	var rows []testdb.Row
	for i := range 150 {
		rows = append(rows, testdb.Row{Cell: fmt.Sprintf("c%03d", i%70), Scope: 100 + i%40, Shard: int64(i), Category: 1000 + i, Object: int64(i),
			ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)})
	}
	for i := range 10 {
		rows = append(rows, testdb.Row{Cell: "big", Scope: 0, Shard: 1, Category: 2, Object: int64(i)})
	}
	testdb.Insert(t, schema, query.ControlTable, rows...)
	src := source(schema, "control")
	src.Target.Silo = query.SiloControl
	e := New([]Source{src}, Options{})
	if err := e.CollectOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := values(t, e)
	distinct := map[string]map[string]bool{}
	total := 0.0
	for key, v := range got {
		if !strings.HasPrefix(key, "outboxctl_outbox_rows{") {
			continue
		}
		total += v
		for _, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(key, "outboxctl_outbox_rows{"), "}"), ",") {
			name, value, _ := strings.Cut(l, "=")
			if distinct[name] == nil {
				distinct[name] = map[string]bool{}
			}
			distinct[name][value] = true
		}
	}
	if total != 160 {
		t.Errorf("outboxctl_outbox_rows sums to %v, want the table's 160 rows", total)
	}
	base := "context=control,silo=control,table=sentry_controloutbox"
	for _, tc := range []struct {
		label, heaviest string
		max, folded     int
	}{{"cell", "big", 50, 21}, {"scope", "ORGANIZATION_SCOPE", 30, 11}, {"category", "ORGANIZATION_UPDATE", 100, 51}} {
		if n := len(distinct[tc.label]); n != tc.max+1 || !distinct[tc.label][OtherValue] || !distinct[tc.label][tc.heaviest] {
			t.Errorf("%s: %d values (want %d and other), other %v, %s %v", tc.label, n, tc.max, distinct[tc.label][OtherValue], tc.heaviest, distinct[tc.label][tc.heaviest])
		}
		if v, ok := got[k("outboxctl_label_values_folded", base, "label="+tc.label)]; !ok || v != float64(tc.folded) {
			t.Errorf("outboxctl_label_values_folded{label=%s} = %v (present %v), want %d", tc.label, v, ok, tc.folded)
		}
	}
	// The stuck shards are folded alike: 150 of them, counted once each.
	stuck := 0.0
	for key, v := range got {
		if strings.HasPrefix(key, "outboxctl_shards_stuck{") {
			stuck += v
		}
	}
	if stuck != 150 {
		t.Errorf("outboxctl_shards_stuck sums to %v, want 150", stuck)
	}
}
