package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// verifyDoc is verify's JSON.
type verifyDoc struct {
	Summary []struct {
		Pair                            string
		InSync                          int64 `json:"in_sync"`
		Missing, Stale, Orphan, Pending int64
	} `json:"summary"`
	Drift []struct {
		Pair, Drift, Next string
		ObjectID          int64                      `json:"object_id"`
		Fields            map[string]json.RawMessage `json:"fields"`
		WouldBe           *string                    `json:"would_be"`
		PendingShard      *int64                     `json:"pending_shard"`
	} `json:"drift"`
}

func parseVerify(t *testing.T, out string) verifyDoc {
	t.Helper()
	var d verifyDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, out)
	}
	return d
}

// checkAgainstModel compares verify's JSON with the model of the layout.
func checkAgainstModel(t *testing.T, d verifyDoc, shape testdb.ReplicaShape, split bool) {
	t.Helper()
	want, inSync := testdb.ReplicaModel(shape, split)
	if len(d.Drift) != len(want) {
		t.Fatalf("%d drifted objects listed, the model says %d", len(d.Drift), len(want))
	}
	for i, w := range want {
		g := d.Drift[i]
		if g.Pair != w.Pair || g.Drift != w.Class || g.ObjectID != w.Object || len(g.Fields) != len(w.Fields) {
			t.Fatalf("drift %d: got %s %s %d fields %v, the model says %+v", i, g.Pair, g.Drift, g.ObjectID, g.Fields, w)
		}
	}
	for _, s := range d.Summary {
		if s.InSync != inSync[s.Pair] {
			t.Errorf("%s: in sync %d, the model says %d", s.Pair, s.InSync, inSync[s.Pair])
		}
	}
}

// TestVerifyMonolith runs verify against one database with drift of every class: exit 9
// under --fail-on-drift, every object exactly as the model says, and the stale fields with
// both values.
func TestVerifyMonolith(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 60, Members: 150, Cell: "--monolith--"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, schema, schema, shape)
	out, _ := mustRun(t, cmd.ExitDrift, schema, "verify", "-o", "json", "--limit", "0", "--fail-on-drift")
	d := parseVerify(t, out)
	checkAgainstModel(t, d, shape, false)
	for _, g := range d.Drift {
		if g.Pair == "organization" && g.ObjectID == 5 {
			var slug struct{ Source, Replica string }
			if err := json.Unmarshal(g.Fields["slug"], &slug); err != nil || slug.Source != "org-5" || slug.Replica != "old-org-5" {
				t.Errorf("organization 5's slug: %s", g.Fields["slug"])
			}
			if g.Next != "outboxctl --schema "+schema+" replicate organization 5" { // pasted, it runs where verify ran
				t.Errorf("organization 5's next: %q", g.Next)
			}
		}
		if g.Pair == "organization" && g.ObjectID == 3 && (g.Drift != "pending" || g.WouldBe == nil || *g.WouldBe != "missing" || g.PendingShard == nil || *g.PendingShard != 3) {
			t.Errorf("organization 3: want pending, would be missing, shard 3: %+v", g)
		}
	}
}

// TestVerifySplit runs verify across two contexts (a cell schema and a control schema) and
// finds what the model says of a split deployment.
func TestVerifySplit(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 60, Members: 150, Cell: "us"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cellSchema, controlSchema, shape)
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		testdb.DSN(), cellSchema, controlSchema))
	io, out, errOut := render.Test()
	io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
	if code := cmd.Main(context.Background(), []string{"--context", "us,control", "verify", "-o", "json", "--limit", "0"}, io); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	checkAgainstModel(t, parseVerify(t, out.String()), shape, true)
	// Three contexts is not a split: a usage error.
	io, _, errOut = render.Test()
	io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
	if code := cmd.Main(context.Background(), []string{"--context", "us,control,us", "verify"}, io); code != cmd.ExitUsage {
		t.Fatalf("three contexts: exit %d, want 2\n%s", code, errOut)
	}
}

// TestVerifyThenReplicate walks one missing mapping from drift to pending: replicate writes
// the outbox row, verify then shows the object pending on its shard, and --fail-on-drift
// exits 8 ("not yet") once nothing but pending objects is left.
func TestVerifyThenReplicate(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test) VALUES (1, 'Acme', 'acme', 0, now(), 'member', 0, false)`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, s)); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := mustRun(t, cmd.ExitDrift, schema, "verify", "organization", "--id", "1", "-o", "json", "--fail-on-drift")
	if d := parseVerify(t, out); len(d.Drift) != 1 || d.Drift[0].Drift != "missing" {
		t.Fatalf("before: %s", out)
	}
	if _, errOut := mustRun(t, 0, schema, "replicate", "organization", "1", "--dry-run"); !strings.Contains(errOut, "write 1 ORGANIZATION_UPDATE outbox row(s)") {
		t.Fatalf("dry run plan: %s", errOut)
	}
	if rows := cellOutbox(t, schema, "shard_scope"); len(rows) != 0 {
		t.Fatalf("--dry-run wrote %v", rows)
	}
	mustRun(t, 0, schema, "replicate", "organization", "1", "--reason", "test", "--yes", "-o", "json")
	if rows := cellOutbox(t, schema, "shard_scope, shard_identifier, category, object_identifier, coalesce(payload::text, 'NULL'), scheduled_for = '2016-08-01 00:00:00+00'"); len(rows) != 1 || rows[0] != "0 1 2 1 NULL t" {
		t.Fatalf("outbox after replicate: %v", rows)
	}
	out, _ = mustRun(t, cmd.ExitPending, schema, "verify", "organization", "--id", "1", "-o", "json", "--fail-on-drift")
	if d := parseVerify(t, out); len(d.Drift) != 1 || d.Drift[0].Drift != "pending" || *d.Drift[0].WouldBe != "missing" {
		t.Fatalf("after: %s", out)
	}
	// The receiver's upsert, as Sentry's drain would run it: then in sync.
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`DELETE FROM %[1]s.sentry_regionoutbox;
INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status,
  allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features,
  require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite)
VALUES (1, 'acme', 'Acme', now(), false, '', '--monolith--', 0, false, false, false, false, false, false, false, false, false, false, false)`, s)); err != nil {
		t.Fatal(err)
	}
	mustRun(t, 0, schema, "verify", "organization", "--id", "1", "--fail-on-drift")
}

// cellOutbox reads cols of schema's cell outbox rows, one line per row, by id.
func cellOutbox(t *testing.T, schema, cols string) []string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf("SELECT concat_ws(' ', %s) FROM %s ORDER BY id",
		cols, pgx.Identifier{schema, "sentry_regionoutbox"}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDoctorReplicasCheck: organizations without mappings are critical when none of the
// sampled has one, a warning when some lack one, ok otherwise, each pointing to verify; a
// schema without the pair's tables (a split silo) is ok and says where to compare them.
func TestDoctorReplicasCheck(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	s := pgx.Identifier{schema}.Sanitize()
	exec := func(q string) {
		t.Helper()
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, s)); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test)
SELECT i, 'O' || i, 'o-' || i, 0, now(), 'member', 0, false FROM generate_series(1, 3) AS i`)
	finding := func(want int) map[string]any {
		t.Helper()
		out, _ := mustRun(t, want, schema, "doctor", "--check", "replicas", "-o", "json")
		var fs []map[string]any
		if err := json.Unmarshal([]byte(out), &fs); err != nil || len(fs) != 1 {
			t.Fatalf("doctor: %v\n%s", err, out)
		}
		return fs[0]
	}
	if f := finding(cmd.ExitCritical); f["severity"] != "crit" || !strings.Contains(fmt.Sprint(f["next"]), "verify organization") {
		t.Errorf("no mappings: %v", f)
	}
	exec(`INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status,
  allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features,
  require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite)
SELECT i, 'o-' || i, 'O' || i, now(), false, '', '--monolith--', 0, false, false, false, false, false, false, false, false, false, false, false
  FROM generate_series(1, 2) AS i`)
	if f := finding(cmd.ExitWarn); f["severity"] != "warn" {
		t.Errorf("one missing: %v", f)
	}
	exec(`INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status,
  allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features,
  require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite)
VALUES (3, 'o-3', 'O3', now(), false, '', '--monolith--', 0, false, false, false, false, false, false, false, false, false, false, false)`)
	if f := finding(0); f["severity"] != "ok" {
		t.Errorf("all mapped: %v", f)
	}
	plain := testdb.Schema(t, fixture.Options{})
	out, _ := mustRun(t, 0, plain, "doctor", "--check", "replicas", "-o", "json")
	if !strings.Contains(out, `outboxctl --context \u003ccell\u003e,\u003ccontrol\u003e verify`) || !strings.Contains(out, `"next": []`) {
		t.Errorf("no replica tables: %s", out)
	}
}

// TestDemoSeedsEveryDriftClass: demo seed's replicas hold one object of every class, and
// verify finds exactly those (the runbook walks them).
func TestDemoSeedsEveryDriftClass(t *testing.T) {
	t.Parallel()
	schema := testdb.NewSchemaName()
	ctx := context.Background()
	if err := fixture.Seed(ctx, testdb.Pool(t), fixture.DemoOptions{Schema: schema, Rows: 2000, Shards: 200}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testdb.Drop(t, schema) })
	out, _ := mustRun(t, cmd.ExitDrift, schema, "verify", "-o", "json", "--fail-on-drift")
	var got []string
	for _, d := range parseVerify(t, out).Drift {
		got = append(got, fmt.Sprintf("%s %s %d", d.Pair, d.Drift, d.ObjectID))
	}
	want := []string{"organization missing 1", "organization stale 2", "organization pending 3", "organization orphan 40001",
		"organizationmember missing 7", "organizationmember stale 8", "organizationmember orphan 5001",
		"team missing 10", "team stale 11", "team pending 12", "team orphan 101",
		"organizationmemberteam missing 20", "organizationmemberteam stale 21", "organizationmemberteam orphan 101",
		"externalactor missing 5", "externalactor stale 6", "externalactor orphan 21"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("demo drift:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An orphan team's deletion outbox is what Sentry writes, and the plan says it deletes
	// nothing (Team's deletion receiver is a no-op).
	if _, errOut := mustRun(t, 0, schema, "replicate", "team", "101", "--dry-run"); !strings.Contains(errOut, "deletion outbox (source gone): 101 [it will not delete the replica") {
		t.Errorf("replicate team 101 --dry-run: %s", errOut)
	}
}

// psqlRun runs sql in psql as a DBA pastes it and returns its unaligned output.
func psqlRun(t *testing.T, sql string) string {
	t.Helper()
	c := exec.Command(testdb.Psql(t), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", testdb.DSN())
	c.Stdin = strings.NewReader(sql)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s\n%s", err, out, sql)
	}
	return string(out)
}

// TestVerifyPrintSQLRunsInPsql: the SQL verify prints runs as printed in psql and finds the
// drifted objects verify lists.
func TestVerifyPrintSQLRunsInPsql(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 40, Members: 60, Cell: "--monolith--"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, schema, schema, shape)
	sql, _ := mustRun(t, 0, schema, "verify", "--print-sql")
	out := psqlRun(t, sql)
	want, inSync := testdb.ReplicaModel(shape, false)
	// Per pair: its tables' columns (table|column), then verify-pair's rows, each starting
	// with the pair's counts (in sync|missing|stale|orphan|pending), one per listed object.
	type group struct {
		counts string
		rows   int
	}
	var groups []group
	columns := true
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "|")
		if len(f) <= 2 {
			columns = true
			continue
		}
		if columns {
			groups = append(groups, group{counts: strings.Join(f[:5], "|")})
			columns = false
		}
		if f[5] != "" {
			groups[len(groups)-1].rows++
		}
	}
	if pairs := len(replica.Pairs()); len(groups) != pairs {
		t.Fatalf("psql printed %d pairs' rows, want %d:\n%s", len(groups), pairs, out)
	}
	for i, pair := range []string{"organization", "organizationmember"} {
		n := countPair(want, pair, false)
		if g := groups[i]; !strings.HasPrefix(g.counts, fmt.Sprint(inSync[pair])+"|") || g.rows != min(n, 50) {
			t.Errorf("%s: psql printed counts %s and %d objects, the model says in sync %d and %d drifted (50 listed at most)", pair, g.counts, g.rows, inSync[pair], n)
		}
	}
	for _, g := range groups[2:] {
		if g.counts != "0|0|0|0|0" || g.rows != 0 {
			t.Errorf("a pair without rows printed %+v", g)
		}
	}
}

func countPair(ds []testdb.ModelDrift, pair string, withSource bool) int {
	n := 0
	for _, d := range ds {
		if d.Pair == pair && (!withSource || (d.Class != "orphan" && d.Would != "orphan")) {
			n++
		}
	}
	return n
}

// TestReplicateFromVerifyJSON: replicate --from reads verify's JSON, takes the classes
// --drift names, and writes one outbox row per object, the deletion outbox for an orphan;
// --print-sql prints an INSERT that runs in psql and writes nothing itself.
func TestReplicateFromVerifyJSON(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 100, Members: 300, Cell: "--monolith--"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, schema, schema, shape)
	before := len(cellOutbox(t, schema, "id"))
	out, _ := mustRun(t, 0, schema, "verify", "-o", "json", "--limit", "0")
	file := filepath.Join(t.TempDir(), "drift.json")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	sql, _ := mustRun(t, 0, schema, "replicate", "--from", file, "--drift", "orphan", "--print-sql")
	if n := len(cellOutbox(t, schema, "id")); n != before {
		t.Fatalf("--print-sql wrote %d rows", n-before)
	}
	if !strings.Contains(sql, "INSERT INTO "+schema+".sentry_regionoutbox") || !strings.Contains(sql, "COMMIT;") {
		t.Fatalf("printed SQL:\n%s", sql)
	}
	psqlRun(t, sql)
	orphans := 0
	for _, d := range parseVerify(t, out).Drift {
		if d.Drift == "orphan" {
			orphans++
		}
	}
	if n := len(cellOutbox(t, schema, "id")); n != before+orphans || orphans == 0 {
		t.Fatalf("psql wrote %d rows, want one per orphan (%d)", n-before, orphans)
	}
	// Then the missing and stale ones through replicate itself; pending ones are left alone.
	res, _ := mustRun(t, 0, schema, "replicate", "--from", file, "--drift", "missing,stale", "--yes", "-o", "json")
	var written []struct {
		Pair    string
		Objects string
	}
	if err := json.Unmarshal([]byte(res), &written); err != nil || len(written) != 2 {
		t.Fatalf("replicate -o json: %v\n%s", err, res)
	}
	// Every missing or stale object is now pending.
	out, _ = mustRun(t, 0, schema, "verify", "-o", "json", "--limit", "0")
	for _, d := range parseVerify(t, out).Drift {
		if d.Drift == "missing" || d.Drift == "stale" {
			t.Errorf("%s %d still %s after replicate", d.Pair, d.ObjectID, d.Drift)
		}
	}
}

// TestReplicateSplit writes into the cell's outbox, reading a gone member's identifiers from
// the control silo's mapping.
func TestReplicateSplit(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 40, Members: 150, Cell: "us"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cellSchema, controlSchema, shape)
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		testdb.DSN(), cellSchema, controlSchema))
	io, _, errOut := render.Test()
	io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
	// Member 151 exists only as a mapping (an orphan); member 4 exists only in the cell.
	if code := cmd.Main(context.Background(), []string{"--context", "us,control", "replicate", "organizationmember", "151", "4", "--yes"}, io); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	rows := cellOutbox(t, cellSchema, "shard_identifier, category, object_identifier, payload::text")
	got := strings.Join(rows[len(rows)-2:], "\n")
	want := fmt.Sprintf("%d 3 151 {\"user_id\": 151}\n%d 3 4 {\"user_id\": 4}", 1+151%40, 1+4%40)
	if got != want {
		t.Fatalf("cell outbox:\n%s\nwant:\n%s", got, want)
	}
	if n := len(cellOutbox(t, controlSchema, "id")); n != 0 {
		t.Errorf("the control schema's outbox got %d rows", n)
	}
}

// TestVerifyWithoutTheNewestFlagColumns: a database from before the three newest flags of
// the organization mapping (disable_member_project_creation, prevent_superuser_access,
// disable_member_invite) is verified on the fields it has, in both modes: the summary names
// the three fields not compared and why, a stale field is still found, and a flag the
// database cannot hold is no drift.
func TestVerifyWithoutTheNewestFlagColumns(t *testing.T) {
	t.Parallel()
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	c, r := pgx.Identifier{cellSchema}.Sanitize(), pgx.Identifier{controlSchema}.Sanitize()
	for _, q := range []string{
		`ALTER TABLE %[2]s.sentry_organizationmapping DROP COLUMN disable_member_project_creation, DROP COLUMN prevent_superuser_access, DROP COLUMN disable_member_invite`,
		// Organization 1 has every flag set (the three newest too), 2 a renamed slug.
		`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test) VALUES (1, 'A', 'a', 0, now(), 'member', 2047, false), (2, 'B', 'b', 0, now(), 'member', 0, false)`,
		`INSERT INTO %[2]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features, require_email_verification, codecov_access)
VALUES (1, 'a', 'A', now(), false, '', 'us', 0, true, true, true, true, true, true, true, true), (2, 'old-b', 'B', now(), false, '', 'us', 0, false, false, false, false, false, false, false, false)`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, c, r)); err != nil {
			t.Fatal(err)
		}
	}
	const notCompared = "disable_member_project_creation: no column %[1]s.sentry_organizationmapping.disable_member_project_creation; " +
		"prevent_superuser_access: no column %[1]s.sentry_organizationmapping.prevent_superuser_access; " +
		"disable_member_invite: no column %[1]s.sentry_organizationmapping.disable_member_invite"
	check := func(t *testing.T, out string) {
		t.Helper()
		var d struct {
			Summary []struct {
				Pair        string
				InSync      int64   `json:"in_sync"`
				Stale       int64   `json:"stale"`
				NotCompared *string `json:"not_compared"`
			}
			Drift []struct {
				Pair     string
				ObjectID int64 `json:"object_id"`
				Fields   map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(d.Summary) != 1 || d.Summary[0].InSync != 1 || d.Summary[0].Stale != 1 || d.Summary[0].NotCompared == nil ||
			*d.Summary[0].NotCompared != fmt.Sprintf(notCompared, controlSchema) {
			t.Errorf("summary: %s", out)
		}
		if len(d.Drift) != 1 || d.Drift[0].ObjectID != 2 || len(d.Drift[0].Fields) != 1 || d.Drift[0].Fields["slug"] == nil {
			t.Errorf("drift: %s", out)
		}
	}
	t.Run("split", func(t *testing.T) {
		out, _ := splitRun(t, cellSchema, controlSchema)(cmd.ExitDrift, "verify", "organization", "-o", "json", "--fail-on-drift")
		check(t, out)
	})
	t.Run("monolith", func(t *testing.T) {
		// One schema: the sources moved beside the mapping without the three columns.
		for _, tbl := range []string{"sentry_organizationmember", "sentry_organization"} {
			if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf("DROP TABLE %s.%s CASCADE", r, tbl)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf("CREATE TABLE %[2]s.sentry_organization AS SELECT * FROM %[1]s.sentry_organization", c, r)); err != nil {
			t.Fatal(err)
		}
		out, _ := mustRun(t, cmd.ExitDrift, controlSchema, "--cell", "us", "verify", "organization", "-o", "json", "--fail-on-drift")
		check(t, out)
	})
}

// TestVerifyCountsUnkeyedMemberMappings: member mappings from before organizationmember_id
// (NULL there) are rows Sentry's receiver never finds: verify leaves them out of the
// comparison and says how many in not_compared, in both modes; the keyed ones are compared
// as usual (one member in sync, one whose only mapping is unkeyed: missing).
func TestVerifyCountsUnkeyedMemberMappings(t *testing.T) {
	t.Parallel()
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	c, r := pgx.Identifier{cellSchema}.Sanitize(), pgx.Identifier{controlSchema}.Sanitize()
	for _, schema := range []string{c, r} { // the members in both schemas: the monolith reads the control one
		for _, q := range []string{
			`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test) VALUES (1, 'A', 'a', 0, now(), 'member', 0, false)`,
			`INSERT INTO %[1]s.sentry_organizationmember (id, organization_id, user_id, email, role, flags, date_added, has_global_access, type) VALUES (10, 1, 100, NULL, 'member', 0, now(), true, 0), (11, 1, 101, NULL, 'member', 0, now(), true, 0)`,
		} {
			if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, schema)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %[1]s.sentry_organizationmembermapping (organization_id, organizationmember_id, date_added, role, user_id) VALUES
(1, 10, now(), 'member', 100), (1, NULL, now(), 'member', 101), (1, NULL, now(), 'admin', 102)`, r)); err != nil {
		t.Fatal(err)
	}
	// The organization's mapping, in cell us: a split verify reads the cell's member mappings
	// through it.
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite)
VALUES (1, 'a', 'A', now(), false, '', 'us', 0, false, false, false, false, false, false, false, false, false, false, false)`, r)); err != nil {
		t.Fatal(err)
	}
	want := ("2 sentry_organizationmembermapping row(s): their organizationmember_id is NULL (written before Sentry keyed them): Sentry's receiver finds replicas by that key only and never updates them")
	check := func(t *testing.T, out string) {
		t.Helper()
		var d struct {
			Summary []struct {
				InSync      int64   `json:"in_sync"`
				Missing     int64   `json:"missing"`
				NotCompared *string `json:"not_compared"`
			}
			Drift []struct {
				Drift    string
				ObjectID int64 `json:"object_id"`
			}
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(d.Summary) != 1 || d.Summary[0].InSync != 1 || d.Summary[0].Missing != 1 || d.Summary[0].NotCompared == nil || *d.Summary[0].NotCompared != want {
			t.Errorf("summary: %s", out)
		}
		if len(d.Drift) != 1 || d.Drift[0].ObjectID != 11 || d.Drift[0].Drift != "missing" {
			t.Errorf("drift: %s", out)
		}
	}
	t.Run("split", func(t *testing.T) {
		out, _ := splitRun(t, cellSchema, controlSchema)(cmd.ExitDrift, "verify", "organizationmember", "-o", "json", "--fail-on-drift")
		check(t, out)
	})
	t.Run("monolith", func(t *testing.T) {
		out, _ := mustRun(t, cmd.ExitDrift, controlSchema, "--cell", "us", "verify", "organizationmember", "-o", "json", "--fail-on-drift")
		check(t, out)
	})
}
