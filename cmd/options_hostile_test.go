package cmd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// run calls the real entry point in-process and returns exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	io, out, errOut := render.Test()
	code := cmd.Main(context.Background(), args, io)
	return code, out.String(), errOut.String()
}

// TestHostileNamesAreRefused: a table, --coded name or Redis key prefix with a control
// character is a usage error (exit 2) of one line, and nothing is printed: a newline in a
// printed `-- redis-cli GET` comment would start a psql command of its own.
func TestHostileNamesAreRefused(t *testing.T) {
	t.Parallel()
	evil := "x\n\\! touch pwned2.txt\n--"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill", "status", "--print-sql", "--redis-key-prefix", evil},
			"Error: `--redis-key-prefix` name \"x\\n\\\\! touch pwned2.txt\\n--\" holds a control character\n"},
		{[]string{"backfill", "status", "sentry_" + evil, "--coded", "sentry_" + evil + "=1", "--print-sql"},
			"Error: invalid `--coded`: table name \"sentry_x\\n\\\\! touch pwned2.txt\\n--\" holds a control character\n"},
		{[]string{"backfill", "status", "sentry_" + evil, "--print-sql"},
			"Error: table name \"sentry_x\\n\\\\! touch pwned2.txt\\n--\" holds a control character\n"},
		{[]string{"backfill", "status", "sentry_organization\r", "--print-sql"},
			"Error: table name \"sentry_organization\\r\" holds a control character\n"},
		{[]string{"killswitch", "gate", "t" + evil, "--coded", "t" + evil + "=2", "--version", "1", "--print-sql"},
			"Error: invalid `--coded`: table name \"tx\\n\\\\! touch pwned2.txt\\n--\" holds a control character\n"},
		{[]string{"killswitch", "list", "--coded", "a\u2028b=1", "--print-sql"},
			"Error: invalid `--coded`: table name \"a\\u2028b\" holds a control character\n"},
	} {
		code, out, errOut := run(tt.args...)
		firstLine, _, _ := strings.Cut(errOut, "\n")
		if code != cmd.ExitUsage || out != "" || firstLine+"\n" != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, no stdout, %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// TestPrintedRedisCommentsStayComments: a prefix without control characters but with
// spaces, quotes and backslashes still gives one comment line per key, each a single
// redis-cli argument.
func TestPrintedRedisCommentsStayComments(t *testing.T) {
	t.Parallel()
	code, out, errOut := run("backfill", "status", "sentry_organization", "--print-sql", "--redis-key-prefix", `p x"'\ü:`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `-- redis-cli GET "p x\"'\\\xc3\xbc:outbox_backfill.sentry_organization"` + "\n"
	if !strings.HasSuffix(out, "-- Before September 2026 the cursors live in Redis; read them with:\n"+want) {
		t.Fatalf("printed script ends:\n%s", out[max(0, len(out)-300):])
	}
}

// TestBackfillReportsLockTimeout: with sentry_option locked, backfill status reports the lock
// timeout it met (exit 1), not the "transaction is aborted" error of the statement after it.
func TestBackfillReportsLockTimeout(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // only holds the lock
	if _, err := tx.Exec(ctx, "LOCK TABLE "+schema+".sentry_option IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run("--dsn", testdb.DSN(), "--schema", schema, "--lock-timeout", "200ms", "backfill", "status", "sentry_organization", "--store", "postgres")
	if code != cmd.ExitError || strings.Contains(errOut, "25P02") || !strings.Contains(errOut, "lock") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the lock timeout", code, errOut)
	}
	t.Logf("stderr: %s", errOut)
}
