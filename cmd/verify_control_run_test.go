package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// controlPairs are the control -> cell pairs, in verify's order.
var controlPairs = []string{"apitoken", "apikey", "orgauthtoken", "organizationslugreservation", "authidentity"} //nolint:gochecknoglobals // test value

// checkControlAgainstModel compares verify's JSON of the control pairs with the model.
func checkControlAgainstModel(t *testing.T, d verifyDoc, shape testdb.ControlShape, split bool) {
	t.Helper()
	var want []testdb.ModelDrift
	inSync := map[string]int64{}
	for _, p := range controlPairs {
		ds, n := testdb.ControlModel(shape, p, split)
		want, inSync[p] = append(want, ds...), n
	}
	got := make([]string, len(d.Drift))
	for i, g := range d.Drift {
		var fields []string
		for f := range g.Fields {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		would := ""
		if g.WouldBe != nil {
			would = *g.WouldBe
		}
		got[i] = fmt.Sprintf("%s %d %s %s %v", g.Pair, g.ObjectID, g.Drift, would, fields)
	}
	wantLines := make([]string, len(want))
	for i, w := range want {
		wantLines[i] = fmt.Sprintf("%s %d %s %s %v", w.Pair, w.Object, w.Class, w.Would, w.Fields)
	}
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("drift differs from the model:\n%s", lineDiff(wantLines, got))
	}
	if len(d.Summary) != len(controlPairs) {
		t.Fatalf("%d summary rows, want %d", len(d.Summary), len(controlPairs))
	}
	for _, s := range d.Summary {
		if s.InSync != inSync[s.Pair] {
			t.Errorf("%s: in sync %d, the model says %d", s.Pair, s.InSync, inSync[s.Pair])
		}
	}
	// Every class of every pair is in the layout: a test that cannot fail would not be.
	classes := map[string]bool{}
	for _, w := range want {
		classes[w.Pair+" "+w.Class] = true
	}
	for _, p := range controlPairs {
		for _, c := range []string{"missing", "stale", "orphan", "pending"} {
			if !classes[p+" "+c] {
				t.Errorf("the layout has no %s %s object", c, p)
			}
		}
	}
}

// lineDiff says which lines only one side has.
func lineDiff(want, got []string) string {
	in := func(l string, ls []string) bool {
		for _, x := range ls {
			if x == l {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	for _, l := range want {
		if !in(l, got) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !in(l, want) {
			b.WriteString("+ " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "(%d lines wanted, %d got)", len(want), len(got))
	return b.String()
}

// TestVerifyControlMonolith verifies the control -> cell pairs in one database: every object
// exactly as the model says, exit 9 under --fail-on-drift.
func TestVerifyControlMonolith(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 250, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	out, _ := mustRun(t, cmd.ExitDrift, schema, append([]string{"verify", "-o", "json", "--limit", "0", "--fail-on-drift"}, controlPairs...)...)
	checkControlAgainstModel(t, parseVerify(t, out), shape, false)
}

// TestVerifyControlSplit verifies the control -> cell pairs across two contexts: the cell
// context's replicas against the sources that reach it, as the model says.
func TestVerifyControlSplit(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 250, Cell: "us", OtherCell: "eu"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, controlSchema, cellSchema, shape)
	out, _ := splitRun(t, cellSchema, controlSchema)(0, append([]string{"verify", "-o", "json", "--limit", "0"}, controlPairs...)...)
	checkControlAgainstModel(t, parseVerify(t, out), shape, true)
}

// splitRun is a runner of outboxctl --context us,control (us the cell schema, control the
// control one): its stdout and stderr, the exit code checked.
func splitRun(t *testing.T, cellSchema, controlSchema string) func(want int, args ...string) (string, string) {
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		testdb.DSN(), cellSchema, controlSchema))
	return func(want int, args ...string) (string, string) {
		t.Helper()
		io, out, errOut := render.Test()
		io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
		if code := cmd.Main(context.Background(), append([]string{"--context", "us,control"}, args...), io); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s", args, code, want, errOut)
		}
		return out.String(), errOut.String()
	}
}

// TestVerifyControlNeverPrintsSecrets: a stale api key, api token or org auth token shows
// that its secret differs (a hash prefix of each side) and never the secret itself, in the
// table, in JSON and under --print-sql.
func TestVerifyControlNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 60, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	var secrets []string
	for _, q := range []string{
		"SELECT token FROM %[1]s.sentry_apitoken UNION ALL SELECT hashed_token FROM %[1]s.sentry_apitoken",
		"SELECT token FROM %[1]s.hybridcloud_apitokenreplica UNION ALL SELECT hashed_token FROM %[1]s.hybridcloud_apitokenreplica",
		"SELECT key FROM %[1]s.sentry_apikey UNION ALL SELECT key FROM %[1]s.hybridcloud_apikeyreplica",
		"SELECT token_hashed FROM %[1]s.sentry_orgauthtoken UNION ALL SELECT token_hashed FROM %[1]s.hybridcloud_orgauthtokenreplica",
		"SELECT substr(data, 17) FROM %[1]s.sentry_authidentity UNION ALL SELECT substr(data, 17) FROM %[1]s.sentry_authidentityreplica",
	} {
		rows, err := testdb.Pool(t).Query(context.Background(), fmt.Sprintf(q, pgx.Identifier{schema}.Sanitize()))
		if err != nil {
			t.Fatal(err)
		}
		s, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s...)
	}
	if len(secrets) < 7*shape.N {
		t.Fatalf("%d secrets read", len(secrets))
	}
	var outputs, stdouts []string
	for _, args := range [][]string{
		{"verify", "--limit", "0"}, {"verify", "-o", "json", "--limit", "0"}, {"verify", "-o", "jsonl", "--limit", "0"}, {"verify", "--print-sql"},
	} {
		out, errOut := mustRun(t, 0, schema, append(args, controlPairs...)...)
		outputs, stdouts = append(outputs, out+errOut), append(stdouts, out)
	}
	for _, out := range outputs {
		for _, s := range secrets {
			// A 16-hex-digit window of any secret is enough to call it printed.
			for _, part := range []string{s, s[:16], s[len(s)-16:]} {
				if strings.Contains(out, part) {
					t.Fatalf("a secret (%s…) is in verify's output:\n%s", s[:4], out)
				}
			}
		}
	}
	// The stale key (apikey 7) says both sides' hash prefixes, which differ.
	d := parseVerify(t, stdouts[1]) // stderr holds the summary's note
	var found bool
	for _, g := range d.Drift {
		if g.Pair == "apikey" && g.ObjectID == 7 {
			found = true
			var key struct{ Source, Replica string }
			if err := json.Unmarshal(g.Fields["key"], &key); err != nil || !strings.HasPrefix(key.Source, "digest:") ||
				!strings.HasPrefix(key.Replica, "digest:") || key.Source == key.Replica || len(key.Source) != len("digest:")+16 {
				t.Errorf("apikey 7's key: %s", g.Fields["key"])
			}
		}
	}
	if !found {
		t.Fatal("apikey 7 (a stale key) not listed")
	}
}

// TestVerifyControlPendingNextRuns: a pending control -> cell object's next names the control
// outbox's shard (--silo control), and runs as printed.
func TestVerifyControlPendingNextRuns(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 60, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	// apikey 3 is missing, its row in backoff: reschedule its shard (organization 1 + 3 % 30).
	next := func() string {
		t.Helper()
		out, _ := mustRun(t, 0, schema, "verify", "apikey", "--id", "3", "-o", "json")
		d := parseVerify(t, out)
		if len(d.Drift) != 1 || d.Drift[0].Drift != "pending" {
			t.Fatalf("apikey 3: %s", out)
		}
		return d.Drift[0].Next
	}
	want := "outboxctl --schema " + schema + " --silo control --cell --monolith-- reschedule organization 4 --reason 'replicate: deliver the queued outbox'"
	if got := next(); got != want {
		t.Fatalf("next: %s, want %s", got, want)
	}
	mustRun(t, 0, schema, "--silo", "control", "--cell", "--monolith--", "reschedule", "organization", "4", "--reason", "replicate: deliver the queued outbox", "--yes")
	// Now due: wait for Sentry's workers, or inspect the control shard.
	if got := next(); !strings.Contains(got, "outboxctl --schema "+schema+" --silo control --cell --monolith-- inspect shard organization 4") {
		t.Fatalf("after reschedule: %s", got)
	}
	mustRun(t, 0, schema, "--silo", "control", "--cell", "--monolith--", "inspect", "shard", "organization", "4")
}

// TestVerifyControlSplitAcrossTimeZones: the two sides' values are compared as text, and a
// timestamp's text depends on the session's TimeZone. Two servers with different defaults
// (the control side here in Asia/Tokyo, the cell in the server's) must still agree: both
// sides are read in UTC, so the model's answer is unchanged.
func TestVerifyControlSplitAcrossTimeZones(t *testing.T) {
	t.Parallel()
	verifyControlSplitUnder(t, "timezone=Asia/Tokyo")
}

// TestVerifyControlSplitAcrossTextSettings: besides TimeZone, DateStyle, IntervalStyle,
// extra_float_digits and bytea_output change the text of a value. A control context whose
// server (here its dsn's startup parameters) renders dates as SQL, DMY, intervals in the
// SQL standard's style, floats with fewer digits and bytea as escapes must still agree with
// a cell in the defaults: both sides are read with the same settings, so the model's answer
// is unchanged (an expires_at in another DateStyle failed to read, or would be stale).
func TestVerifyControlSplitAcrossTextSettings(t *testing.T) {
	t.Parallel()
	verifyControlSplitUnder(t, "DateStyle=SQL,DMY&IntervalStyle=sql_standard&extra_float_digits=0&bytea_output=escape")
}

// verifyControlSplitUnder verifies the control -> cell pairs across two contexts whose
// control dsn adds params (startup parameters the server's session takes), and checks the
// answer is the model's.
func verifyControlSplitUnder(t *testing.T, params string) {
	t.Helper()
	shape := testdb.ControlShape{Orgs: 30, N: 250, Cell: "us", OtherCell: "eu"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, controlSchema, cellSchema, shape)
	sep := "&"
	if !strings.Contains(testdb.DSN(), "?") {
		sep = "?"
	}
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %s\n    schema: %s\n  control:\n    dsn: %s\n    schema: %s\n",
		testdb.DSN(), cellSchema, testdb.DSN()+sep+params, controlSchema))
	io, out, errOut := render.Test()
	io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
	if code := cmd.Main(context.Background(), append([]string{"--context", "us,control", "verify", "-o", "json", "--limit", "0"}, controlPairs...), io); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	checkControlAgainstModel(t, parseVerify(t, out.String()), shape, true)
}

// TestVerifyCellFlagInNext: verify --cell names the cell whose control outbox rows count as
// pending and for which a control model's rows are written: its replicate next repeats it,
// and run as printed writes the row for that cell (not the monolith's); replicate's verify
// next repeats it too.
func TestVerifyCellFlagInNext(t *testing.T) {
	t.Parallel()
	shape := testdb.ControlShape{Orgs: 30, N: 60, Cell: "--monolith--", OtherCell: "eu"}
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedControlReplicas(t, schema, schema, shape)
	// apikey 6 is missing for cell eu (and nothing is queued for it there).
	out, _ := mustRun(t, 0, schema, "verify", "apikey", "--id", "6", "--cell", "eu", "-o", "json")
	d := parseVerify(t, out)
	want := "outboxctl --schema " + schema + " --cell eu replicate apikey 6"
	if len(d.Drift) != 1 || d.Drift[0].Drift != "missing" || d.Drift[0].Next != want {
		t.Fatalf("apikey 6 for cell eu: want missing, next %q:\n%s", want, out)
	}
	code, out, errOut := runPrinted(t, d.Drift[0].Next, "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", want, code, errOut)
	}
	var cell string
	if err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf("SELECT region_name FROM %s.sentry_controloutbox ORDER BY id DESC LIMIT 1",
		pgx.Identifier{schema}.Sanitize())).Scan(&cell); err != nil || cell != "eu" {
		t.Fatalf("the row written is for cell %q (%v), want eu", cell, err)
	}
	if wantNext := "outboxctl --schema " + schema + " --cell eu verify apikey --id 6"; !strings.Contains(out, `"next": "`+wantNext+`"`) {
		t.Fatalf("replicate's next: want %q:\n%s", wantNext, out)
	}
}
