package cmd_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// readQuestion is one question on-call asks, as the operators' guide answers it (guide, run
// as a DBA runs it in psql: simple protocol, the server's settings) and as outboxctl does:
// the statements its command runs (ours, on a connection with the command's session
// settings) and the command itself, the built binary from process start to exit.
type readQuestion struct {
	name  string
	guide string
	ours  query.Script
	args  []string
	// target says what the issue (#13) asks of this question, and met whether it is.
	target string
	met    func(m readMeasure) bool
}

type readMeasure struct{ guide, ours, command float64 }

// BenchmarkReadCommands is `make bench`'s table: every read command beside the guide's
// template for the same question, on the benchmark data set, alternating all three
// measurements per iteration so they share the machine's load, and one table of medians
// and ratios at the end (statement ratio = guide / outboxctl's statements; command ratio =
// guide / the whole command, process start included). The command connects with the test
// DSN (sslmode=disable: a TLS handshake would add ~8 ms to every command here, see
// docs/performance.md).
func BenchmarkReadCommands(b *testing.B) {
	testdb.EnsureBenchData(b)
	bin := benchBinary(b)
	dsn := testdb.DSN()
	s := testdb.BenchSchema
	cell := query.Target{Silo: query.SiloCell, Schema: s}
	control := query.Target{Silo: query.SiloControl, Schema: s}
	org := query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}
	hot := query.ShardKey{Scope: org, ID: fixture.DemoHotShard}
	ks := options.KillswitchStatement(s, query.OptionTable)
	ksControl := options.KillswitchStatement(s, query.ControlOptionTable)
	cats, err := query.Run(context.Background(), testdb.Pool(b), query.ShardCategories(cell, hot))
	if err != nil {
		b.Fatal(err)
	}
	depths, err := query.CategoryDepthSums(cell, cats)
	if err != nil {
		b.Fatal(err)
	}
	const member = 1 // an ORGANIZATION_MEMBER_UPDATE object of the hot organization
	atLeast := func(x float64) func(readMeasure) bool {
		return func(m readMeasure) bool { return m.guide/m.ours >= x }
	}
	questions := []readQuestion{
		{name: fmt.Sprintf("inspect shard organization %d (200k rows, 600 groups)", fixture.DemoHotShard),
			guide: fmt.Sprintf(`SELECT id, category, object_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = %d ORDER BY id DESC LIMIT 50`, s, fixture.DemoHotShard),
			ours: query.Script{query.ShardCategories(cell, hot), query.ShardStateGivenDepth(cell, hot, depths),
				query.ShardMessages(cell, hot, 50, false), ks},
			args:   []string{"inspect", "shard", "organization", fmt.Sprint(fixture.DemoHotShard)},
			target: "command ≤ 50 ms", met: func(m readMeasure) bool { return m.command <= 50 }},
		{name: "inspect category ORGANIZATION_MEMBER_UPDATE",
			guide:  fmt.Sprintf(`SELECT count(*) AS pending FROM %s.sentry_regionoutbox WHERE category = 3`, s),
			ours:   query.Script{query.CategoryDepth(cell, query.Enum{Value: 3, Name: "ORGANIZATION_MEMBER_UPDATE"})},
			args:   []string{"inspect", "category", "ORGANIZATION_MEMBER_UPDATE"},
			target: "statements ≥ 1×", met: atLeast(1)},
		{name: "depth", guide: fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox`, s),
			ours: query.Script{query.Depth(cell)}, args: []string{"depth"},
			target: "statements ≥ 0.67×", met: atLeast(1 / 1.5)},
		{name: "depth --estimate", guide: fmt.Sprintf(`SELECT count(*) FROM %s.sentry_regionoutbox`, s),
			ours: query.Script{query.DepthEstimate(cell)}, args: []string{"depth", "--estimate"},
			target: "statement < 5 ms", met: func(m readMeasure) bool { return m.ours < 5 }},
		{name: "shards --limit 10", guide: fmt.Sprintf(`SELECT shard_scope, shard_identifier, count(*) AS depth
FROM %s.sentry_regionoutbox GROUP BY shard_scope, shard_identifier ORDER BY depth DESC LIMIT 10`, s),
			ours: query.Script{query.TopShards(cell, query.ShardFilter{Limit: 10}), ks}, args: []string{"shards", "--limit", "10"},
			target: "statements ≥ 1×", met: atLeast(1)},
		{name: "shards --stuck", guide: fmt.Sprintf(`SELECT shard_scope, shard_identifier, category, count(*) AS depth,
    min(scheduled_for) AS next_attempt, min(date_added) AS oldest_message, max(date_added) AS newest_message
FROM %s.sentry_regionoutbox WHERE scheduled_for > NOW()
GROUP BY shard_scope, shard_identifier, category ORDER BY depth DESC LIMIT 20`, s),
			ours: query.Script{query.StuckShards(cell, query.ShardFilter{Limit: query.DefaultLimit}), ks}, args: []string{"shards", "--stuck"},
			target: "command ≥ 5×", met: func(m readMeasure) bool { return m.guide/m.command >= 5 }},
		{name: fmt.Sprintf("inspect object ORGANIZATION_MEMBER_UPDATE %d --shard %d", member, fixture.DemoHotShard),
			guide: fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE category = 3 AND object_identifier = %d ORDER BY id DESC LIMIT 20`, s, member),
			ours: query.Script{query.ObjectOutboxes(cell, query.ObjectLookup{Category: query.Enum{Value: 3, Name: "ORGANIZATION_MEMBER_UPDATE"},
				Scope: &org, ObjectID: member, Shard: ptr(int64(fixture.DemoHotShard))})},
			args:   []string{"inspect", "object", "ORGANIZATION_MEMBER_UPDATE", fmt.Sprint(member), "--shard", fmt.Sprint(fixture.DemoHotShard)},
			target: "statements ≥ 100×", met: atLeast(100)},
		{name: "inspect object ORGANIZATION_UPDATE 2 (shard inferred: the object is the organization)",
			guide: fmt.Sprintf(`SELECT id, shard_scope, shard_identifier, payload, scheduled_from, scheduled_for, date_added
FROM %s.sentry_regionoutbox WHERE category = 2 AND object_identifier = 2 ORDER BY id DESC LIMIT 20`, s),
			ours: query.Script{query.ObjectOutboxes(cell, query.ObjectLookup{Category: query.Enum{Value: 2, Name: "ORGANIZATION_UPDATE"},
				Scope: &org, ObjectID: 2, ShardFromObject: true})},
			args: []string{"inspect", "object", "ORGANIZATION_UPDATE", "2"}, target: "statements ≥ 50×", met: atLeast(50)},
		// Commands the guide has no template for: the whole command only.
		{name: "inspect message (the hot shard's head)", args: []string{"inspect", "message", fmt.Sprint(headID(b, cell, hot))},
			target: "—", met: func(readMeasure) bool { return true }},
		{name: "killswitch list", args: []string{"killswitch", "list"}, target: "—", met: func(readMeasure) bool { return true }},
		{name: "shards --stuck --silo control (4k rows)", guide: fmt.Sprintf(`SELECT region_name, shard_scope, shard_identifier, category, count(*) AS depth, min(scheduled_for) AS next_attempt
FROM %s.sentry_controloutbox WHERE scheduled_for > NOW()
GROUP BY region_name, shard_scope, shard_identifier, category ORDER BY depth DESC LIMIT 20`, s),
			ours: query.Script{query.StuckShards(control, query.ShardFilter{Limit: query.DefaultLimit}), ksControl},
			args: []string{"shards", "--stuck", "--silo", "control"}, target: "fixed cost ≤ 8 ms (command − statements)",
			met: func(m readMeasure) bool { return m.command-m.ours <= 8 }},
	}
	conn := testdb.CommandConn(b) // ours run as the command runs them (timeAsCommand)
	version := timeCommand(b, bin, "version")
	var versions []time.Duration
	times := make([][3][]time.Duration, len(questions))
	measure := func(i int, q readQuestion) {
		if q.guide != "" {
			times[i][0] = append(times[i][0], timeSQL(b, q.guide))
			times[i][1] = append(times[i][1], timeAsCommand(b, conn, q.ours))
		}
		times[i][2] = append(times[i][2], timeCommand(b, bin, append(q.args, "--dsn", dsn, "--schema", s)...)())
	}
	for i, q := range questions { // warm every path once
		measure(i, q)
		times[i] = [3][]time.Duration{}
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		versions = append(versions, version())
		for i, q := range questions {
			measure(i, q)
		}
	}
	b.StopTimer()
	var t strings.Builder
	fmt.Fprintf(&t, "\n%d iterations, medians; `outboxctl version` (process start alone): %.1f ms\n\n", b.N, ms(medianOf(versions)))
	t.WriteString("| question | guide | outboxctl statements | ratio | outboxctl command | ratio | target | met |\n|---|---|---|---|---|---|---|---|\n")
	for i, q := range questions {
		command := ms(medianOf(times[i][2]))
		if q.guide == "" {
			fmt.Fprintf(&t, "| %s | — | — | — | %.1f ms | — | — | — |\n", q.name, command)
			continue
		}
		m := readMeasure{ms(medianOf(times[i][0])), ms(medianOf(times[i][1])), command}
		met := "no"
		if q.met(m) {
			met = "yes"
		}
		fmt.Fprintf(&t, "| %s | %.1f ms | %.1f ms | %.2f× | %.1f ms | %.2f× | %s | %s |\n",
			q.name, m.guide, m.ours, m.guide/m.ours, m.command, m.guide/m.command, q.target, met)
	}
	// Printed, not logged: the testing package keeps only the first lines of a benchmark's
	// log. Printed once, by the run with the iterations asked for (-benchtime Nx).
	if finalRun(b) {
		fmt.Print(t.String())
	}
}

// finalRun says whether this run of the benchmark has the -benchtime Nx iterations (go test
// first runs every benchmark once with b.N = 1).
func finalRun(b *testing.B) bool {
	f := flag.Lookup("test.benchtime")
	if f == nil || !strings.HasSuffix(f.Value.String(), "x") {
		return true
	}
	n, err := strconv.Atoi(strings.TrimSuffix(f.Value.String(), "x"))
	return err != nil || b.N == n
}

func ptr[T any](v T) *T { return &v }

// headID is the id of shard k's lowest row.
func headID(b *testing.B, t query.Target, k query.ShardKey) int64 {
	b.Helper()
	var id int64
	err := testdb.Pool(b).QueryRow(context.Background(), fmt.Sprintf("SELECT min(id) FROM %s WHERE shard_scope = $1 AND shard_identifier = $2", t.From()),
		k.Scope.Value, k.ID).Scan(&id)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

// timeCommand returns a function that runs the binary with args once and returns its wall
// time, failing the benchmark if it exits non-zero.
func timeCommand(b *testing.B, bin string, args ...string) func() time.Duration {
	return func() time.Duration {
		c := execCommand(bin, args...)
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", bin, args, err, out)
		}
		return time.Since(start)
	}
}

// timeScriptOn runs each statement of s, bound as outboxctl binds it, on q.
func timeScriptOn(b *testing.B, q query.Querier, s query.Script) time.Duration {
	b.Helper()
	var d time.Duration
	for _, st := range s {
		sql, args, err := st.Bind()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := query.RunBound(context.Background(), q, st.Name, sql, append([]any{pgx.QueryExecModeExec}, args...)); err != nil {
			b.Fatal(err)
		}
		d += time.Since(start)
	}
	return d
}
