package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDoctorTombstones: doctor's tombstone check on both era fixtures. On May 2026 (no
// deletion watermark tables: Sentry kept them in Redis) each silo's finding says so and
// reads nothing (ok). On a current catalog it reads sentry_celldeletionwatermark and
// sentry_controldeletionwatermark (PR #123171) against the tombstones: a column waiting 3
// hours on tombstone 51 is a warning naming it (exit 4), one caught up or waiting 10 minutes
// is not; with hybrid_cloud.disable_tombstone_cleanup on, the finding names the option; a
// --tombstone-stall of 4h makes it ok; one waiting 2 days is critical (exit 5).
func TestDoctorTombstones(t *testing.T) {
	t.Parallel()
	t.Run("may-2026", func(t *testing.T) {
		t.Parallel()
		schema := testdb.Schema(t, fixture.Options{Era: fixture.EraMay2026})
		out, _ := mustRun(t, cmd.ExitOK, schema, "doctor", "--check", "tombstones", "-o", "json")
		fs := eraFindings(t, out)
		if len(fs) != 2 || !strings.Contains(fs[0].Summary, "no sentry_celldeletionwatermark here") || !strings.Contains(fs[1].Summary, "no sentry_controldeletionwatermark here") ||
			!strings.Contains(fs[0].Summary, "Redis keys tombstone.<table>.<field>") || fs[0].Evidence["store"] != "redis" {
			t.Fatalf("findings: %+v", fs)
		}
	})
	t.Run("current", func(t *testing.T) {
		t.Parallel()
		schema := testdb.Schema(t, fixture.Options{Era: fixture.EraCurrent})
		exec := func(q string) {
			t.Helper()
			if _, err := testdb.Pool(t).Exec(t.Context(), strings.ReplaceAll(q, "S.", pgx.Identifier{schema}.Sanitize()+".")); err != nil {
				t.Fatal(err)
			}
		}
		// 600 tombstones in the cell, the first 100 written 3 hours ago, the rest 10 minutes ago.
		exec(`INSERT INTO S.sentry_regiontombstone (table_name, object_identifier, created_at)
		      SELECT 'sentry_organization', g, CASE WHEN g <= 100 THEN now() - interval '3 hours' ELSE now() - interval '10 minutes' END
		        FROM generate_series(1, 600) g ORDER BY g`)
		exec(`INSERT INTO S.sentry_controltombstone (table_name, object_identifier, created_at) VALUES ('auth_user', 1, now() - interval '5 hours')`)
		watermark := func(table, tableName, field string, low int64) {
			exec(fmt.Sprintf(`INSERT INTO S.%s (date_updated, date_added, prefix, table_name, field_name, low_bound, transaction_id)
			                  VALUES (now(), now(), 'tombstone', '%s', '%s', %d, 'abc'), (now(), now(), 'row', '%s', '%s', 0, 'abc')`, table, tableName, field, low, tableName, field))
		}
		watermark("sentry_celldeletionwatermark", "sentry_projectkey", "organization_id", 50) // waits 3 h on tombstone 51
		watermark("sentry_celldeletionwatermark", "sentry_team", "organization_id", 600)      // caught up
		watermark("sentry_celldeletionwatermark", "sentry_rule", "organization_id", 150)      // waits 10 min
		watermark("sentry_controldeletionwatermark", "sentry_apikey", "organization_id", 1)   // caught up

		out, _ := mustRun(t, cmd.ExitWarn, schema, "doctor", "--check", "tombstones", "-o", "json")
		fs := eraFindings(t, out)
		if len(fs) != 2 || fs[0].Severity != "warn" || fs[0].Evidence["table_name"] != "sentry_projectkey" || fs[0].Evidence["waiting_on"] != float64(51) ||
			fs[0].Evidence["low_bound"] != float64(50) || fs[0].Evidence["max_tombstone_id"] != float64(600) ||
			!strings.Contains(fs[0].Summary, "sentry_projectkey.organization_id (cell silo) has waited 3h") ||
			fs[1].Severity != "ok" || !strings.Contains(fs[1].Summary, "1 tombstone watermark(s) of the control silo") {
			t.Fatalf("findings: %+v", fs)
		}
		for _, f := range fs {
			if strings.Contains(f.Summary, "sentry_team") || strings.Contains(f.Summary, "sentry_rule") {
				t.Errorf("a caught-up or recent column is a finding: %s", f.Summary)
			}
		}
		mustRun(t, cmd.ExitOK, schema, "doctor", "--check", "tombstones", "--tombstone-stall", "4h", "-o", "json")

		exec(`INSERT INTO S.sentry_option (key, value, last_updated) VALUES ('hybrid_cloud.disable_tombstone_cleanup', 'true', now())`)
		exec(`UPDATE S.sentry_regiontombstone SET created_at = now() - interval '2 days' WHERE id <= 100`)
		out, _ = mustRun(t, cmd.ExitCritical, schema, "doctor", "--check", "tombstones", "-o", "json")
		fs = eraFindings(t, out)
		if fs[0].Severity != "crit" || !strings.Contains(fs[0].Summary, "the option hybrid_cloud.disable_tombstone_cleanup is on") || fs[0].Evidence["cleanup_disabled"] != true {
			t.Fatalf("findings with the cleanup disabled: %+v", fs)
		}
	})
}
