package query

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// update rewrites the golden files: go test ./internal/query -update (or make golden).
var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// TestGolden compares the printed SQL of every case and target with
// testdata/golden/<target>/<case>.sql. Review golden diffs like code: they are what DBAs paste.
func TestGolden(t *testing.T) {
	t.Parallel()
	for tname, target := range targets("") {
		for _, c := range cases {
			t.Run(tname+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				got, err := c.script(target).Render()
				if err != nil {
					t.Fatal(err)
				}
				assertGolden(t, tname, c.name, got)
			})
		}
	}
}

// assertGolden compares got with testdata/golden/<target>/<name>.sql, or writes it there
// with -update: the one golden harness of every printed statement and script. A target
// whose output is the same as the one it falls back to (goldenFallback) has no file of its
// own: the matrix keeps only the shapes that differ (TestMain removes the copies after an
// -update), so a diff of the goldens shows where the silos part.
func assertGolden(t *testing.T, target, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", target, name+".sql")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, from, err := readGolden(target, name)
	if err != nil {
		t.Fatalf("%v (run `make golden` to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (run `make golden` if the change is intended)\n--- want\n%s\n--- got\n%s", from, want, got)
	}
}

// goldenFallback is the target a target's golden falls back to when it has no file of its
// own: the control silo narrowed to one cell prints what the control silo prints unless
// the cell changes it, and the control silo what the cell silo prints unless its tables do.
var goldenFallback = map[string]string{"control-cell": "control", "control": "cell"}

// readGolden is target's golden for name: its own file, else its fallback's (and so on),
// and the path it came from.
func readGolden(target, name string) ([]byte, string, error) {
	for {
		path := filepath.Join("testdata", "golden", target, name+".sql")
		b, err := os.ReadFile(path)
		next, ok := goldenFallback[target]
		if err == nil || !ok || !os.IsNotExist(err) {
			return b, path, err
		}
		target = next
	}
}

// TestMain, after an -update, removes each golden that is the same as its fallback's
// (control-cell's first: it falls back to control as control stood).
func TestMain(m *testing.M) {
	code := m.Run()
	if *update && code == 0 {
		if err := pruneGoldens(); err != nil {
			fmt.Fprintln(os.Stderr, "pruning the goldens:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func pruneGoldens() error {
	for _, target := range []string{"control-cell", "control"} {
		files, err := filepath.Glob(filepath.Join("testdata", "golden", target, "*.sql"))
		if err != nil {
			return err
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".sql")
			own, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			inherited, _, err := readGolden(goldenFallback[target], name)
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			if err == nil && bytes.Equal(own, inherited) {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func TestRenderAnnotatesEnums(t *testing.T) {
	t.Parallel()
	out, err := ShardCategories(Target{Silo: SiloCell}, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 42}).Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "o.shard_scope = 0  -- ORGANIZATION_SCOPE\n") {
		t.Fatalf("enum not annotated:\n%s", out)
	}
	if !strings.Contains(out, "o.shard_identifier = 42\n") {
		t.Fatalf("shard id not inline:\n%s", out)
	}
	if !strings.HasPrefix(out, "-- outboxctl: shard-categories\n") || !strings.HasSuffix(out, ";\n") {
		t.Fatalf("header or terminator missing:\n%s", out)
	}
}

func TestRenderKeepsHostileStringsLiteral(t *testing.T) {
	t.Parallel()
	target := Target{Silo: SiloControl, Cell: evilCell}
	out, err := Depth(target).Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `o.region_name = 'x''; DROP TABLE y; --'`) {
		t.Fatalf("cell not quoted as one literal:\n%s", out)
	}
	sql, args, err := Depth(target).Bind()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sql, "DROP") || len(args) != 1 || args[0] != evilCell {
		t.Fatalf("bound form pasted the value: %s %v", sql, args)
	}
}

func TestRenderNoteNeverSwallowsTerminator(t *testing.T) {
	t.Parallel()
	s := Statement{Name: "x", Text: "SELECT 1\n WHERE 0 = @scope", Args: Args{"scope": {Value: 0, Note: "ORGANIZATION_SCOPE"}}}
	out, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "-- ORGANIZATION_SCOPE\n;\n") {
		t.Fatalf("terminator inside a comment:\n%s", out)
	}
}

func TestBindNumbersPlaceholders(t *testing.T) {
	t.Parallel()
	s := Statement{Name: "x", Text: "SELECT @a, @b, @a, '@a', \"@b\" -- @a\n, @c::int /* @b */", Args: Args{
		"a": {Value: 1}, "b": {Value: "two"}, "c": {Value: int64(3)},
	}}
	sql, args, err := s.Bind()
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT $1, $2, $1, '@a', \"@b\" -- @a\n, $3::int /* @b */"
	if sql != want || len(args) != 3 || args[0] != 1 || args[1] != "two" || args[2] != int64(3) {
		t.Fatalf("Bind = %q %v", sql, args)
	}
}

func TestStrictArgs(t *testing.T) {
	t.Parallel()
	if _, _, err := (Statement{Name: "x", Text: "SELECT @a"}).Bind(); err == nil || !strings.Contains(err.Error(), "@a has no value") {
		t.Fatalf("missing arg: %v", err)
	}
	if _, err := (Statement{Name: "x", Text: "SELECT 1", Args: Args{"a": {Value: 1}}}).Render(); err == nil || !strings.Contains(err.Error(), "@a is not used") {
		t.Fatalf("unused arg: %v", err)
	}
}

func TestLiteral(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 11, 30, 4, 5, 6, 7000, time.FixedZone("x", 3600))
	for _, tt := range []struct {
		in   any
		want string
	}{
		{nil, "NULL"}, {0, "0"}, {int64(-9), "-9"}, {int32(7), "7"}, {true, "TRUE"}, {false, "FALSE"},
		{"us", "'us'"}, {"o'clock", "'o''clock'"}, {`a\b`, `E'a\\b'`}, {`\'`, `E'\\'''`}, {"", "''"},
		{"line\nbreak", `E'line\nbreak'`}, {"esc\x1b[2K", `E'esc\x1b[2K'`}, {"a\u2028b", `E'a\u2028b'`},
		{ts, "'2026-11-30 03:05:06.000007Z'::timestamptz"},
		{[]int64{1, 2}, "ARRAY[1, 2]"}, {[]string{"a", "b'"}, "ARRAY['a', 'b''']"},
	} {
		got, err := Literal(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Literal(%#v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []any{"nul\x00byte", "\xff\xfe", 1.5, struct{}{}} {
		if got, err := Literal(bad); err == nil {
			t.Errorf("Literal(%#v) = %q, want an error", bad, got)
		}
	}
}

func TestIdent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"sentry_regionoutbox": "sentry_regionoutbox", "Outbox": `"Outbox"`, "my-schema": `"my-schema"`,
		"user": `"user"`, `a"b`: `"a""b"`, "_x1": "_x1", "1x": `"1x"`,
		"position": `"position"`, "value": "value", "a\nb": `U&"a\000ab"`, `a\` + "\x1b": `U&"a\\\001b"`,
	} {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTargetValidate(t *testing.T) {
	t.Parallel()
	if err := (Target{Silo: SiloCell, Cell: "us"}).Validate(); err == nil || !strings.Contains(err.Error(), "--silo control") {
		t.Fatalf("cell on cell silo: %v", err)
	}
	if err := (Target{Silo: SiloCell, Table: strings.Repeat("t", 64)}).Validate(); err == nil {
		t.Fatal("64-byte table name accepted")
	}
	if err := (Target{Silo: "x"}).Validate(); err == nil {
		t.Fatal("bad silo accepted")
	}
	if got := (Target{Silo: SiloControl, Schema: "Demo", Table: "t"}).From(); got != `"Demo".t` {
		t.Fatal(got)
	}
	if s, err := ParseSilo("Region"); err != nil || s != SiloCell {
		t.Fatal(s, err)
	}
}
