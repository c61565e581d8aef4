package cmd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// sentryControlOutboxes is a model of Sentry's ReplicatedControlModel.outboxes_for_update()
// for an object of the seeded layout, written from Sentry's source (src/sentry/hybridcloud/
// outbox/base.py, outbox/category.py's as_control_outboxes and infer_identifiers, the models'
// outbox_cell_names, src/sentry/types/cell.py), not from outboxctl's statements: one
// ControlOutbox per cell of outbox_cell_names(), shard_scope the category's scope,
// shard_identifier infer_identifiers' (ORGANIZATION_SCOPE: organization_id; API_TOKEN_SCOPE:
// the token's id), object_identifier the id, payload_for_update()'s None, region_name the
// cell, scheduled_for THE_PAST. In a monolith find_cells_for_orgs and find_all_cell_names
// answer SENTRY_MONOLITH_REGION; a slug reservation names its cell_name. A deletion's rows
// (gone: the object's replica is all that is left) are written for the verified cell only:
// outboxctl's documented choice (docs/replicas.md), the one cell whose replica it reads.
func sentryControlOutboxes(s testdb.ControlShape, pair string, id int64, split, gone bool, allCells []string) []string {
	org := 1 + id%int64(s.Orgs)
	orgCell := func(o int64) string {
		if !split {
			return s.Cell
		}
		if o%7 == 0 {
			return s.OtherCell
		}
		return s.Cell
	}
	var scope, category, shard int64
	var cells []string
	switch pair {
	case "apikey":
		scope, category, shard, cells = 0, 28, org, []string{orgCell(org)}
	case "orgauthtoken":
		scope, category, shard, cells = 0, 33, org, []string{orgCell(org)}
	case "apitoken":
		scope, category, shard, cells = 11, 32, id, []string{s.Cell}
		if split {
			cells = allCells
		}
	case "authidentity": // USER_SCOPE: the user; the cells of its provider's organization
		scope, category, shard, cells = 1, 25, id, []string{orgCell(org)}
	case "organizationslugreservation":
		cell := s.Cell
		if id%7 == 0 {
			cell = s.OtherCell
		}
		scope, category, shard, cells = 0, 27, id, []string{cell}
	}
	if gone {
		cells = []string{s.Cell}
	}
	slices.Sort(cells)
	var rows []string
	for _, c := range cells {
		rows = append(rows, fmt.Sprintf("%d %d %d %d NULL %s 2016-08-01T00:00:00Z", scope, shard, category, id, c))
	}
	return rows
}

// controlOutboxSince reads the control outbox rows of schema with an id above after, each as
// the model writes it, and checks their scheduled_from and date_added are the write's now().
func controlOutboxSince(t *testing.T, schema string, after int64, from, to time.Time) []string {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(`SELECT concat_ws(' ', shard_scope, shard_identifier, category, object_identifier,
       coalesce(payload::text, 'NULL'), region_name, to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
       scheduled_from, date_added
  FROM %s WHERE id > $1 ORDER BY id`, pgx.Identifier{schema, "sentry_controloutbox"}.Sanitize()), after)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		var sf, da time.Time
		if err := rows.Scan(&line, &sf, &da); err != nil {
			t.Fatal(err)
		}
		if sf.Before(from) || sf.After(to) || !sf.Equal(da) {
			t.Errorf("%s: scheduled_from %s, date_added %s, want the write's now() (between %s and %s)", line, sf, da, from, to)
		}
		out = append(out, line)
	}
	return out
}

func maxControlID(t *testing.T, schema string) int64 {
	t.Helper()
	var id int64
	if err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf("SELECT coalesce(max(id), 0) FROM %s",
		pgx.Identifier{schema, "sentry_controloutbox"}.Sanitize())).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// replicateControlCase is the objects both replicate tests write: missing, stale, reaching the
// other cell, and gone (orphans) of every pair.
func replicateControlCase(n int64) map[string][]int64 {
	return map[string][]int64{
		"apitoken":                    {3, 5, n + 2},
		"apikey":                      {3, 6, 7, n + 1},
		"orgauthtoken":                {5, 13, n + 2},
		"organizationslugreservation": {3, 7, n + 1},
		"authidentity":                {3, 6, 9, n + 1},
	}
}

func checkReplicatedControl(t *testing.T, got []string, shape testdb.ControlShape, split bool, allCells []string) {
	t.Helper()
	var want []string
	for _, p := range controlPairs { // replicate writes the pairs in verify's order, each object's cells in order
		for _, id := range replicateControlCase(int64(shape.N))[p] {
			want = append(want, sentryControlOutboxes(shape, p, id, split, id > int64(shape.N), allCells)...)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("control outbox rows written:\n%s\nSentry's outboxes_for_update() writes:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReplicateControlWritesSentrysRows: in a monolith replicate writes, for each object, the
// control outbox rows a model of Sentry's outboxes_for_update() writes, byte for byte; then
// verify --id shows the objects pending; --dry-run and --print-sql write nothing.
func TestReplicateControlWritesSentrysRows(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 100, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	before := maxControlID(t, schema)
	replicateArgs := func(pair string, extra ...string) []string {
		a := []string{"replicate", pair}
		for _, id := range replicateControlCase(int64(shape.N))[pair] {
			a = append(a, fmt.Sprint(id))
		}
		return append(a, extra...)
	}
	// One pair per run: replicate takes PAIR ID...
	_, errOut := mustRun(t, 0, schema, replicateArgs("apitoken", "--dry-run")...)
	if !strings.Contains(errOut, "write 3 API_TOKEN_UPDATE outbox row(s) into "+schema+".sentry_controloutbox for apitoken: 3, 5; deletion outbox (source gone): 102") {
		t.Fatalf("dry run plan: %s", errOut)
	}
	sql, _ := mustRun(t, 0, schema, replicateArgs("apitoken", "--print-sql")...)
	if !strings.Contains(sql, "INSERT INTO "+schema+".sentry_controloutbox") {
		t.Fatalf("--print-sql:\n%s", sql)
	}
	if maxControlID(t, schema) != before {
		t.Fatal("--dry-run or --print-sql wrote rows")
	}
	from := time.Now().Add(-time.Second)
	for _, p := range controlPairs {
		mustRun(t, 0, schema, replicateArgs(p, "--reason", "test", "--yes")...)
	}
	checkReplicatedControl(t, controlOutboxSince(t, schema, before, from, time.Now().Add(time.Second)), shape, false, nil)
	// The missing api key 3 is pending now, and would be missing until Sentry delivers it.
	out, _ := mustRun(t, cmd.ExitPending, schema, "verify", "apikey", "--id", "3", "-o", "json", "--fail-on-drift")
	if d := parseVerify(t, out); len(d.Drift) != 1 || d.Drift[0].Drift != "pending" || *d.Drift[0].WouldBe != "missing" {
		t.Fatalf("after replicate: %s", out)
	}
}

// TestReplicateControlSplit: across two contexts replicate writes into the control silo's
// outbox one row per cell the object reaches (an api token: every cell), reads a gone
// object's identifiers from the cell's replica, and says which objects reach no cell.
func TestReplicateControlSplit(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 100, Cell: "us", OtherCell: "eu"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, controlSchema, cellSchema, shape)
	split := splitRun(t, cellSchema, controlSchema)
	run := func(want int, args ...string) string {
		t.Helper()
		_, errOut := split(want, args...)
		return errOut
	}
	before := maxControlID(t, controlSchema)
	from := time.Now().Add(-time.Second)
	for _, p := range controlPairs {
		a := []string{"replicate", p}
		for _, id := range replicateControlCase(int64(shape.N))[p] {
			a = append(a, fmt.Sprint(id))
		}
		run(0, append(a, "--yes")...)
	}
	checkReplicatedControl(t, controlOutboxSince(t, controlSchema, before, from, time.Now().Add(time.Second)), shape, true, []string{"eu", "us"})
	if n := maxControlID(t, cellSchema); n != 0 {
		t.Errorf("the cell schema's control outbox got rows (max id %d)", n)
	}
	// A key of an organization without a mapping reaches no cell: nothing written (as Sentry), said so.
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_apikey (id, organization_id, label, key, status, date_added, scopes, scope_list)
VALUES (9999, 999, 'k', 'nomapping', 0, now(), 0, '{}')`, pgx.Identifier{controlSchema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	mid := maxControlID(t, controlSchema)
	if errOut := run(0, "replicate", "apikey", "9999", "--yes"); !strings.Contains(errOut, "apikey 9999: no cell to write for") || !strings.Contains(errOut, "nothing to replicate") {
		t.Errorf("a key reaching no cell: %s", errOut)
	}
	// A dry run with nothing to write says only why: no plan, no "nothing to replicate".
	if errOut := run(0, "replicate", "apikey", "9999", "--dry-run"); !strings.Contains(errOut, "apikey 9999: no cell to write for") || strings.Contains(errOut, "nothing to replicate") || strings.Contains(errOut, "dry run") {
		t.Errorf("a dry run reaching no cell: %s", errOut)
	}
	if maxControlID(t, controlSchema) != mid {
		t.Error("rows written for a key that reaches no cell")
	}
	// An id neither side has: nothing written, a failure.
	run(cmd.ExitError, "replicate", "apikey", "77777", "--yes")
}

// TestReplicateControlFromVerifyJSON: replicate --from verify's JSON of the control -> cell
// pairs writes the missing and stale objects' rows; verify then lists none of them missing
// or stale (pending instead), and the orphans are left alone.
func TestReplicateControlFromVerifyJSON(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 100, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	out, _ := mustRun(t, cmd.ExitDrift, schema, append([]string{"verify", "-o", "json", "--limit", "0", "--fail-on-drift"}, controlPairs...)...)
	file := filepath.Join(t.TempDir(), "drift.json")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	orphans := 0
	for _, d := range parseVerify(t, out).Drift {
		if d.Drift == "orphan" {
			orphans++
		}
	}
	mustRun(t, 0, schema, "replicate", "--from", file, "--drift", "missing,stale", "--reason", "test", "--yes")
	out, _ = mustRun(t, cmd.ExitDrift, schema, append([]string{"verify", "-o", "json", "--limit", "0", "--fail-on-drift"}, controlPairs...)...)
	left := 0
	for _, d := range parseVerify(t, out).Drift {
		switch d.Drift {
		case "missing", "stale":
			t.Errorf("%s %d still %s after replicate", d.Pair, d.ObjectID, d.Drift)
		case "orphan":
			left++
		}
	}
	if left != orphans || orphans == 0 {
		t.Errorf("%d orphans after, %d before: replicate --drift missing,stale left them alone", left, orphans)
	}
}
