package status

import (
	"context"
	"errors"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestReportVerdict: a malformed option is its own error, unreadable cursors exit 1, and
// tables not complete exit 8 only with --exit-status.
func TestReportVerdict(t *testing.T) {
	t.Parallel()
	bad := errors.New("malformed option")
	for _, tt := range []struct {
		rep        Report
		exitStatus bool
		code       int
	}{
		{Report{Incomplete: 1, Rows: make([]Row, 2)}, false, exitcode.ExitOK},
		{Report{Incomplete: 1, Rows: make([]Row, 2)}, true, exitcode.ExitPending},
		{Report{Failed: 1, Incomplete: 1}, true, exitcode.ExitError},
		{Report{Snapshot: Snapshot{OptionErr: bad}, Failed: 1}, true, exitcode.ExitError},
	} {
		err := tt.rep.Verdict(tt.exitStatus)
		if got := exitcode.Code(context.Background(), err); got != tt.code {
			t.Errorf("%+v, --exit-status %v: exit %d (%v), want %d", tt.rep, tt.exitStatus, got, err, tt.code)
		}
	}
	if err := (Report{Snapshot: Snapshot{OptionErr: bad}}).Verdict(false); !errors.Is(err, bad) {
		t.Errorf("a malformed option: %v, want it as it is", err)
	}
	if err := (Report{Incomplete: 1, Rows: make([]Row, 2)}).Verdict(true); err == nil || err.Error() != "1 of 2 table(s) not complete" {
		t.Errorf("not complete: %v", err)
	}
}
