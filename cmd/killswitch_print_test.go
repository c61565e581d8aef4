package cmd_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestKillswitchPrintedForTextColumn: on a database from before Sentry's jsonb conversion
// (options value as text), the printed `killswitch add` with --value-type text runs in psql
// and writes the list; the default (jsonb) script is for the newer column.
func TestKillswitchPrintedForTextColumn(t *testing.T) {
	t.Parallel()
	psql := testdb.Psql(t)
	schema := testdb.Schema(t, fixture.Options{OptionValue: fixture.PayloadText})
	q := pgx.Identifier{schema}.Sanitize()
	mustExec(t, "INSERT INTO "+q+".sentry_option (key, value, last_updated) VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[5,7]', now())")
	script := printSQL(t, []string{"killswitch", "add", "organization", "9", "--reason", "INC-3", "--print-sql", "--value-type", "text", "--schema", schema})
	if out, err := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN(), "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s\n%s", err, out, script)
	}
	var v string
	if err := testdb.Pool(t).QueryRow(context.Background(), "SELECT value FROM "+q+".sentry_option WHERE key = 'hybrid_cloud.authentication.disabled_organization_shards'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if strings.ReplaceAll(v, " ", "") != "[5,7,9]" {
		t.Fatalf("value %q, want the list with 9 added", v)
	}
	bad := exec.Command("outboxctl", "killswitch", "add", "organization", "9", "--print-sql", "--value-type", "xml")
	if err := bad.Run(); err == nil {
		t.Fatal("--value-type xml was accepted")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("--value-type xml: %v, want exit 2", err)
	}
}
