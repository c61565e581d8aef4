package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// hostileReasons are the --reason values of issue #10: each tries to leave the SQL comment
// it is written into and run SQL (the DELETE on the canary), or to reach psql's
// meta-command parser (\! runs a shell, which would create MARKER), or to put raw control
// bytes on the DBA's terminal.
var hostileReasons = []string{ //nolint:gochecknoglobals // test table
	"/*/ WITH x AS (DELETE FROM canary WHERE id <= 10 RETURNING 1) UPDATE sentry_regionoutbox o --",
	"/*/ WITH x AS (DELETE FROM canary WHERE id <= 10 RETURNING 1) INSERT INTO sentry_option (key, value, last_updated, last_updated_by) --",
	"/*/ \\! touch MARKER #",
	"*/*",
	"*/ ; DELETE FROM canary; /*",
	"INC-1\n\\! touch MARKER",
	"INC-1\r\\! touch MARKER\n;DELETE FROM canary;",
	"INC-1\u2028\\! touch MARKER",
	"\x1b]0;pwned\x07\x1b[2K\x1b[1A",
	"'; DELETE FROM canary; --",
}

// hostileSchema is a schema name that is all quote, comment and statement syntax; it holds
// no control character, which ValidateIdent refuses.
const hostileSchema = `o'x"; DELETE FROM canary; --/*`

// injectionCase is one mutation whose --print-sql output is piped into psql. The printed
// statements must run as they are (psql exits 0) and do exactly what check says.
type injectionCase struct {
	name  string
	args  []string // outboxctl arguments; --print-sql, --schema and --reason are added
	setup string   // SQL run first, with S standing for the quoted schema
	check string   // a query whose text result proves the intended statements ran
	want  string
}

// injectionCases covers the mutations that print SQL with a reason. (restore prints SQL
// from an archive file, whose text is tested in cmd/archive_test.go; backfill status
// refuses a key prefix or table name with a control character, backfill_hostile.txtar.)
var injectionCases = []injectionCase{ //nolint:gochecknoglobals // test table
	{
		name:  "reschedule",
		args:  []string{"reschedule", "organization", "5", "--yes"},
		setup: "INSERT INTO S.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for) VALUES (0, 5, 2, 5, now(), now() + interval '1 hour')",
		check: "SELECT scheduled_for::date::text FROM S.sentry_regionoutbox WHERE shard_identifier = 5",
		want:  "2016-08-01",
	},
	{
		name:  "killswitch-add",
		args:  []string{"killswitch", "add", "organization", "5", "7", "--yes"},
		check: "SELECT value::text FROM S.sentry_option WHERE key = 'hybrid_cloud.authentication.disabled_organization_shards'",
		want:  "[5, 7]",
	},
	{
		name:  "killswitch-remove",
		args:  []string{"killswitch", "remove", "organization", "5", "--yes"},
		setup: "INSERT INTO S.sentry_option (key, value, last_updated) VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[5, 9]', now())",
		check: "SELECT value::text FROM S.sentry_option WHERE key = 'hybrid_cloud.authentication.disabled_organization_shards'",
		want:  "[9]",
	},
	{
		name:  "killswitch-gate",
		args:  []string{"killswitch", "gate", "sentry_organization", "--version", "1", "--yes"},
		check: "SELECT value::text FROM S.sentry_option WHERE key = 'outbox_replication.sentry_organization.replication_version'",
		want:  "1",
	},
	{
		// compact prints what it would archive and its DELETE commented out: nothing changes.
		name:  "compact",
		args:  []string{"compact", "organization", "5", "--yes"},
		setup: "INSERT INTO S.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, payload) SELECT 0, 5, 2, 5, now(), '2016-08-01', '{}' FROM generate_series(1, 3)",
		check: "SELECT count(*)::text FROM S.sentry_regionoutbox WHERE shard_identifier = 5",
		want:  "3",
	},
	{
		name:  "skip",
		args:  []string{"skip", "999999", "--yes"},
		setup: "INSERT INTO S.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, payload) VALUES (0, 5, 2, 5, now(), '2016-08-01', '{}')",
		check: "SELECT count(*)::text FROM S.sentry_regionoutbox WHERE shard_identifier = 5",
		want:  "1",
	},
	{
		name:  "drain",
		args:  []string{"drain", "organization", "5", "--handler", "discard", "--yes"},
		setup: "INSERT INTO S.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, payload) VALUES (0, 5, 2, 5, now(), '2016-08-01', '{\"evil\": \"\\u001b]0;x\\u0007 */ \\\\! touch MARKER\"}')",
		// Run as printed, the drain script only reads: the message stays.
		check: "SELECT count(*)::text FROM S.sentry_regionoutbox WHERE shard_identifier = 5",
		want:  "1",
	},
}

// TestPrintedSQLKeepsHostileInputAsData runs every case with every hostile reason, in a
// schema whose name is hostile too, against the real server through real psql. A canary
// table (which the search_path makes reachable unqualified, as an attacker would hope)
// must keep its 20 rows, psql must create no file (a shell it ran would), and the case's
// own statements must have done their work.
func TestPrintedSQLKeepsHostileInputAsData(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	pool := testdb.Pool(t)
	for ci, tc := range injectionCases {
		for i, reason := range hostileReasons {
			// make test/race (-short) runs every reason once, the cases in turn, so every case
			// and every reason still runs there: the cross product only repeats make test's
			// (the printing is not concurrent), and each subtest costs a schema of Sentry's
			// tables (100 s of the race pass's cmd).
			once := i%len(injectionCases) == ci || (ci >= len(hostileReasons) && i == ci%len(hostileReasons))
			if testing.Short() && !once {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", tc.name, i), func(t *testing.T) {
				schema := hostileSchema + testdb.NewSchemaName()[len("outboxctl_test_"):]
				q := pgx.Identifier{schema}.Sanitize()
				ctx := context.Background()
				if err := fixture.Create(ctx, pool, schema, fixture.Options{}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA "+q+" CASCADE") })
				mustExec(t, "CREATE TABLE "+q+".canary AS SELECT generate_series(1, 20) AS id")
				if tc.setup != "" {
					mustExec(t, strings.ReplaceAll(tc.setup, "S.", q+"."))
				}
				script := printSQL(t, append(tc.args, "--print-sql", "--schema", schema, "--reason", reason))
				dir, out, err := runPsql(psql, schema, script)
				t.Cleanup(func() { _ = os.RemoveAll(dir) })
				assertCanary(t, q, 20)
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Fatalf("psql created %s: a meta-command ran", entries[0].Name())
				}
				if err != nil {
					t.Fatalf("psql: %v\n%s\nscript:\n%s", err, out, script)
				}
				var got string
				if err := pool.QueryRow(ctx, strings.ReplaceAll(tc.check, "S.", q+".")).Scan(&got); err != nil || got != tc.want {
					t.Fatalf("after the script: %q, %v; want %q", got, err, tc.want)
				}
			})
		}
	}
}

func mustExec(t *testing.T, sql string) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// printSQL runs the real binary and returns what it printed, which must hold no control
// byte but the newlines that end its lines.
func printSQL(t *testing.T, args []string) string {
	t.Helper()
	cmd := exec.Command("outboxctl", args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("outboxctl %q: %v\n%s", args, err, stderr.String())
	}
	if i := strings.IndexFunc(string(out), func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x7f) }); i >= 0 {
		t.Fatalf("printed SQL holds a control byte at %d:\n%q", i, out)
	}
	return string(out)
}

// runPsql pipes script into psql as a DBA would, from a new empty directory, with the
// schema first on the search_path; it returns the directory and psql's output.
func runPsql(psql, schema, script string) (string, string, error) {
	dir, err := os.MkdirTemp("", "outboxctl-psql-")
	if err != nil {
		return "", "", err
	}
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN())
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("SET search_path TO " + pgx.Identifier{schema}.Sanitize() + ";\n" + script)
	out, err := cmd.CombinedOutput()
	return dir, string(out), err
}

func assertCanary(t *testing.T, schema string, want int) {
	t.Helper()
	var n int
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".canary").Scan(&n); err != nil || n != want {
		t.Fatalf("canary holds %d rows (%v), want %d: injected SQL ran", n, err, want)
	}
}

// TestCanaryHarnessCatchesInjection proves the harness can fail: a script built the way
// the old renderer built it ("/*/" became "/ */", closing the comment) deletes from the
// canary, and a meta-command after a newline runs a shell.
func TestCanaryHarnessCatchesInjection(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	schema := testdb.Schema(t, fixture.Options{})
	q := pgx.Identifier{schema}.Sanitize()
	mustExec(t, "CREATE TABLE "+q+".canary AS SELECT generate_series(1, 20) AS id")
	broken := "/* outboxctl reschedule: / */ WITH x AS (DELETE FROM canary WHERE id <= 10 RETURNING 1) SELECT 1 -- */ SELECT 1;\n" +
		"-- x\n\\! touch MARKER\n"
	dir, _, _ := runPsql(psql, schema, broken)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	assertCanary(t, q, 10)
	if _, err := os.Stat(filepath.Join(dir, "MARKER")); err != nil {
		t.Fatalf("the meta-command did not run: %v", err)
	}
}

// TestMutationStderrEscapesReason runs a real kill-switch change with a reason that would
// retitle the terminal and erase lines: the plan, the audit line and the notes on stderr
// must show it escaped, never send the bytes.
func TestMutationStderrEscapesReason(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	cmd := exec.Command("outboxctl", "killswitch", "add", "organization", "5", "--yes",
		"--reason", "INC-9\x1b]0;pwned\x07\x1b[2K\n\x1b[1A", "--dsn", testdb.DSN(), "--schema", schema)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("killswitch add: %v\n%s", err, stderr.String())
	}
	if i := strings.IndexAny(stderr.String(), "\x1b\x07"); i >= 0 {
		t.Fatalf("raw control byte on stderr at %d:\n%q", i, stderr.String())
	}
	if !strings.Contains(stderr.String(), `INC-9\x1b]0;pwned\x07\x1b[2K\n\x1b[1A`) {
		t.Fatalf("the plan does not show the reason escaped:\n%s", stderr.String())
	}
}

// TestPlanLinesAreEscaped: the plan a drain prints without asking (--dry-run, and the
// refusal of a kill-switched shard) quotes --reason; none of the hostile reasons may put a
// raw control byte on the terminal, as the plan before a confirmation already could not.
func TestPlanLinesAreEscaped(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	q := pgx.Identifier{schema}.Sanitize()
	_, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`
INSERT INTO %[1]s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for)
VALUES (0, 7, 2, 7, now(), '2016-08-01'), (0, 8, 2, 8, now(), '2016-08-01');
INSERT INTO %[1]s.sentry_option (key, value, last_updated, last_updated_by)
VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[8]', now(), 'unknown')`, q))
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range hostileReasons {
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"drain", "organization", "7", "--dry-run", "--reason", reason}, 0},
			{[]string{"drain", "organization", "8", "--handler", "discard", "--reason", reason}, 2},
		} {
			code, _, stderr := runCLI(t, schema, c.args...)
			if code != c.code || !strings.Contains(stderr, "Plan:\n") {
				t.Fatalf("%q: exit %d (want %d), stderr:\n%s", c.args, code, c.code, stderr)
			}
			for _, r := range stderr {
				if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029') {
					t.Fatalf("%q: stderr holds the raw control character %U:\n%q", c.args, r, stderr)
				}
			}
		}
	}
}
