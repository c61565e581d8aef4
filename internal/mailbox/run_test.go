package mailbox

import (
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestTargetOf: the mailbox table in the schema given with the cell as its filter; a schema
// that is no identifier and a cell holding a NUL byte are the operator's to fix (exit 2).
func TestTargetOf(t *testing.T) {
	t.Parallel()
	tg, err := TargetOf("sentry", "us")
	if err != nil || tg.Schema != "sentry" || tg.Cell != "us" || !query.IsMailboxTable(tg) {
		t.Fatalf("TargetOf(sentry, us) = %+v, %v", tg, err)
	}
	for _, c := range [][2]string{{"bad\x00schema", ""}, {"", "u\x00s"}} {
		_, err := TargetOf(c[0], c[1])
		u, ok := err.(interface{ UsageError() bool })
		if !ok || !u.UsageError() {
			t.Errorf("TargetOf(%q, %q) = %v, want a usage error", c[0], c[1], err)
		}
	}
}
