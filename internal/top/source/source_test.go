package source

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/config"
)

func contexts(t *testing.T, yaml string) *config.File {
	t.Helper()
	f, err := config.Parse("outboxctl.yaml", []byte(yaml), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func contextOf(t *testing.T, f *config.File, name string) *config.Context {
	t.Helper()
	c, err := f.Context(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPermits: a printed command that writes is answered by the context's readonly and
// allow keys; a read, a line that is not a command, or no context at all is allowed (the
// command checks again itself when it runs).
func TestPermits(t *testing.T) {
	t.Parallel()
	f := contexts(t, "contexts:\n  ro:\n    readonly: true\n  some:\n    allow: [reschedule]\n")
	ro := New(Env{Context: contextOf(t, f, "ro")})
	some := New(Env{Context: contextOf(t, f, "some")})
	none := New(Env{})
	for _, c := range []struct {
		src     *Source
		command string
		refused bool
	}{
		{ro, "outboxctl --context ro reschedule organization 42 --reason x", true},
		{ro, "outboxctl --context ro shards --stuck", false},
		{ro, "outboxctl", false},
		{some, "outboxctl --context some reschedule organization 42 --reason x", false},
		{some, "outboxctl --context some skip 123", true},
		{none, "outboxctl skip 123", false},
	} {
		if err := c.src.Permits(c.command); (err != nil) != c.refused {
			t.Errorf("%s: %v, want refused %v", c.command, err, c.refused)
		}
	}
}

// TestHistorians: one reader per context with a prometheus-url, none for the others.
func TestHistorians(t *testing.T) {
	t.Parallel()
	f := contexts(t, "contexts:\n  us:\n    prometheus-url: http://127.0.0.1:9090\n  de:\n    schema: public\n")
	hs := Historians([]*config.Context{contextOf(t, f, "us"), contextOf(t, f, "de")}, time.Hour)
	if len(hs) != 1 || hs["us"] == nil {
		var names []string
		for n := range hs {
			names = append(names, n)
		}
		t.Fatalf("historians of %s, want us alone", strings.Join(names, ", "))
	}
}
