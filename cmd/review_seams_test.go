package cmd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDemoSeedTryLineIsQuoted: demo seed's try line carries the operator's schema name as one
// shell word; a name holding $(…) printed bare ran the command when the line was pasted.
func TestDemoSeedTryLineIsQuoted(t *testing.T) {
	pool := testdb.Pool(t)
	// Unique per run: two test binaries at once (two worktrees, CI beside a session) must not
	// drop each other's schema.
	schema := fmt.Sprintf("zz_try_$(touch pwned)_%d_seed", time.Now().UnixNano())
	drop := func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Fatal(err)
		}
	}
	drop()
	t.Cleanup(drop)
	io, _, errOut := render.Test()
	code := cmd.Main(context.Background(), []string{"--dsn", testdb.DSN(), "demo", "seed", "--schema", schema, "--rows", "1000", "--yes"}, io)
	if code != 0 {
		t.Fatalf("demo seed: exit %d: %s", code, errOut)
	}
	want := "try: outboxctl --schema '" + schema + "' shards --stuck\n"
	if !strings.HasSuffix(errOut.String(), want) {
		t.Fatalf("stderr ends %q, want %q", errOut.String(), want)
	}
}

// TestArgumentsWithSelectorsTryTheSingleForm: a repair given its arguments and selector flags
// suggests the same command line without the selectors (keeping --schema), which runs; it
// used to suggest `skip --stuck --scope organization`, which exits 2 (skip's bulk form needs
// --category) and dropped --schema.
func TestArgumentsWithSelectorsTryTheSingleForm(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	_, errOut := mustRun(t, cmd.ExitUsage, schema, "skip", "5", "--stuck", "--scope", "organization", "--min-depth=3")
	want := "Try: outboxctl --dsn"
	if strings.Contains(errOut, want) {
		t.Fatalf("the Try line keeps --dsn: %s", errOut)
	}
	if !strings.Contains(errOut, "Try: outboxctl --schema "+schema+" skip 5\n") {
		t.Fatalf("stderr = %s", errOut)
	}
}

// TestMutationRefusesUnknownJSONFieldBeforeWriting: a misspelt --json field on a mutation is
// a usage error before anything is changed (it used to be found once the document was
// printed, after the option write had committed).
func TestMutationRefusesUnknownJSONFieldBeforeWriting(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	read := func() string {
		_, out, _ := runCLI(t, schema, "killswitch", "list", "-o", "json")
		return out
	}
	before := read()
	_, errOut := mustRun(t, cmd.ExitUsage, schema, "killswitch", "add", "organization", "5", "--json", "nosuch", "--yes", "--reason", "x")
	if !strings.Contains(errOut, "unknown field for `--json`: nosuch") || strings.Contains(errOut, `"audit"`) {
		t.Fatalf("stderr = %s", errOut)
	}
	if after := read(); after != before {
		t.Fatalf("the option changed:\nbefore %s\nafter %s", before, after)
	}
}

// TestBareTryKeepsTheTarget: a usage error whose Try is a bare command line (the selector
// validation's `outboxctl shards --min-depth 100`) gets the invocation's --schema, so pasted
// it reads the schema the mistaken line named, not the default search path; a Try built from
// the invocation's own words (it names --schema already) is printed as it was.
func TestBareTryKeepsTheTarget(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	_, errOut := mustRun(t, cmd.ExitUsage, schema, "shards", "--min-depth", "-1")
	if strings.Contains(errOut, "Try: outboxctl --dsn") {
		t.Fatalf("the Try names the DSN:\n%s", errOut)
	}
	if want := "Try: outboxctl --schema " + schema + " shards --min-depth 100\n"; !strings.Contains(errOut, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, errOut)
	}
	_, errOut = mustRun(t, cmd.ExitUsage, schema, "skip", "5", "--stuck")
	if n := strings.Count(errOut, "--schema"); n != 1 {
		t.Fatalf("a Try from the invocation's words names --schema %d times:\n%s", n, errOut)
	}
}
