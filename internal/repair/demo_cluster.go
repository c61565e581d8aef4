package repair

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/pgtmp"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// DemoClusterUp is demo up: it finds or starts the demo's server (user: the DSN set, if
// any; pgtmp.DemoUp), says what it found or did with notef, and returns the export line for
// stdout ("" when the user's database is used: nothing to point at).
func DemoClusterUp(ctx context.Context, getenv func(string) string, user string, notef func(format string, args ...any)) (string, error) {
	statePath, err := pgtmp.DemoStatePath(getenv)
	if err != nil {
		return "", err
	}
	e := pgtmp.MachineEnv()
	e.Getenv = getenv
	up, err := pgtmp.DemoUp(ctx, e, user, statePath)
	if err != nil {
		return "", failuref("demo up: %v", err)
	}
	switch {
	case up.Source == pgtmp.FromUser:
		notef("a database is set (--dsn, OUTBOXCTL_DSN or the libpq variables): the demo uses it; nothing started")
		return "", nil
	case up.Source == pgtmp.FromLocal:
		notef("PostgreSQL answers at 127.0.0.1:5432: the demo uses it; nothing started (OUTBOXCTL_THROWAWAY=1 starts a throwaway anyway)")
	case up.Started:
		notef("started a throwaway PostgreSQL from %s in %s; it runs until: outboxctl demo down", up.BinDir, up.Dir)
	default:
		notef("the demo's throwaway PostgreSQL in %s is up already; stop it with: outboxctl demo down", up.Dir)
	}
	return "export OUTBOXCTL_DSN=" + textsafe.ShellQuote(up.DSN), nil
}

// DemoClusterDown is demo down: it stops and removes the cluster demo up started (only
// that one), and says so with notef; with none running it says that, and succeeds.
func DemoClusterDown(getenv func(string) string, notef func(format string, args ...any)) error {
	statePath, err := pgtmp.DemoStatePath(getenv)
	if err != nil {
		return err
	}
	st, ok, err := pgtmp.DemoDown(statePath)
	if err != nil {
		return failuref("demo down: %v", err)
	}
	if !ok {
		notef("no demo cluster is running (outboxctl demo up starts one)")
		return nil
	}
	notef("stopped and removed the demo's throwaway PostgreSQL in %s; unset OUTBOXCTL_DSN", st.Dir)
	return nil
}
