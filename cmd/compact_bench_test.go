package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// compactRows is BenchmarkCompactHotShard's shard: #40's 1M-row hot shard (OUTBOXCTL_COMPACT_ROWS
// sets another size).
func compactRows() int {
	if n, err := strconv.Atoi(os.Getenv("OUTBOXCTL_COMPACT_ROWS")); err == nil && n >= 1000 {
		return n
	}
	return 1_000_000
}

var progressCount = regexp.MustCompile(`compacted ([0-9]+)/`)

// timedRun runs the binary with a forced terminal (so the progress line draws) and returns
// its wall time, the time to the progress line's first draw (the plan read) and the longest
// time between two draws of a changed count after it.
func timedRun(b *testing.B, bin string, args ...string) (wall, plan, gap time.Duration) {
	b.Helper()
	c := exec.Command(bin, append([]string{"--dsn", testdb.DSN()}, args...)...)
	c.Env = append(os.Environ(), "OUTBOXCTL_FORCE_TTY=1", "COLUMNS=200")
	stderr, err := c.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	c.Stdout = &out
	start := time.Now()
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	last, seen := start, ""
	var tail bytes.Buffer
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) { // lines end in \r or \n
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		tail.Write(sc.Bytes())
		tail.WriteByte('\n')
		m := progressCount.FindSubmatch(sc.Bytes())
		switch {
		case m == nil || string(m[1]) == seen:
		case seen == "": // the line's first draw (0): the plan was read and confirmed
			plan, last, seen = time.Since(start), time.Now(), string(m[1])
		default:
			gap, last, seen = max(gap, time.Since(last)), time.Now(), string(m[1])
		}
	}
	err = c.Wait()
	wall = time.Since(start)
	if err != nil {
		b.Fatalf("%v\n%s", err, tail.Bytes()[max(0, tail.Len()-3000):])
	}
	return wall, plan, gap
}

// BenchmarkCompactHotShard is #40's compact of a 1M-row hot shard (300 coalesce groups,
// payloads of ~600 bytes), end to end with the binary: compact into a compressed archive
// (.jsonl.zst, the default's format), restore it, then the same into a plain one (.jsonl)
// and restore that. It reports each run's seconds, the archives' sizes, and the longest time
// the compact's progress line went without a new count (#40: at least one every 2 s).
//
//	go test ./cmd -run '^$' -bench CompactHotShard -benchtime 1x -timeout 60m
func BenchmarkCompactHotShard(b *testing.B) {
	bin := sharedBinary(b)
	n := compactRows()
	for range b.N {
		b.StopTimer()
		schema := testdb.Schema(b, fixture.Options{})
		tbl := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
		ctx := context.Background()
		if _, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s
			(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
			SELECT 0, 1, 3, g %% 300, json_build_object('organization_id', 1, 'user_id', g %% 977, 'email', 'user' || g || '@example.com',
			       'role', 'member', 'flags', json_build_object('sso:linked', true), 'token', md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text), 'note', repeat('x', 300))::jsonb,
			       now(), now() + interval '1 hour', now()
			  FROM generate_series(1, %d) g`, tbl, n)); err != nil {
			b.Fatal(err)
		}
		if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+tbl); err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		b.StartTimer()
		for _, name := range []string{"a.jsonl.zst", "a.jsonl"} {
			path := filepath.Join(dir, name)
			wall, plan, gap := timedRun(b, bin, "--schema", schema, "compact", "organization", "1", "--archive", path, "--reason", "bench", "--yes", "--keep-backoff")
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			restore, _, _ := timedRun(b, bin, "--schema", schema, "restore", path, "--all", "--yes")
			if left := rowsLeft(b, schema); left != n {
				b.Fatalf("after restore: %d rows, want %d", left, n)
			}
			kind := map[string]string{"a.jsonl.zst": "zst", "a.jsonl": "plain"}[name]
			b.ReportMetric(wall.Seconds(), "compact-"+kind+"-s")
			b.ReportMetric(plan.Seconds(), "compact-"+kind+"-plan-s")
			b.ReportMetric(gap.Seconds(), "compact-"+kind+"-max-progress-gap-s")
			b.ReportMetric(float64(st.Size())/1e6, "archive-"+kind+"-MB")
			b.ReportMetric(restore.Seconds(), "restore-"+kind+"-s")
		}
	}
}
