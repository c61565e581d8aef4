package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/config"
)

const twoCells = `# outboxctl contexts
current-context: us
contexts:
  us:
    dsn: postgres://sentry@db-us.internal:5432/sentry
    schema: public
    silo: cell
    redis-url: redis://cache-us:6379/0
    replica-dsn: postgres://sentry@db-us-replica.internal:5432/sentry
  control:  # the control silo's database
    dsn-env: CONTROL_DSN
    silo: control
    cell: us
    statement-timeout: 10s
  de:
    service: de
`

// write puts a config file in a temp dir with mode and returns its path.
func write(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func load(t *testing.T, body string, mode os.FileMode) (*config.File, string, error) {
	t.Helper()
	p := write(t, body, mode)
	f, err := config.Load(env(map[string]string{config.EnvConfig: p}))
	return f, p, err
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		want     string
		explicit bool
	}{
		{map[string]string{"OUTBOXCTL_CONFIG": "/etc/o.yaml", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/o.yaml", true},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/outboxctl/config.yaml", false},
		{map[string]string{"HOME": "/h"}, "/h/.config/outboxctl/config.yaml", false},
		{map[string]string{}, "", false},
	} {
		got, explicit := config.Locate(env(tc.env))
		if got != tc.want || explicit != tc.explicit {
			t.Errorf("Locate(%v) = %q, %v; want %q, %v", tc.env, got, explicit, tc.want, tc.explicit)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	dir := t.TempDir()
	f, err := config.Load(env(map[string]string{"XDG_CONFIG_HOME": dir}))
	if err != nil || f.Exists || len(f.Names()) != 0 {
		t.Fatalf("default location missing: got %+v, %v; want an empty File and no error", f, err)
	}
	cs, err := f.Select("", false, env(nil))
	if err != nil || cs != nil {
		t.Fatalf("no file, no --context: got %v, %v; want nil, nil (everything as before)", cs, err)
	}
	_, err = f.Select("us", false, env(nil))
	want := "--context needs a config file, and there is none at " + filepath.Join(dir, "outboxctl", "config.yaml")
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	missing := filepath.Join(dir, "nope.yaml")
	_, err = config.Load(env(map[string]string{config.EnvConfig: missing}))
	want = "reading config (OUTBOXCTL_CONFIG): " + missing + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Fatalf("explicit missing file: got %v, want %q", err, want)
	}
	var ce *config.Error
	if !errors.As(err, &ce) || !ce.UsageError() {
		t.Fatalf("config errors are usage errors, got %T", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		want       string // after "PATH:"
	}{
		{"unknown top key", "current-context: us\ncontext:\n  us: {}\n", 0o600,
			`2: unknown key "context" (known: current-context, contexts)`},
		{"unknown context key", "contexts:\n  us:\n    schema: public\n    dns: postgres://x@h/db\n", 0o600,
			`4: context "us": unknown key "dns" (known: dsn, dsn-env, service, replica-dsn, schema, silo, cell, table, redis-url, statement-timeout, lock-timeout, connect-timeout, readonly, allow, prometheus-url)`},
		{"readonly not a bool", "contexts:\n  us:\n    readonly: yes\n", 0o600,
			`3: context "us": readonly: "yes": want true or false`},
		{"allow not a list", "contexts:\n  us:\n    allow: reschedule\n", 0o600,
			`3: context "us": allow wants a list such as [reschedule, compact]`},
		{"allow a read", "contexts:\n  us:\n    allow: [reschedule, shards]\n", 0o600,
			`3: context "us": allow: "shards" is no command that writes (known: reschedule, compact, skip, drain, restore, replicate, killswitch add, killswitch remove, killswitch gate, demo seed, demo drop, killswitch, demo)`},
		{"readonly false beside allow", "contexts:\n  us:\n    readonly: false\n    allow: [compact]\n", 0o600,
			`3: context "us": readonly: false, and allow limits the writes: drop one of them`},
		{"duplicate key", "contexts:\n  us:\n    schema: a\n    schema: b\n", 0o600,
			`4: context "us": "schema" appears twice`},
		{"two ways to connect", "contexts:\n  us:\n    dsn: postgres://h/db\n    dsn-env: US_DSN\n", 0o600,
			`4: context "us": dsn-env: dsn and dsn-env both say where to connect; keep one`},
		{"bad silo", "contexts:\n  us:\n    silo: cells\n", 0o600,
			`3: context "us": silo: invalid silo "cells": valid values are cell (alias region) and control`},
		{"cell without control", "contexts:\n  us:\n    cell: us\n", 0o600,
			`3: context "us": cell: a cell filters the control outbox; add silo: control`},
		{"bad duration", "contexts:\n  us:\n    lock-timeout: 2\n", 0o600,
			`3: context "us": lock-timeout: "2" is not a duration: write it as 30s, 500ms or 1m30s`},
		{"tiny duration", "contexts:\n  us:\n    connect-timeout: 10us\n", 0o600,
			`3: context "us": connect-timeout: "10us": must be at least 1ms`},
		{"bad env name", "contexts:\n  us:\n    dsn-env: US-DSN\n", 0o600,
			`3: context "us": dsn-env: "US-DSN": want an environment variable name such as US_DSN`},
		{"bad redis", "contexts:\n  us:\n    redis-url: cache:6379\n", 0o600,
			`3: context "us": redis-url: "cache:6379": want redis://HOST:6379/DB or rediss://… for TLS`},
		{"bad prometheus-url", "contexts:\n  us:\n    prometheus-url: prom:9090\n", 0o600,
			`3: context "us": prometheus-url: "prom:9090": want http://HOST:9090 or https://HOST/PREFIX (no query)`},
		{"prometheus password", "contexts:\n  us:\n    prometheus-url: https://ops:hunter2@prom.internal/\n", 0o644,
			`3: context "us": prometheus-url holds a password, and the file can be read by others (mode 0644): run chmod 600 PATH, or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)`},
		{"control char schema", "contexts:\n  us:\n    schema: \"a\\x1bb\"\n", 0o600,
			`3: context "us": schema: schema name "a\x1bb" contains a control character`},
		{"comma in name", "contexts:\n  us,de:\n    silo: cell\n", 0o600,
			`2: context name "us,de": use letters, digits, '_', '.' and '-' (commas separate names in --context)`},
		{"empty value", "contexts:\n  us:\n    schema:\n", 0o600,
			`3: context "us": schema wants a non-empty string`},
		{"list value", "contexts:\n  us:\n    schema: [a, b]\n", 0o600,
			`3: context "us": schema wants a non-empty string`},
		{"not a mapping", "- us\n- de\n", 0o600, `1: want a mapping with current-context and contexts`},
		{"context not a mapping", "contexts:\n  us: postgres://h/db\n", 0o600,
			`2: context "us" wants a mapping of settings (dsn, schema, silo, …)`},
		{"duplicate context", "contexts:\n  us: {}\n  us: {}\n", 0o600, `3: context "us" appears twice`},
		{"password in world-readable file", "contexts:\n  us:\n    dsn: postgres://sentry:hunter2@db:5432/sentry\n", 0o644,
			`3: context "us": dsn holds a password, and the file can be read by others (mode 0644): run chmod 600 PATH, or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)`},
		{"password= in group-readable file", "contexts:\n  us:\n    replica-dsn: host=db password=hunter2\n", 0o640,
			`3: context "us": replica-dsn holds a password, and the file can be read by others (mode 0640): run chmod 600 PATH, or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)`},
		{"redis password", "contexts:\n  us:\n    redis-url: redis://:hunter2@cache:6379/0\n", 0o604,
			`3: context "us": redis-url holds a password, and the file can be read by others (mode 0604): run chmod 600 PATH, or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p, err := load(t, tc.body, tc.mode)
			want := p + ":" + strings.ReplaceAll(tc.want, "PATH", p)
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
	}{
		{"empty file", "", 0o644},
		{"no contexts", "contexts:\n", 0o644},
		{"password in a 0600 file", "contexts:\n  us:\n    dsn: postgres://sentry:hunter2@db/sentry\n", 0o600},
		{"password in a 0400 file", "contexts:\n  us:\n    dsn: postgres://sentry:hunter2@db/sentry\n", 0o400},
		{"no password, world-readable", twoCells, 0o644},
		{"region is cell's old name", "contexts:\n  us:\n    silo: region\n", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := load(t, tc.body, tc.mode); err != nil {
				t.Fatalf("got %v, want no error", err)
			}
		})
	}
}

func names(cs []*config.Context) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

func TestSelect(t *testing.T) {
	f, p, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, flag string
		all        bool
		env        map[string]string
		want, err  string
	}{
		{"current-context", "", false, nil, "us", ""},
		{"env wins over the file", "", false, map[string]string{"OUTBOXCTL_CONTEXT": "control"}, "control", ""},
		{"flag wins over env", "de", false, map[string]string{"OUTBOXCTL_CONTEXT": "control"}, "de", ""},
		{"a list keeps its order", "us,de,control", false, nil, "us,de,control", ""},
		{"spaces around names", "us, de", false, nil, "us,de", ""},
		{"all in name order", "", true, nil, "control,de,us", ""},
		{"unknown", "us,eu", false, nil, "", `no context "eu" in PATH (known contexts: control, de, us)`},
		{"twice", "us,us", false, nil, "", `--context names context "us" twice`},
		{"empty element", "us,,de", false, nil, "", `--context "us,,de" has an empty name: write names separated by single commas`},
		{"both", "us", true, nil, "", "`--context` and `--all-contexts` both pick contexts; pass one"},
		{"env unknown", "", false, map[string]string{"OUTBOXCTL_CONTEXT": "eu"}, "", `OUTBOXCTL_CONTEXT: no context "eu" in PATH (known contexts: control, de, us)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := f.Select(tc.flag, tc.all, env(tc.env))
			if got := names(cs); got != tc.want {
				t.Errorf("contexts %q, want %q", got, tc.want)
			}
			want := strings.ReplaceAll(tc.err, "PATH", p)
			if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}

func TestCurrentContextMissing(t *testing.T) {
	f, p, err := load(t, "current-context: eu\ncontexts:\n  us: {}\n", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Select("", false, env(nil))
	want := "current-context (" + p + ":1): no context \"eu\" in " + p + " (known contexts: us)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if err := f.Use("us"); err != nil { // use repairs it
		t.Fatal(err)
	}
	if cs, err := f.Select("", false, env(nil)); err != nil || names(cs) != "us" {
		t.Fatalf("after use: %v %v", names(cs), err)
	}
}

// TestUnreadableDefaultFile: a file at the default location that cannot be read (here a
// directory, which even root cannot read as a file) is an error that does not blame
// OUTBOXCTL_CONFIG.
func TestUnreadableDefaultFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "outboxctl", "config.yaml")
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(env(map[string]string{"XDG_CONFIG_HOME": dir}))
	if want := "reading config: read " + p + ": is a directory"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestOneRefusesLists(t *testing.T) {
	f, _, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.One("control", false, env(nil))
	if err != nil || c.Name != "control" {
		t.Fatalf("one context: got %v, %v", c, err)
	}
	for _, tc := range []struct {
		flag string
		all  bool
		want string
	}{
		{"us,de", false, "a command that changes a database takes exactly one context, got 2 (us,de)"},
		{"", true, "a command that changes a database takes exactly one context, got 3 (--all-contexts)"},
	} {
		_, err := f.One(tc.flag, tc.all, env(nil))
		var ce *config.Error
		if err == nil || err.Error() != tc.want || !errors.As(err, &ce) || ce.Hint != "run the command once per context, e.g. --context "+map[bool]string{false: "us", true: "control"}[tc.all] {
			t.Errorf("One(%q, %v) = %v (%+v), want %q", tc.flag, tc.all, err, ce, tc.want)
		}
	}
}

func show(s config.Settings) string {
	var b strings.Builder
	for _, x := range s.Show() {
		b.WriteString(x.Key + "=" + x.Value + " [" + x.Source + "]\n")
	}
	return b.String()
}

func TestResolvePrecedence(t *testing.T) {
	f, _, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	us, _ := f.Context("us")
	schema, st := "flagged", 5*time.Second
	s := config.Resolve(us, config.Overrides{Schema: &schema, StatementTimeout: &st},
		env(map[string]string{"OUTBOXCTL_DSN": "postgres://env@h/db", "OUTBOXCTL_REDIS_URL": "redis://env:6379/1"}))
	want := `dsn=postgres://sentry@db-us.internal:5432/sentry [context us, line 5]
replica-dsn=postgres://sentry@db-us-replica.internal:5432/sentry [context us, line 9]
schema=flagged [flag --schema]
silo=cell [context us, line 7]
cell= [default]
table= [default]
redis-url=redis://cache-us:6379/0 [context us, line 8]
statement-timeout=5s [flag --statement-timeout]
lock-timeout=2s [default]
connect-timeout=5s [default]
`
	if got := show(s); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	read, given, err := s.Connection(false)
	if read != "postgres://sentry@db-us-replica.internal:5432/sentry" || !given || err != nil {
		t.Fatalf("reads go to the replica: got %q %v %v", read, given, err)
	}
	write, _, _ := s.Connection(true)
	if write != "postgres://sentry@db-us.internal:5432/sentry" {
		t.Fatalf("mutations never go to the replica: got %q", write)
	}
	flagDSN := "postgres://me@elsewhere/db"
	s = config.Resolve(us, config.Overrides{DSN: &flagDSN}, env(nil))
	if read, _, _ := s.Connection(false); read != flagDSN {
		t.Fatalf("--dsn wins over the replica for reads: got %q", read)
	}
}

func TestResolveDSNSources(t *testing.T) {
	f, _, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	control, _ := f.Context("control")
	de, _ := f.Context("de")
	for _, tc := range []struct {
		name      string
		c         *config.Context
		env       map[string]string
		dsn, src  string
		given     bool
		err, show string
	}{
		{"dsn-env set", control, map[string]string{"CONTROL_DSN": "postgres://c:s3cret@ctl/db"}, "postgres://c:s3cret@ctl/db",
			"env CONTROL_DSN (dsn-env, context control, line 11)", true, "", "postgres://c:xxxxx@ctl/db"},
		{"dsn-env unset", control, nil, "", "env CONTROL_DSN (dsn-env, context control, line 11)", false,
			"context control: its dsn-env variable CONTROL_DSN is not set", "(CONTROL_DSN is not set)"},
		{"service", de, nil, "service=de", "pg_service.conf (service, context de, line 16)", true, "", "service=de"},
		{"no context, OUTBOXCTL_DSN", nil, map[string]string{"OUTBOXCTL_DSN": "postgres://e@h/db"}, "postgres://e@h/db", "env OUTBOXCTL_DSN", true, "", "postgres://e@h/db"},
		{"no context, libpq", nil, map[string]string{"PGHOST": "db"}, "", "libpq environment (PGHOST, PGDATABASE, …)", true, "", ""},
		{"nothing", nil, nil, "", "default (none given)", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := config.Resolve(tc.c, config.Overrides{}, env(tc.env))
			dsn, given, err := s.Connection(true)
			if dsn != tc.dsn || given != tc.given || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("Connection = %q, %v, %v; want %q, %v, %q", dsn, given, err, tc.dsn, tc.given, tc.err)
			}
			first := s.Show()[0]
			if first.Key != "dsn" || first.Value != tc.show || first.Source != tc.src {
				t.Errorf("show dsn = %+v; want value %q source %q", first, tc.show, tc.src)
			}
		})
	}
}

func TestUseKeepsTheRest(t *testing.T) {
	f, p, err := load(t, twoCells, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Use("control"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	// Comments stay; the encoder only normalises the space before a line comment.
	want := strings.Replace(twoCells, "current-context: us", "current-context: control", 1)
	want = strings.Replace(want, "control:  #", "control: #", 1)
	if string(got) != want {
		t.Fatalf("after use control:\n%s\nwant\n%s", got, want)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600 kept", st.Mode().Perm())
	}
	if err := f.Use("eu"); err == nil || err.Error() != `no context "eu" in `+p+` (known contexts: control, de, us)` {
		t.Fatalf("use of an unknown context: %v", err)
	}
}

func TestUseAddsCurrentContext(t *testing.T) {
	body := "contexts:\n  us:\n    silo: cell # the cell\n"
	f, p, err := load(t, body, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Use("us"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := "current-context: us\n" + body; string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %04o, want 0644 kept", st.Mode().Perm())
	}
}

// TestUseThroughSymlink: a config that is a symlink (a dotfiles checkout) stays a link, the
// link's target gets the change and keeps its mode, and nothing is left beside the link.
// On main the link was replaced by a regular file and the target kept the old context.
func TestUseThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "outboxctl.yaml")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(twoCells), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink("dotfiles/outboxctl.yaml", link); err != nil {
		t.Fatal(err)
	}
	f, err := config.Load(env(map[string]string{config.EnvConfig: link}))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Use("de"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink: %v %v", link, st.Mode(), err)
	}
	if to, _ := os.Readlink(link); to != "dotfiles/outboxctl.yaml" {
		t.Fatalf("link points at %q", to)
	}
	got, _ := os.ReadFile(target)
	want := strings.Replace(strings.Replace(twoCells, "current-context: us", "current-context: de", 1), "control:  #", "control: #", 1)
	if string(got) != want {
		t.Fatalf("target after use de:\n%s\nwant\n%s", got, want)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Fatalf("target mode %04o, want 0640 kept", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("beside the link: %v, want only the link and dotfiles", entries)
	}
}

// TestUseKeepsComments: comments before the document, between keys, after a value and after
// the last line survive a use.
func TestUseKeepsComments(t *testing.T) {
	t.Parallel()
	body := "# head\n\n# second head\ncurrent-context: us # trailing\n# before contexts\ncontexts:\n  # inside\n  us:\n    silo: cell\n  # between\n  de: {}\n# foot\n\n# last line\n"
	f, p, err := load(t, body, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Use("de"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := strings.Replace(body, "current-context: us", "current-context: de", 1); string(got) != want {
		t.Fatalf("after use de:\n%s\nwant\n%s", got, want)
	}
}

// TestConfigSizeCap: a config over the cap is refused before it is read, in one line naming
// the cap and the flag that raises it (a runtime error, not a usage error); a raised cap
// reads it; /dev/zero (no size) is refused after cap+1 bytes. On main a 64 MiB file was read
// whole (64 MiB allocated at least, ~5× that through the YAML parser) before any error.
//
// Not parallel: it measures the allocations of the whole process.
func TestConfigSizeCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 64 MiB that cost no disk.
	if _, err := fh.WriteString(twoCells + "#"); err != nil || fh.Truncate(64<<20) != nil || fh.Chmod(0o600) != nil || fh.Close() != nil {
		t.Fatal("writing the file")
	}
	getenv := env(map[string]string{config.EnvConfig: p})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = config.Load(getenv)
	runtime.ReadMemStats(&after)
	want := "reading config: " + p + " is larger than the 1MiB cap on a config file: point OUTBOXCTL_CONFIG at the config file, or raise the cap (--max-config-bytes 64MiB)"
	var big *config.TooBigError
	if !errors.As(err, &big) || err.Error() != want {
		t.Fatalf("got %#v, want %q", err, want)
	}
	if u, ok := err.(interface{ UsageError() bool }); ok && u.UsageError() {
		t.Fatal("a config over its cap is a usage error: it is the input's problem (exit 1)")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing the file allocated %d bytes: it was read", alloc)
	}
	// Raised, the file is read (a NUL is no YAML, which says so).
	if _, err = config.LoadCapped(getenv, 64<<20); err == nil || errors.As(err, &big) {
		t.Fatalf("raised cap: %v", err)
	}
	_, err = config.LoadCapped(env(map[string]string{config.EnvConfig: "/dev/zero"}), 4<<10)
	if err == nil || err.Error() != "reading config: /dev/zero is larger than the 4KiB cap on a config file: point OUTBOXCTL_CONFIG at the config file, or raise the cap (--max-config-bytes 1MiB)" {
		t.Fatalf("/dev/zero: %v", err)
	}
}

// TestShowRedactsPrometheusURL: context show lists prometheus-url with its line, its
// password hidden.
func TestShowRedactsPrometheusURL(t *testing.T) {
	f, _, err := load(t, "contexts:\n  us:\n    prometheus-url: https://ops:hunter2@prom.internal/\n", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Context("us")
	s := config.Resolve(c, config.Overrides{}, env(nil))
	got := show(s)
	if s.PrometheusURL != "https://ops:hunter2@prom.internal/" || strings.Contains(got, "hunter2") || !strings.Contains(got, "prometheus-url=https://") || !strings.Contains(got, "[context us, line 3]") {
		t.Errorf("show:\n%s", got)
	}
}

// TestShowSaysReadOnly: context show lists a context's readonly and allow with their lines
// (and nothing of them for a context that sets neither).
func TestShowSaysReadOnly(t *testing.T) {
	f, _, err := load(t, "contexts:\n  ro:\n    schema: public\n    readonly: true\n  some:\n    allow: [reschedule, killswitch]\n  open:\n    schema: public\n", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"ro": "readonly=true [context ro, line 4]\n", "some": "allow=reschedule, killswitch [context some, line 6]\n", "open": "",
	} {
		c, _ := f.Context(name)
		got := show(config.Resolve(c, config.Overrides{}, env(nil)))
		tail := got[strings.Index(got, "connect-timeout="):]
		tail = tail[strings.Index(tail, "\n")+1:]
		if tail != want {
			t.Errorf("%s: show ends %q, want %q", name, tail, want)
		}
	}
}
