package exitcode_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestPrintOutcome: a service's Outcome is said as cmd's own errors are: its line, its Try:
// line, and its meaning's exit code, wrapped or not.
func TestPrintOutcome(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&exitcode.Outcome{Means: exitcode.Usage, Msg: "bad", Try: "outboxctl verify"},
		fmt.Errorf("wrapped: %w", &exitcode.Outcome{Means: exitcode.Usage, Msg: "bad", Try: "outboxctl verify"}),
	} {
		var w bytes.Buffer
		exitcode.Print(context.Background(), &w, err, "outboxctl verify")
		want := "Error: " + err.Error() + "\nTry: outboxctl verify\n"
		if w.String() != want || exitcode.Code(context.Background(), err) != exitcode.ExitUsage {
			t.Errorf("%v: %q, exit %d; want %q, 2", err, w.String(), exitcode.Code(context.Background(), err), want)
		}
	}
}
