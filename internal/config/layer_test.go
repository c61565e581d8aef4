package config_test

import (
	"errors"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/config"
)

// TestPick: which contexts each kind of command gets from the same selection.
func TestPick(t *testing.T) {
	t.Parallel()
	f, _, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	noEnv := env(nil)
	for _, tt := range []struct {
		name, spec string
		kind       config.Kind
		several    string
		one        string
		wantOne    bool // a *config.OneError
		wantErr    bool // another error (Select's or One's)
	}{
		{name: "fan-out of two", spec: "us,de", kind: config.Kind{FanOut: true, Read: true}, several: "us,de"},
		{name: "fan-out of one", spec: "de", kind: config.Kind{FanOut: true, Read: true}, one: "de"},
		{name: "fan-out of none", spec: "", kind: config.Kind{FanOut: true, Read: true}, one: "us"},
		{name: "split of two", spec: "us,control", kind: config.Kind{Several: true, Read: true}, several: "us,control"},
		{name: "split of one", spec: "control", kind: config.Kind{Several: true, Read: true}, one: "control"},
		{name: "multi of one", spec: "us", kind: config.Kind{Multi: true, Read: true}, several: "us"},
		{name: "streaming read of two", spec: "us,de", kind: config.Kind{Read: true}, wantOne: true},
		{name: "mutation of two", spec: "us,de", kind: config.Kind{}, wantErr: true},
		{name: "unknown context", spec: "eu", kind: config.Kind{FanOut: true}, wantErr: true},
	} {
		p, err := f.Pick(tt.spec, false, noEnv, tt.kind)
		var oe *config.OneError
		switch {
		case tt.wantOne:
			if !errors.As(err, &oe) || names(oe.Got) != "us,de" {
				t.Errorf("%s: %v, want a OneError of us,de", tt.name, err)
			}
			continue
		case tt.wantErr:
			if err == nil || errors.As(err, &oe) {
				t.Errorf("%s: %v, want Select's or One's error", tt.name, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		one := ""
		if p.One != nil {
			one = p.One.Name
		}
		if names(p.Several) != tt.several || one != tt.one {
			t.Errorf("%s: several %q one %q, want %q %q", tt.name, names(p.Several), one, tt.several, tt.one)
		}
	}
}

// TestLayer: a context goes under the flags the operator typed: its schema and timeouts
// where no flag says otherwise, its dsn (its replica-dsn for a read) as $OUTBOXCTL_DSN, its
// redis-url as $OUTBOXCTL_REDIS_URL, the rest of the environment as it was.
func TestLayer(t *testing.T) {
	t.Parallel()
	f, _, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	us, err := f.Context("us")
	if err != nil {
		t.Fatal(err)
	}
	flags := config.Flags{Schema: "typed", Silo: "cell", StatementTimeout: time.Minute, LockTimeout: time.Second, ConnectTimeout: time.Second}
	typed := func(name string) bool { return name == "schema" }
	base := env(map[string]string{"OUTBOXCTL_DSN": "postgres://elsewhere", "HOME": "/home/oncall"})
	for _, read := range []bool{false, true} {
		l, err := config.Layer(us, flags, typed, base, read)
		if err != nil {
			t.Fatal(err)
		}
		wantDSN := "postgres://sentry@db-us.internal:5432/sentry"
		if read {
			wantDSN = "postgres://sentry@db-us-replica.internal:5432/sentry"
		}
		if got := l.Getenv("OUTBOXCTL_DSN"); got != wantDSN {
			t.Errorf("read %v: $OUTBOXCTL_DSN %q, want %q", read, got, wantDSN)
		}
		if got := l.Getenv("OUTBOXCTL_REDIS_URL"); got != "redis://cache-us:6379/0" {
			t.Errorf("$OUTBOXCTL_REDIS_URL %q", got)
		}
		if got := l.Getenv("HOME"); got != "/home/oncall" {
			t.Errorf("$HOME %q", got)
		}
		if l.Flags.Schema != "typed" || l.Flags.Silo != "cell" || l.Flags.StatementTimeout == time.Minute {
			t.Errorf("flags %+v: want the typed schema kept and the context's (default) statement timeout", l.Flags)
		}
	}
}
