package cmd_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// sgr matches the colour codes of a terminal card.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestRescheduleReadsDueNow: on a terminal, reschedule's plan and card use the one time
// format: the schedule before in relative time, "due now" after (not "never attempted":
// the rows were attempted); JSON keeps Sentry's THE_PAST as it is.
func TestRescheduleReadsDueNow(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB})
	testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 42, Category: 2, Object: 1,
		ScheduledFrom: time.Now().Add(-time.Minute), ScheduledFor: time.Now().Add(10 * time.Minute)})
	io, out, errOut := render.Test()
	io.OutTTY = true
	code := cmd.Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "reschedule", "organization", "42", "--reason", "t", "--yes"}, io)
	plan := regexp.MustCompile(`(?m)^  - make shard ORGANIZATION_SCOPE/42 due now with a fresh backoff: 1 row\(s\), next attempt currently: in (9m\d+s|10m) \(reason: t\)$`)
	card := regexp.MustCompile(`^shard +ORGANIZATION_SCOPE/42 *\nmode +all-rows *\nrows +1 *\nnext_attempt_before +in (9m\d+s|10m) *\nnext_attempt +due now *\nnext +outboxctl --schema \S+ inspect shard organization 42 *\n$`)
	if code != cmd.ExitOK || !plan.MatchString(errOut.String()) || !card.MatchString(sgr.ReplaceAllString(out.String(), "")) {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	io, out, _ = render.Test()
	code = cmd.Main(context.Background(), []string{"--dsn", testdb.DSN(), "--schema", schema, "reschedule", "organization", "42", "--yes", "-o", "json"}, io)
	want := "{\n  \"shard\": \"ORGANIZATION_SCOPE/42\",\n  \"mode\": \"all-rows\",\n  \"rows\": 1,\n  \"next_attempt_before\": \"2016-08-01T00:00:00Z\",\n  \"next_attempt_after\": \"2016-08-01T00:00:00Z\",\n  \"next\": [\n    \"outboxctl --schema " + schema + " inspect shard organization 42\"\n  ]\n}\n"
	if code != cmd.ExitOK || out.String() != want {
		t.Errorf("json: exit %d, %q", code, out)
	}
}
