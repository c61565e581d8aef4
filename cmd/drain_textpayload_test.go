package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestDrainRefusesATextPayloadThatIsNotJSON: in a text payload column (Sentry before Aug
// 2025) a payload that is not JSON cannot be loaded by Sentry; drain with an exec handler
// fails that message (exit 1, one line naming it and what to do) without running the
// handler, and the row stays. A JSON text payload is delivered as JSON.
func TestDrainRefusesATextPayloadThatIsNotJSON(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText})
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, Payload: testdb.Str("not json {")},
		testdb.Row{Scope: 0, Shard: 2, Category: 2, Object: 2, Payload: testdb.Str(`{"a":1}`)})
	got := filepath.Join(t.TempDir(), "got")
	handler := "exec:cat >> " + got
	_, errOut := mustRun(t, 1, schema, "drain", "organization", "1", "--yes", "--handler", handler)
	if !strings.Contains(errOut, "its payload is not valid JSON (starts \"not json {\"): Sentry cannot load this row") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if b, err := os.ReadFile(got); err == nil && len(b) > 0 {
		t.Errorf("the handler was given the message: %s", b)
	}
	if left := remainingIDs(t, schema); len(left) != 2 || !left[fmt.Sprint(ids[0])] {
		t.Errorf("rows left %v, want both (%v)", left, ids)
	}
	mustRun(t, 0, schema, "drain", "organization", "2", "--yes", "--handler", handler)
	if b, err := os.ReadFile(got); err != nil || !strings.Contains(string(b), `"payload":{"a":1}`) {
		t.Errorf("the JSON text payload: %s (%v)", b, err)
	}
}
