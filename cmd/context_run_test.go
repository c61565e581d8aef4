package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/render"
)

const twoContexts = `current-context: us
contexts:
  us:
    dsn: postgres://sentry:hunter2@db-us.internal:5432/sentry
    schema: public
  control:
    dsn-env: CONTROL_DSN
    silo: control
    cell: us
`

// contextApp is the app for the context commands with OUTBOXCTL_CONFIG at path, printing
// tab-separated text as off a terminal.
func contextApp(path string) (*app, *strings.Builder, *strings.Builder) {
	streams, _, _ := render.Test()
	var out, errOut strings.Builder
	streams.Out, streams.Err = &out, &errOut
	getenv := func(k string) string {
		if k == config.EnvConfig {
			return path
		}
		return ""
	}
	return &app{io: streams, getenv: getenv}, &out, &errOut
}

// TestRunContextDirect calls the context commands' run functions: list marks the current
// context and redacts the password; show resolves a context with a flag winning over it;
// use rewrites current-context; an unknown name is a usage error (exit 2) changing nothing;
// without a file list says where it looked.
func TestRunContextDirect(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}

	a, out, errOut := contextApp(path)
	if err := runContextList(a.factory(), a.configFile); err != nil {
		t.Fatal(err)
	}
	want := "current\tname\tconnects_to\tsilo\tcell\tschema\n" +
		"\tcontrol\t$CONTROL_DSN\tcontrol\tus\t\n" +
		"*\tus\tpostgres://sentry:xxxxx@db-us.internal:5432/sentry\t\t\tpublic\n"
	if out.String() != want || errOut.Len() != 0 {
		t.Errorf("list: stdout\n%s\nwant\n%s\nstderr %q", out, want, errOut)
	}

	a, out, _ = contextApp(path)
	schema := "other"
	if err := runContextShow(a.factory(), a.configFile, contextShowOptions{overrides: config.Overrides{Schema: &schema}}); err != nil {
		t.Fatal(err)
	}
	want = "key\tvalue\tsource\n" +
		"dsn\tpostgres://sentry:xxxxx@db-us.internal:5432/sentry\tcontext us, line 4\n" +
		"replica-dsn\t\tdefault\n" +
		"schema\tother\tflag --schema\n" +
		"silo\tcell\tdefault\n" +
		"cell\t\tdefault\n" +
		"table\t\tdefault\n" +
		"redis-url\t\tdefault\n" +
		"statement-timeout\t30s\tdefault\n" +
		"lock-timeout\t2s\tdefault\n" +
		"connect-timeout\t5s\tdefault\n"
	if out.String() != want {
		t.Errorf("show:\n%s\nwant\n%s", out, want)
	}

	a, out, errOut = contextApp(path)
	if err := runContextUse(a.factory(), a.configFile, "control"); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(twoContexts, "current-context: us", "current-context: control", 1); string(written) != want || out.Len() != 0 ||
		errOut.String() != "current context: control ("+path+")\n" {
		t.Errorf("use control: file\n%s\nstdout %q, stderr %q", written, out, errOut)
	}

	a, _, _ = contextApp(path)
	err = runContextUse(a.factory(), a.configFile, "eu")
	if want := `no context "eu" in ` + path + ` (known contexts: control, us)`; err == nil || err.Error() != want || exitCode(context.Background(), err) != ExitUsage {
		t.Errorf("use eu: %v (exit %d), want %q (exit 2)", err, exitCode(context.Background(), err), want)
	}
	if again, _ := os.ReadFile(path); string(again) != string(written) {
		t.Errorf("a refused use changed the file:\n%s", again)
	}

	// No file: nothing on stdout (an empty table), a note saying where it looked.
	xdg := t.TempDir()
	a, out, errOut = contextApp("")
	a.getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	if err := runContextList(a.factory(), a.configFile); err != nil {
		t.Fatal(err)
	}
	if want := "no config file at " + filepath.Join(xdg, "outboxctl", "config.yaml") + ": see docs/README.md#contexts\n"; out.Len() != 0 || errOut.String() != want {
		t.Errorf("list without a file: stdout %q, stderr %q, want %q", out, errOut, want)
	}
}
