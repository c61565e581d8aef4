package replica

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestDriftVerdict: an object missing, stale or orphan is drift (9), whatever is pending;
// only pending objects are "not yet" (8); all in sync is no verdict.
func TestDriftVerdict(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		counts Counts
		code   int
		msg    string
	}{
		{Counts{}, exitcode.ExitOK, ""},
		{Counts{Pending: 2}, exitcode.ExitPending, "verify: 2 object(s) pending: their outbox rows are queued"},
		{Counts{Stale: 1, Pending: 2}, exitcode.ExitDrift, "verify: 1 object(s) missing, stale or orphan, 2 pending"},
	} {
		err := DriftVerdict([]Result{{Counts: tt.counts}})
		if got := exitcode.Code(context.Background(), err); got != tt.code || (err != nil) != (tt.msg != "") || err != nil && err.Error() != tt.msg {
			t.Errorf("%+v: exit %d, %v; want %d, %q", tt.counts, got, err, tt.code, tt.msg)
		}
	}
}
