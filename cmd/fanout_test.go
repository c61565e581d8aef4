package cmd_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// closedPort returns a local address nothing listens on: a context there is unreachable.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// cells makes two real cells (schemas us and de on the test server, seeded) and a config
// file naming them, a context whose server is gone, and one whose schema has no tables.
type cells struct {
	us, de, config, gone string
}

func newCells(t *testing.T) cells {
	t.Helper()
	c := cells{us: testdb.Schema(t, fixture.Options{}), de: testdb.Schema(t, fixture.Options{})}
	testdb.Insert(t, c.us, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 7}, testdb.Row{Scope: 0, Shard: 42, Category: 3, Object: 8})
	testdb.Insert(t, c.de, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 1}, testdb.Row{Scope: 0, Shard: 9, Category: 3, Object: 2},
		testdb.Row{Scope: 0, Shard: 9, Category: 3, Object: 3})
	dsn := testdb.DSN()
	c.gone = closedPort(t)
	c.config = writeConfig(t, 0o600, fmt.Sprintf(`contexts:
  us:
    dsn: %[1]s
    schema: %[2]s
  de:
    dsn: %[1]s
    schema: %[3]s
  gone:
    dsn: postgres://postgres@%[4]s/test?sslmode=disable
    schema: %[2]s
  empty:
    dsn: %[1]s
    schema: outboxctl_test_no_such_schema
`, dsn, c.us, c.de, c.gone))
	return c
}

func writeConfig(t testing.TB, mode os.FileMode, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// runConfig runs outboxctl with OUTBOXCTL_CONFIG set (and nothing else in the environment
// but env, given as KEY=VALUE).
func runConfig(config string, args []string, env ...string) (code int, stdout, stderr string) {
	io, out, errOut := render.Test()
	vars := map[string]string{"OUTBOXCTL_CONFIG": config}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	io.Getenv = func(k string) string { return vars[k] }
	code = cmd.Main(context.Background(), args, io)
	return code, out.String(), errOut.String()
}

func wantRun(t *testing.T, config string, code int, stdout, stderr string, args ...string) {
	t.Helper()
	wantRunEnv(t, config, nil, code, stdout, stderr, args...)
}

func wantRunEnv(t *testing.T, config string, env []string, code int, stdout, stderr string, args ...string) {
	t.Helper()
	gotCode, gotOut, gotErr := runConfig(config, args, env...)
	if gotCode != code || gotOut != stdout || gotErr != stderr {
		t.Errorf("outboxctl %s\n exit %d, want %d\n stdout:\n%s\n want:\n%s\n stderr:\n%s\n want:\n%s",
			strings.Join(args, " "), gotCode, code, gotOut, stdout, gotErr, stderr)
	}
}

func TestFanOutMergesRowsTaggedByContext(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	// depth sorts by category, totals first: the contexts' rows interleave.
	wantRun(t, c.config, cmd.ExitOK, `context,category,category_name,depth
us,,(total),2
de,,(total),3
de,2,ORGANIZATION_UPDATE,1
us,3,ORGANIZATION_MEMBER_UPDATE,2
de,3,ORGANIZATION_MEMBER_UPDATE,2
`, "", "--context", "us,de", "depth", "-o", "csv")
	// JSON: a context field first in every object; the order of --context is the tie-break.
	wantRun(t, c.config, cmd.ExitOK, `[
  {
    "context": "de",
    "category": null,
    "category_name": "(total)",
    "depth": 3
  },
  {
    "context": "us",
    "category": null,
    "category_name": "(total)",
    "depth": 2
  },
  {
    "context": "de",
    "category": 2,
    "category_name": "ORGANIZATION_UPDATE",
    "depth": 1
  },
  {
    "context": "de",
    "category": 3,
    "category_name": "ORGANIZATION_MEMBER_UPDATE",
    "depth": 2
  },
  {
    "context": "us",
    "category": 3,
    "category_name": "ORGANIZATION_MEMBER_UPDATE",
    "depth": 2
  }
]
`, "", "--context", "de,us", "depth", "-o", "json")
	// shards sorts by depth, deepest first, whichever context a shard is in.
	code, out, errOut := runConfig(c.config, []string{"--context", "us,de", "shards", "-o", "csv"})
	if got := firstColumns(out, 5); code != cmd.ExitOK || errOut != "" || got != `context,shard_scope,scope,shard_identifier,depth
de,0,ORGANIZATION_SCOPE,9,3
us,0,ORGANIZATION_SCOPE,42,2
` {
		t.Errorf("shards over us,de: exit %d, stderr %q, rows:\n%s", code, errOut, got)
	}
	// inspect message: one card per context becomes one row per context.
	code, out, _ = runConfig(c.config, []string{"--context", "us,de", "inspect", "message", "1", "-o", "csv"})
	if got := firstColumns(out, 8); code != cmd.ExitOK || got != `context,id,shard_scope,scope,shard_identifier,category,category_name,object_identifier
us,1,0,ORGANIZATION_SCOPE,42,3,ORGANIZATION_MEMBER_UPDATE,7
de,1,0,ORGANIZATION_SCOPE,9,2,ORGANIZATION_UPDATE,1
` {
		t.Errorf("inspect message over us,de: exit %d, rows:\n%s", code, got)
	}
}

// firstColumns keeps the first n comma-separated columns of every CSV line (the rest carry
// timestamps of the seeding).
func firstColumns(csv string, n int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(csv, "\n") {
		if line == "" {
			continue
		}
		b.WriteString(strings.Join(strings.SplitN(strings.TrimSuffix(line, "\n"), ",", n+1)[:n], ",") + "\n")
	}
	return b.String()
}

func TestFanOutPartialResult(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	gone := "Error: context gone: gone: cannot reach PostgreSQL at " + c.gone + ": connection refused; check that the server is running and --dsn / PGHOST / PGPORT point at it\n"
	empty := "Error: context gone: empty: no outbox table sentry_regionoutbox in schema outboxctl_test_no_such_schema; this does not look like Sentry's database: check --dsn, or point at the tables with --schema or --table\n"
	// The contexts that answered print their rows; each failed one gets its line; exit 6.
	wantRun(t, c.config, cmd.ExitPartial, `context,category,category_name,depth
de,,(total),3
us,,(total),2
de,2,ORGANIZATION_UPDATE,1
de,3,ORGANIZATION_MEMBER_UPDATE,2
us,3,ORGANIZATION_MEMBER_UPDATE,2
`, empty+gone, "--all-contexts", "depth", "-o", "csv")
	// Exit 6 outranks a verdict of the contexts that answered.
	code, _, errOut := runConfig(c.config, []string{"--context", "us,gone", "shards", "--fail-if-depth", "1", "-o", "csv"})
	if code != cmd.ExitPartial || errOut != gone {
		t.Errorf("shards --fail-if-depth over us,gone: exit %d, stderr %q", code, errOut)
	}
	// Nothing answered: exit 1, nothing on stdout.
	wantRun(t, c.config, cmd.ExitError, "", gone+empty, "--context", "gone,empty", "depth", "-o", "csv")
}

func TestFanOutVerdictsCombine(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	for _, tt := range []struct {
		limit, stderr string
		code          int
	}{
		{"3", "", cmd.ExitOK},
		{"2", "Error: context de: shard 0/9 holds 3 rows, more than --fail-if-depth 2\n", cmd.ExitThreshold},
		{"1", "Error: context us: shard 0/42 holds 2 rows, more than --fail-if-depth 1\n", cmd.ExitThreshold},
	} {
		code, out, errOut := runConfig(c.config, []string{"--context", "us,de", "shards", "--fail-if-depth", tt.limit, "-o", "csv"})
		if code != tt.code || errOut != tt.stderr || strings.Count(out, "\n") != 3 {
			t.Errorf("--fail-if-depth %s: exit %d (want %d), stderr %q, stdout:\n%s", tt.limit, code, tt.code, errOut, out)
		}
	}
}

func TestContextListsRefusedOutsideFanOutReads(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	list := "Error: a command that changes a database takes exactly one context, got 2 (us,de)\nTry: run the command once per context, e.g. --context us\n"
	wantRun(t, c.config, cmd.ExitUsage, "", list, "--context", "us,de", "killswitch", "add", "organization", "42", "--reason", "test", "--yes")
	wantRun(t, c.config, cmd.ExitUsage, "", list, "--context", "us,de", "compact", "organization", "42", "--yes")
	wantRunEnv(t, c.config, []string{"OUTBOXCTL_CONTEXT=us,de"}, cmd.ExitUsage, "",
		"Error: a command that changes a database takes exactly one context, got 2 (us,de)\nTry: run the command once per context, e.g. --context us\n",
		"skip", "1", "--yes")
	wantRun(t, c.config, cmd.ExitUsage, "",
		"Error: a command that changes a database takes exactly one context, got 4 (--all-contexts)\nTry: run the command once per context, e.g. --context de\n",
		"--all-contexts", "drain", "organization", "42", "--yes")
	wantRun(t, c.config, cmd.ExitUsage, "",
		"Error: inspect shard streams one context's rows and takes one context, got 2\nTry: outboxctl inspect shard organization 42 --context us\n",
		"--context", "us,de", "inspect", "shard", "organization", "42")
	wantRun(t, c.config, cmd.ExitUsage, "",
		"Error: --print-sql prints one context's SQL, and 2 contexts are selected: pass one --context\nTry: outboxctl depth --print-sql --context us\n",
		"--context", "us,de", "depth", "--print-sql")
}

func TestContextSettingsUnderFlags(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	de := "category,category_name,depth\n,(total),3\n2,ORGANIZATION_UPDATE,1\n3,ORGANIZATION_MEMBER_UPDATE,2\n"
	us := "category,category_name,depth\n,(total),2\n3,ORGANIZATION_MEMBER_UPDATE,2\n"
	wantRun(t, c.config, cmd.ExitOK, de, "", "--context", "de", "depth", "-o", "csv")
	wantRunEnv(t, c.config, []string{"OUTBOXCTL_CONTEXT=de"}, cmd.ExitOK, de, "", "depth", "-o", "csv")
	// A flag wins over the context.
	wantRun(t, c.config, cmd.ExitOK, us, "", "--context", "de", "--schema", c.us, "depth", "-o", "csv")
	// context show takes --context as its NAME.
	if code, out, _ := runConfig(c.config, []string{"--context", "de", "context", "show", "-o", "csv"}); code != cmd.ExitOK ||
		!strings.Contains(out, "\nschema,"+c.de+",\"context de, line 7\"\n") {
		t.Errorf("--context de context show: exit %d\n%s", code, out)
	}
	// A context that names no database the mutation can reach fails like --dsn would.
	wantRun(t, c.config, cmd.ExitError, "",
		"Error: cannot reach PostgreSQL at "+c.gone+": connection refused; check that the server is running and --dsn / PGHOST / PGPORT point at it\n",
		"--context", "gone", "killswitch", "add", "organization", "42", "--reason", "test", "--yes")
}

func TestContextReplicaTakesReadsNeverWrites(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	config := writeConfig(t, 0o600, fmt.Sprintf(`contexts:
  us:
    dsn: postgres://postgres@%[1]s/test?sslmode=disable
    replica-dsn: %[2]s
    schema: %[3]s
`, c.gone, testdb.DSN(), c.us))
	wantRun(t, config, cmd.ExitOK, "category,category_name,depth\n,(total),2\n3,ORGANIZATION_MEMBER_UPDATE,2\n", "", "--context", "us", "depth", "-o", "csv")
	// The mutation goes to dsn, which is down: it never falls back to the replica.
	wantRun(t, config, cmd.ExitError, "",
		"Error: cannot reach PostgreSQL at "+c.gone+": connection refused; check that the server is running and --dsn / PGHOST / PGPORT point at it\n",
		"--context", "us", "killswitch", "add", "organization", "42", "--reason", "test", "--yes")
}

func TestContextFileModeRuleThroughCommand(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, 0o644, "current-context: us\ncontexts:\n  us:\n    dsn: postgres://sentry:hunter2@127.0.0.1:5432/test\n")
	code, out, errOut := runConfig(config, []string{"depth", "-o", "csv"})
	want := "Error: " + config + ":4: context \"us\": dsn holds a password, and the file can be read by others (mode 0644): run chmod 600 " + config +
		", or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)\nTry: chmod 600 " + config + "\n"
	if code != cmd.ExitUsage || out != "" || errOut != want {
		t.Errorf("depth with a readable config holding a password: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}
	// A command that never connects does not read the file.
	if code, out, _ := runConfig(config, []string{"version"}); code != cmd.ExitOK || out == "" {
		t.Errorf("version with a bad config file: exit %d, stdout %q", code, out)
	}
}

func TestFanOutDoctorWorstSeverityFirst(t *testing.T) {
	t.Parallel()
	c := newCells(t)
	usCode, _, _ := runConfig(c.config, []string{"--context", "us", "doctor", "-o", "csv"})
	deCode, _, _ := runConfig(c.config, []string{"--context", "de", "doctor", "-o", "csv"})
	code, out, _ := runConfig(c.config, []string{"--context", "us,de", "doctor", "-o", "csv"})
	rank := map[int]int{cmd.ExitOK: 0, cmd.ExitWarn: 1, cmd.ExitCritical: 2}
	want := usCode
	if rank[deCode] > rank[usCode] {
		want = deCode
	}
	if code != want {
		t.Errorf("doctor over us,de exits %d; us alone %d, de alone %d", code, usCode, deCode)
	}
	sev := map[string]int{"crit": 0, "warn": 1, "ok": 2}
	lines := strings.Split(strings.TrimSpace(firstColumns(out, 3)), "\n")
	seen, last := map[string]bool{}, 0
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		seen[f[0]] = true
		if sev[f[2]] < last {
			t.Errorf("findings not worst first:\n%s", out)
			break
		}
		last = sev[f[2]]
	}
	if lines[0] != "context,check,severity" || !seen["us"] || !seen["de"] {
		t.Errorf("findings not tagged by both contexts:\n%s", out)
	}
}
