package cmd_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// eraFindings are doctor's findings of the era check.
func eraFindings(t *testing.T, out string) []struct {
	Check, Severity, Summary string
	Evidence                 map[string]any
} {
	t.Helper()
	var fs []struct {
		Check, Severity, Summary string
		Evidence                 map[string]any
	}
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return fs
}

// TestDoctorEra: doctor's era check on both era fixtures. On May 2026 it says the
// watermarks are in Redis and, with no group action log outbox and a registry without
// GROUP_ACTION_LOG_EVENT, that such rows cannot be told (ok). On a current catalog it names
// the torn-down replicas and the issues.action_log namespace, learns the group action log's
// integers from its own table's rows, and warns about such rows in the cell outbox added
// after 2026-09-15 (exit 4, their age in days after it); rows only from before are leftovers
// (ok, exit 0).
func TestDoctorEra(t *testing.T) {
	t.Parallel()
	t.Run("may-2026", func(t *testing.T) {
		t.Parallel()
		schema := testdb.Schema(t, fixture.Options{Replicas: true, Era: fixture.EraMay2026})
		out, _ := mustRun(t, cmd.ExitOK, schema, "doctor", "--check", "era", "-o", "json")
		fs := eraFindings(t, out)
		if len(fs) != 2 || !strings.Contains(fs[0].Summary, "backfill watermarks in Redis") || strings.Contains(fs[0].Summary, "torn down") ||
			!strings.Contains(fs[1].Summary, "cannot be told") || fs[1].Severity != "ok" {
			t.Fatalf("findings: %+v", fs)
		}
	})
	t.Run("current", func(t *testing.T) {
		t.Parallel()
		schema := testdb.Schema(t, fixture.Options{Replicas: true, Era: fixture.EraCurrent})
		s := pgx.Identifier{schema}.Sanitize()
		exec := func(q string) {
			t.Helper()
			if _, err := testdb.Pool(t).Exec(t.Context(), fmt.Sprintf(q, s)); err != nil {
				t.Fatal(err)
			}
		}
		exec(`INSERT INTO %s.sentry_groupactionlogoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for) VALUES (14, 5, 49, 1, now(), now())`)
		exec(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added) VALUES (14, 5, 49, 2, now(), now(), '2026-09-01 00:00:00+00')`)
		out, _ := mustRun(t, cmd.ExitOK, schema, "doctor", "--check", "era", "-o", "json")
		fs := eraFindings(t, out)
		if len(fs) != 2 || !strings.Contains(fs[0].Summary, "replicas of team, organizationmemberteam, externalactor torn down") ||
			!strings.Contains(fs[0].Summary, "TEAM_UPDATE, ORGANIZATION_MEMBER_TEAM_UPDATE, EXTERNAL_ACTOR_UPDATE rows drain applying nothing") ||
			!strings.Contains(fs[0].Summary, "hybridcloud, hybridcloud.control, issues.action_log") ||
			fs[1].Severity != "ok" || !strings.Contains(fs[1].Summary, "1 UNKNOWN(49) row(s) in sentry_regionoutbox, all added before 2026-09-15: leftovers") {
			t.Fatalf("leftovers only: %+v", fs)
		}
		exec(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added) VALUES (14, 6, 49, 3, now(), now(), '2026-10-01 00:00:00+00')`)
		out, _ = mustRun(t, cmd.ExitWarn, schema, "doctor", "--check", "era", "-o", "json")
		fs = eraFindings(t, out)
		var warn bool
		for _, f := range fs {
			if f.Severity == "warn" {
				warn = strings.Contains(f.Summary, "1 UNKNOWN(49) row(s) in sentry_regionoutbox added on or after 2026-09-15") &&
					strings.Contains(f.Summary, "apply out of order") && f.Evidence["rows"] == 2.0 && f.Evidence["newest_days_after_2026_09_15"] == 16.0
			}
		}
		if !warn {
			t.Fatalf("a row after the cutover: %+v", fs)
		}
	})
}
