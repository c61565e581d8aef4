package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/render"
)

// testEnumsFactory is the factory of the enums commands on test streams, printing as -o output.
func testEnumsFactory(output string) (factory, *bytes.Buffer) {
	streams, out, _ := render.Test()
	a := &app{io: streams, getenv: streams.Getenv, g: globalOptions{Output: output}, reg: enums.Builtin()}
	return a.factory(), out
}

// TestRunEnumsDirect calls the enums run functions with their dependencies, without the
// binary: resolve prints one line per match without -o and CSV rows with it; list scopes
// prints the scopes only; lint reports each problem and exits 1, or says there is none.
func TestRunEnumsDirect(t *testing.T) {
	t.Parallel()
	d, out := testEnumsFactory("")
	if err := runEnumsResolve(d, enumsResolveOptions{Query: "11"}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "TEAM_UPDATE (11)  category in ORGANIZATION_SCOPE\nAPI_TOKEN_SCOPE (11)  scope\n" {
		t.Fatalf("resolve 11 = %q", got)
	}
	d, out = testEnumsFactory("csv")
	if err := runEnumsResolve(d, enumsResolveOptions{Query: "organization"}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "kind,name,value,scope,retired\nscope,ORGANIZATION_SCOPE,0,,false\n" {
		t.Fatalf("resolve organization -o csv = %q", got)
	}
	d, _ = testEnumsFactory("")
	err := runEnumsResolve(d, enumsResolveOptions{Query: "ORGANIZATON_UPDATE"})
	if err == nil || err.Error() != "unknown category or scope \"ORGANIZATON_UPDATE\"; did you mean ORGANIZATION_UPDATE? (run `outboxctl enums list` to see every name)" ||
		exitCode(context.Background(), err) != ExitUsage {
		t.Fatalf("resolve of a typo = %v, want a usage error", err)
	}

	o := enumsListOptions{Args: []string{"scopes"}}
	d, out = testEnumsFactory("csv")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := runEnumsList(d, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != "value,name,tag,retired,killswitch_option,categories" || !strings.HasPrefix(lines[1], "0,ORGANIZATION_SCOPE,") || strings.Contains(out.String(), "SEER_RUN_CREATE,0") {
		t.Fatalf("list scopes -o csv = %q", out.String())
	}
	if err := (enumsListOptions{Args: []string{"cats"}}).Validate(); err == nil || err.Error() != `enums list takes categories, scopes or nothing; got "cats"` {
		t.Fatalf("list cats: %v", err)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "category.py")
	src := "from enum import IntEnum\n\n\nclass OutboxCategory(IntEnum):\n    A = 0\n    B = 0\n\n\nclass OutboxScope(IntEnum):\n    ORGANIZATION_SCOPE = scope_categories(0, {OutboxCategory.A, OutboxCategory.B})\n"
	if err := os.WriteFile(bad, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	d, out = testEnumsFactory("")
	err = runEnumsLint(d, enumsLintOptions{Path: bad})
	if err == nil || err.Error() != "1 problem(s) in "+bad || exitCode(context.Background(), err) != ExitError ||
		out.String() != bad+":6: category integer 0 is reused by A and B\n" {
		t.Fatalf("lint = %v, out %q", err, out.String())
	}
}

// TestRunVersionDirect: the -ldflags values win over the build information, which fills in
// what they leave empty; without either, "(devel)" and "unknown".
func TestRunVersionDirect(t *testing.T) {
	t.Parallel()
	info := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		o    versionOptions
		info func() (*debug.BuildInfo, bool)
		want string
	}{
		{versionOptions{}, info, "outboxctl v1.2.3 (commit abc123)\n"},
		{versionOptions{Version: "v9.9.9"}, info, "outboxctl v9.9.9 (commit abc123)\n"},
		{versionOptions{Version: "v9.9.9", Commit: "fff"}, info, "outboxctl v9.9.9 (commit fff)\n"},
		{versionOptions{}, none, "outboxctl (devel) (commit unknown)\n"},
		{versionOptions{Version: "v1.0.0", Commit: "fff", Date: "2026-12-01T00:00:00Z"}, none, "outboxctl v1.0.0 (commit fff, built 2026-12-01T00:00:00Z)\n"},
	} {
		io, out, _ := render.Test()
		if err := tc.o.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := runVersion(factory{printer: render.NewPrinter(io, render.FormatAuto, true), buildInfo: tc.info, format: format{lines: true}}, tc.o); err != nil || out.String() != tc.want {
			t.Errorf("runVersion(%+v) = %q, %v; want %q", tc.o, out.String(), err, tc.want)
		}
	}
}

// TestEnumsLintEscapesThePathOnBothStreams: a category.py whose path holds a control
// character (a directory named by an attacker, a pasted path) is shown escaped in the
// problem lines on stdout and in the "no problems" line on stderr; the stderr line printed
// the path raw, so it could retitle or redraw the terminal.
func TestEnumsLintEscapesThePathOnBothStreams(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "x\x1b]0;pwned\x07")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "category.py")
	shown := strings.TrimSuffix(dir, "x\x1b]0;pwned\x07") + `x\x1b]0;pwned\x07/category.py`
	good := "from enum import IntEnum\n\n\nclass OutboxCategory(IntEnum):\n    A = 0\n\n\nclass OutboxScope(IntEnum):\n    ORGANIZATION_SCOPE = scope_categories(0, {OutboxCategory.A})\n"
	bad := strings.Replace(good, "    A = 0\n", "    A = 0\n    B = 0\n", 1)
	bad = strings.Replace(bad, "{OutboxCategory.A}", "{OutboxCategory.A, OutboxCategory.B}", 1)
	for _, tc := range []struct{ src, wantOut, wantErr string }{
		{good, "", shown + ": 1 categories, 1 scopes, no problems\n"},
		{bad, shown + ":6: category integer 0 is reused by A and B\n", ""},
	} {
		if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		streams, out, errOut := render.Test()
		a := &app{io: streams, getenv: streams.Getenv, reg: enums.Builtin()}
		_ = runEnumsLint(a.factory(), enumsLintOptions{Path: path})
		if out.String() != tc.wantOut || errOut.String() != tc.wantErr {
			t.Errorf("lint: stdout %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.wantOut, tc.wantErr)
		}
	}
}
