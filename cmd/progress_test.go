package cmd_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// runOn runs outboxctl in-process with stderr a terminal or a pipe.
func runOn(t *testing.T, errTTY bool, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := render.Test()
	io.ErrTTY = errTTY
	code := cmd.Main(context.Background(), append([]string{"--dsn", testdb.DSN()}, args...), io)
	return code, out.String(), errOut.String()
}

// TestProgressLineOnTerminalOnly: demo seed and drain draw a live line on a terminal's
// stderr (done/total and percentage at once, then a summary with the rate) and write
// nothing of it to a pipe.
func TestProgressLineOnTerminalOnly(t *testing.T) {
	t.Parallel()
	testdb.Pool(t)
	summary := func(label string, n int) *regexp.Regexp {
		return regexp.MustCompile(`\r` + label + ` ` + strconv.Itoa(n) + ` in [0-9.]+m?s \([0-9]+\.[0-9]/s\)\x1b\[K\n`)
	}
	for _, tty := range []bool{true, false} {
		schema := testdb.NewSchemaName()
		t.Cleanup(func() { testdb.Drop(t, schema) })
		code, out, errOut := runOn(t, tty, "--schema", schema, "demo", "seed", "--rows", "1000", "--shards", "100", "--yes")
		if code != cmd.ExitOK || out != "" {
			t.Fatalf("demo seed (tty %v): exit %d, stdout %q, stderr %q", tty, code, out, errOut)
		}
		last := "seeded schema " + schema + "; try: outboxctl --schema " + schema + " shards --stuck\n"
		if !strings.HasSuffix(errOut, last) {
			t.Errorf("demo seed (tty %v): stderr %q", tty, errOut)
		}
		if tty != strings.Contains(errOut, "\rseeded rows 0/1050  0.0%  0.0/s\x1b[K") || tty != summary("seeded rows", 1050).MatchString(errOut) {
			t.Errorf("demo seed (tty %v): progress line wrong in %q", tty, errOut)
		}
		if !tty && strings.ContainsAny(errOut, "\r\x1b") {
			t.Errorf("demo seed on a pipe wrote terminal controls: %q", errOut)
		}
	}

	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB})
	for i := range 3 {
		testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 2, Object: int64(i)})
	}
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	code, _, errOut := runOn(t, true, "--schema", schema, "drain", "organization", "42", "--handler", "discard", "--archive", archive, "--reason", "t", "--yes")
	if code != cmd.ExitOK || !strings.Contains(errOut, "\rdelivered 0/~3  0.0%  0.0/s\x1b[K") || !summary("delivered", 3).MatchString(errOut) {
		t.Errorf("drain: exit %d, stderr %q", code, errOut)
	}
	// The claim (one UPDATE of every row of the shard: tens of seconds on a 2M-row shard)
	// has its own line from its first instant, elapsed time and what it does, then a
	// summary line, before the delivered line.
	claim := "drain: claiming ORGANIZATION_SCOPE/42 (one UPDATE of its ~3 rows)"
	first := regexp.MustCompile(`\r` + regexp.QuoteMeta(claim) + `  [0-9.]+m?s\x1b\[K`)
	done := regexp.MustCompile(`\r` + regexp.QuoteMeta(claim) + `: done in [0-9.]+m?s\x1b\[K\n\rdelivered 0/~3`)
	if !first.MatchString(errOut) || !done.MatchString(errOut) || strings.Index(errOut, claim) > strings.Index(errOut, "\rdelivered") {
		t.Errorf("drain: no claim line before the delivered line in %q", errOut)
	}
	// On a pipe: neither line, no terminal controls.
	for i := range 3 {
		testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 43, Category: 2, Object: int64(i)})
	}
	code, _, errOut = runOn(t, false, "--schema", schema, "drain", "organization", "43", "--handler", "discard", "--archive", filepath.Join(t.TempDir(), "b.jsonl"), "--reason", "t", "--yes")
	if code != cmd.ExitOK || strings.Contains(errOut, "claiming") || strings.ContainsAny(errOut, "\r\x1b") {
		t.Errorf("drain on a pipe: exit %d, stderr %q", code, errOut)
	}
}
