package cmd_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestBackfillGatesOneAnswer: doctor, backfill status and killswitch list name the same
// gated backfills (backfill.GateOf over the option Sentry reads): an option set below the
// coded version, an unset option (Sentry's default 0), and not an option set in an options
// table Sentry does not read here, nor one at the coded version (#26).
func TestBackfillGatesOneAnswer(t *testing.T) {
	schema := testdb.Schema(t, fixture.Options{})
	for _, s := range []string{
		`INSERT INTO ` + schema + `.sentry_option (key, value, last_updated) VALUES ('` + backfill.OptionKey("sentry_organization") + `', '2'::jsonb, now())`,
		`INSERT INTO ` + schema + `.sentry_option (key, value, last_updated) VALUES ('` + backfill.OptionKey("sentry_apikey") + `', '3'::jsonb, now())`,
		// A monolith reads sentry_option for both outboxes: this one is not what Sentry reads.
		`INSERT INTO ` + schema + `.sentry_controloption (key, value, last_updated) VALUES ('` + backfill.OptionKey("sentry_team") + `', '1'::jsonb, now())`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, tb := range backfill.Registered(nil) {
		if tb.Name != "sentry_apikey" {
			want = append(want, tb.Name)
		}
	}

	out, _ := mustRun(t, 0, schema, "backfill", "status", "-o", "json")
	var rows []struct {
		Table string `json:"table"`
		Gated bool   `json:"gated"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("backfill status -o json: %v\n%s", err, out)
	}
	var status []string
	for _, r := range rows {
		if r.Gated {
			status = append(status, r.Table)
		}
	}

	out, _ = mustRun(t, 0, schema, "killswitch", "list", "-o", "json")
	var listing struct {
		Gates []struct {
			Key string `json:"key"`
		} `json:"backfill_gates"`
	}
	if err := json.Unmarshal([]byte(out), &listing); err != nil {
		t.Fatalf("killswitch list -o json: %v\n%s", err, out)
	}
	var listed []string
	for _, g := range listing.Gates {
		listed = append(listed, strings.TrimSuffix(strings.TrimPrefix(g.Key, "outbox_replication."), ".replication_version"))
	}

	code, out, errOut := runCLI(t, schema, "doctor", "--check", "backfill", "-o", "json")
	if code != 0 && code != 4 { // 4: a warning finding
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
	var findings []struct {
		Evidence map[string]any `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	var doctor []string
	for _, f := range findings {
		if n, ok := f.Evidence["tables"].(string); ok && f.Evidence["gated_by_default"] != nil {
			doctor = append(doctor, strings.Split(n, ",")...)
		}
		if n, ok := f.Evidence["table"].(string); ok {
			doctor = append(doctor, n)
		}
	}
	slices.Sort(status)
	slices.Sort(listed)
	slices.Sort(doctor)
	for name, got := range map[string][]string{"backfill status": status, "killswitch list": listed, "doctor": doctor} {
		if !slices.Equal(got, want) {
			t.Errorf("%s names the gated backfills\n %v\nwant\n %v", name, got, want)
		}
	}
}
