package status_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// runScript runs status.Script for tables on schema through psql as printed, stopping at
// the first error (ON_ERROR_STOP), and returns what psql printed.
func runScript(t *testing.T, schema string, tables []backfill.Table) string {
	t.Helper()
	text, err := status.Script(schema, tables)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backfill.sql")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := osexec.Command(testdb.Psql(t), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN(), "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s\nscript:\n%s", err, out, text)
	}
	return string(out)
}

// TestPrintedScriptRunsOnASchemaLackingEachTable: the --print-sql script runs as printed
// (no error) on a schema missing any one of the tables it reads, says which one it could
// not read, and still reads the others: the live command copes with such a schema too.
func TestPrintedScriptRunsOnASchemaLackingEachTable(t *testing.T) {
	t.Parallel()
	tables := []backfill.Table{{Name: "sentry_organization", Silo: backfill.Cell, Coded: 1}, {Name: "auth_user", Silo: backfill.Control, Coded: 1}}
	reads := []string{query.CellWatermark, query.ControlWatermark, query.OptionTable, query.ControlOptionTable, "sentry_organization", "auth_user"}
	for _, missing := range reads {
		t.Run(missing, func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			exec(t, fmt.Sprintf(`CREATE TABLE %[1]s.sentry_organization (id bigint PRIMARY KEY);
INSERT INTO %[1]s.sentry_organization SELECT generate_series(1, 5);
CREATE TABLE %[1]s.auth_user (id bigint PRIMARY KEY);
INSERT INTO %[1]s.auth_user VALUES (40), (41);
INSERT INTO %[1]s.sentry_option (key, value, last_updated, last_updated_by)
VALUES ('outbox_replication.sentry_organization.replication_version', '7', now(), 'unknown');
DROP TABLE %[1]s.%[2]s`, schema, missing))
			out := runScript(t, schema, tables)
			want := fmt.Sprintf("outboxctl: cannot read %s.%s here: no such table", schema, missing)
			if strings.Count(out, "outboxctl: cannot read") != 1 || !strings.Contains(out, want) {
				t.Fatalf("want exactly %q among what psql printed:\n%s", want, out)
			}
			// What is there is read: the bounds of each replicated table present, the option.
			for table, row := range map[string]string{"sentry_organization": "sentry_organization |      1 |      5", "auth_user": "auth_user  |     40 |     41"} {
				if table != missing && !strings.Contains(out, row) {
					t.Errorf("the bounds of %s (%q) are missing from:\n%s", table, row, out)
				}
			}
			if missing != query.OptionTable && !strings.Contains(out, "outbox_replication.sentry_organization.replication_version | 7") {
				t.Errorf("the option is missing from:\n%s", out)
			}
		})
	}
}

// TestPrintedScriptSkipsATableWithoutID: a replicated table without an id column (the live
// command's "no id column" row) is named and skipped, not an error; a hostile table name
// (a quote, a backslash command) is printed as data by psql, never run.
func TestPrintedScriptSkipsATableWithoutID(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	hostile := `it's\! echo PWNED`
	exec(t, fmt.Sprintf(`CREATE TABLE %[1]s.sentry_organization (uuid text)`, schema))
	out := runScript(t, schema, []backfill.Table{{Name: "sentry_organization", Coded: 1}, {Name: hostile, Coded: 1, Unregistered: true}})
	for _, want := range []string{
		fmt.Sprintf("outboxctl: cannot read %s.sentry_organization here: no id column", schema),
		fmt.Sprintf(`outboxctl: cannot read %s."it's\! echo PWNED" here: no such table`, schema),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in what psql printed:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ReplaceAll(out, "echo PWNED", ""), "PWNED") {
		t.Fatalf("psql ran the table name as a command:\n%s", out)
	}
}
