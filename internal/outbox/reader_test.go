package outbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestReaderPrints: a Reader that prints hands Print the script built for the target it is
// given, opens nothing and returns no results.
func TestReaderPrints(t *testing.T) {
	t.Parallel()
	var printed query.Script
	r := Reader{PrintOnly: true, Print: func(s query.Script) error { printed = s; return nil },
		Open: func(Check, func(*Snapshot) error) error { t.Fatal("a printing Reader opened a snapshot"); return nil }}
	tg := query.Target{Silo: query.SiloControl, Schema: "sentry"}
	res, err := r.Read(tg, func(t query.Target) query.Script { return query.Script{query.Message(t, 7)} })
	if err != nil || res != nil || len(printed) != 1 {
		t.Fatalf("Read = %v, %v; printed %d statements", res, err, len(printed))
	}
}

// TestReaderGuard: the printed kill-switch read is of the options table Sentry reads for
// the target's silo under --deployment: the control options table in a split deployment's
// control silo, sentry_option in a monolith.
func TestReaderGuard(t *testing.T) {
	t.Parallel()
	control := query.Target{Silo: query.SiloControl}
	for _, c := range []struct {
		dep  query.Deployment
		want string
	}{{query.DeploymentSplit, query.ControlOptionTable}, {query.DeploymentMonolith, query.OptionTable}} {
		r := Reader{PrintSchema: query.Schema{Deployment: c.dep}}
		text, err := query.Script{r.Guard(control)}.Render()
		if err != nil || !strings.Contains(text, c.want) {
			t.Errorf("Guard under %s = %q, %v; want a read of %s", c.dep, text, err, c.want)
		}
	}
}

// TestFailureIsAnAccount: a read's failure says its own account (cmd/exit.go's account: exit
// 1, never reworded as an interrupt).
func TestFailureIsAnAccount(t *testing.T) {
	t.Parallel()
	var a interface{ Account() bool }
	err := Failuref("no outbox row with id %d", 7)
	if !errors.As(err, &a) || !a.Account() || err.Error() != "no outbox row with id 7" {
		t.Fatalf("Failuref = %v: want an account", err)
	}
}
