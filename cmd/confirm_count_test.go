package cmd

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/repair"
)

// TestConfirmCountTypedBack: on a terminal, a bulk repair of more than 100 shards proceeds
// only when the count is typed back; "y" declines (exit 2); 100 shards take a y; --yes and
// off a terminal behave as for every mutation.
func TestConfirmCountTypedBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tty    bool
		answer string
		yes    bool
		n      int
		ok     bool
	}{
		{true, "101\n", false, 101, true},
		{true, " 101 \n", false, 101, true},
		{true, "y\n", false, 101, false},
		{true, "100\n", false, 101, false},
		{true, "y\n", false, 100, true},
		{false, "", true, 5000, true},
		{false, "5000\n", false, 5000, false},
	} {
		a, _ := directApp("", c.tty, c.answer)
		err := a.confirm("outboxctl reschedule", repair.Plan{Lines: []string{"plan"}, Shards: c.n}, c.yes)
		if (err == nil) != c.ok {
			t.Errorf("tty=%v answer=%q yes=%v n=%d: %v, want ok=%v", c.tty, c.answer, c.yes, c.n, err, c.ok)
		}
		if err != nil && exitCode(context.Background(), err) != ExitUsage {
			t.Errorf("refusal exits %d, want 2", exitCode(context.Background(), err))
		}
	}
}
