package pgtmp

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEnv is a machine: files are the paths that exist, local says whether 127.0.0.1:5432
// answers, vars the environment.
func fakeEnv(files []string, local bool, vars map[string]string, euid int, users map[string]int) Env {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	return Env{
		Getenv: func(k string) string { return vars[k] },
		LookPath: func(name string) (string, error) {
			for _, d := range strings.Split(vars["PATH"], ":") {
				if has[filepath.Join(d, name)] {
					return filepath.Join(d, name), nil
				}
			}
			return "", errors.New("not found")
		},
		Glob: func(pattern string) ([]string, error) {
			var out []string
			for f := range has {
				for d := f; d != "/" && d != "."; d = filepath.Dir(d) {
					if ok, _ := filepath.Match(pattern, d); ok {
						out = append(out, d)
					}
				}
			}
			return dedupe(out), nil
		},
		Output: func(name string, args ...string) (string, error) {
			if strings.HasSuffix(name, "pg_config") && has[name] {
				return vars["PG_CONFIG_BINDIR"], nil
			}
			return "", errors.New("no such program")
		},
		Answers:      func(string) bool { return local },
		AnswersRedis: func(string) bool { return local },
		Euid:         euid,
		LookupUser: func(name string) (int, int, error) {
			if uid, ok := users[name]; ok {
				return uid, uid, nil
			}
			return 0, 0, errors.New("unknown user")
		},
		GOOS: "linux",
	}
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func binaries(dir string) []string {
	return []string{dir + "/initdb", dir + "/pg_ctl", dir + "/postgres"}
}

func TestResolveTheDSNSetWins(t *testing.T) {
	e := fakeEnv(binaries("/usr/lib/postgresql/15/bin"), true, map[string]string{ForceEnv: "1"}, 1000, nil)
	r := Resolve(e, "postgres://me@db:5432/x")
	if r.Source != FromUser || r.DSN != "postgres://me@db:5432/x" {
		t.Fatalf("%+v, want the DSN set", r)
	}
}

func TestResolveServerAnswers(t *testing.T) {
	e := fakeEnv(binaries("/usr/lib/postgresql/15/bin"), true, nil, 1000, nil)
	if r := Resolve(e, ""); r.Source != FromLocal || r.DSN != LocalDSN {
		t.Fatalf("%+v, want the local server", r)
	}
	// OUTBOXCTL_THROWAWAY=1 passes over it.
	e = fakeEnv(binaries("/usr/lib/postgresql/15/bin"), true, map[string]string{ForceEnv: "1"}, 1000, nil)
	if r := Resolve(e, ""); r.Source != FromThrowaway || r.BinDir != "/usr/lib/postgresql/15/bin" || r.RunAs != nil {
		t.Fatalf("%+v, want a throwaway from Debian's directory, as ourselves", r)
	}
}

func TestResolveServerAbsentWithBinaries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		vars  map[string]string
		want  string
	}{
		{"on PATH", binaries("/opt/pg/bin"), map[string]string{"PATH": "/usr/bin:/opt/pg/bin"}, "/opt/pg/bin"},
		{"pg_config", append(binaries("/srv/pg17/bin"), "/usr/bin/pg_config"), map[string]string{"PATH": "/usr/bin", "PG_CONFIG_BINDIR": "/srv/pg17/bin"}, "/srv/pg17/bin"},
		{"newest Debian", append(binaries("/usr/lib/postgresql/9.6/bin"), append(binaries("/usr/lib/postgresql/16/bin"), binaries("/usr/lib/postgresql/15/bin")...)...), nil, "/usr/lib/postgresql/16/bin"},
		{"Debian beats an incomplete PATH", append(binaries("/usr/lib/postgresql/15/bin"), "/usr/local/bin/initdb"), map[string]string{"PATH": "/usr/local/bin"}, "/usr/lib/postgresql/15/bin"},
		{"Homebrew", binaries("/opt/homebrew/opt/postgresql@16/bin"), nil, "/opt/homebrew/opt/postgresql@16/bin"},
		{"Postgres.app", append(binaries("/Applications/Postgres.app/Contents/Versions/14/bin"), binaries("/Applications/Postgres.app/Contents/Versions/17/bin")...), nil, "/Applications/Postgres.app/Contents/Versions/17/bin"},
		{"OUTBOXCTL_PG_BIN", append(binaries("/x/bin"), binaries("/usr/lib/postgresql/16/bin")...), map[string]string{"OUTBOXCTL_PG_BIN": "/x/bin"}, "/x/bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Resolve(fakeEnv(tc.files, false, tc.vars, 1000, nil), "")
			if r.Source != FromThrowaway || r.BinDir != tc.want {
				t.Fatalf("%+v, want a throwaway from %s", r, tc.want)
			}
		})
	}
}

func TestResolveNoBinaries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		vars  map[string]string
	}{
		{"nothing", nil, nil},
		{"client only", []string{"/usr/bin/psql", "/usr/lib/postgresql/15/bin/psql", "/usr/lib/postgresql/15/bin/pg_ctl"}, map[string]string{"PATH": "/usr/bin"}},
		{"OUTBOXCTL_PG_BIN without them", binaries("/usr/lib/postgresql/16/bin"), map[string]string{"OUTBOXCTL_PG_BIN": "/nowhere"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Resolve(fakeEnv(tc.files, false, tc.vars, 1000, nil), "")
			if r.Source != FromNone {
				t.Fatalf("%+v, want none", r)
			}
			for _, want := range []string{"apt-get install postgresql", "brew install postgresql@16", "OUTBOXCTL_TEST_DSN", "database tests skip", "CI=true"} {
				if !strings.Contains(r.Install, want) {
					t.Errorf("install line %q lacks %q", r.Install, want)
				}
			}
			if strings.Contains(r.Install, "\n") {
				t.Errorf("install line is more than one line: %q", r.Install)
			}
		})
	}
}

func TestResolveAsRoot(t *testing.T) {
	dir := "/usr/lib/postgresql/15/bin"
	r := Resolve(fakeEnv(binaries(dir), false, nil, 0, map[string]int{"postgres": 105, "nobody": 65534}), "")
	if r.Source != FromThrowaway || r.RunAs == nil || r.RunAs.Name != "postgres" || r.RunAs.Uid != 105 {
		t.Fatalf("%+v, want the postgres user", r)
	}
	r = Resolve(fakeEnv(binaries(dir), false, nil, 0, map[string]int{"nobody": 65534}), "")
	if r.Source != FromThrowaway || r.RunAs == nil || r.RunAs.Name != "nobody" {
		t.Fatalf("%+v, want nobody", r)
	}
	r = Resolve(fakeEnv(binaries(dir), false, nil, 0, nil), "")
	if r.Source != FromNone || !strings.Contains(r.Install, "initdb refuses root") {
		t.Fatalf("%+v, want none: no user to run as", r)
	}
	r = Resolve(fakeEnv(binaries(dir), false, nil, 1000, map[string]int{"postgres": 105}), "")
	if r.RunAs != nil {
		t.Fatalf("%+v, want ourselves when not root", r)
	}
}

func TestResolveRedis(t *testing.T) {
	if r := ResolveRedis(fakeEnv(nil, false, nil, 1000, nil), "10.0.0.1:6379"); r.Source != FromUser || r.Addr != "10.0.0.1:6379" {
		t.Fatalf("%+v", r)
	}
	if r := ResolveRedis(fakeEnv([]string{"/usr/bin/redis-server"}, true, map[string]string{"PATH": "/usr/bin"}, 1000, nil), ""); r.Source != FromLocal {
		t.Fatalf("%+v, want the local Redis", r)
	}
	if r := ResolveRedis(fakeEnv([]string{"/usr/bin/redis-server"}, true, map[string]string{"PATH": "/usr/bin", ForceEnv: "1"}, 1000, nil), ""); r.Source != FromThrowaway || r.Binary != "/usr/bin/redis-server" {
		t.Fatalf("%+v, want a throwaway", r)
	}
	if r := ResolveRedis(fakeEnv(nil, false, nil, 1000, nil), ""); r.Source != FromNone {
		t.Fatalf("%+v, want none", r)
	}
}
