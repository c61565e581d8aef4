// Package pgtmp finds a PostgreSQL (and a Redis) for make demo, make test and .ci/run: the
// one the user named, else the local server on 127.0.0.1:5432 when it answers, else a
// throwaway cluster started from the server binaries installed on the machine, which is
// stopped and removed when its owner ends, however it ends. It is for development and tests:
// outboxctl's commands never start a server (demo up is the exception it was built for).
package pgtmp

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
)

// LocalDSN is the server this project's machines and CI run.
const LocalDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// LocalRedis is the Redis they run.
const LocalRedis = "127.0.0.1:6379"

// ForceEnv, set to 1, skips the local server even when it answers: the throwaway path is
// taken (to try it where a server runs, as on CI and the project's machines).
const ForceEnv = "OUTBOXCTL_THROWAWAY"

// Source says where a resolved server came from.
type Source string

const (
	// FromUser: the DSN (or Redis address) the user set.
	FromUser Source = "set"
	// FromLocal: the local server, which answered.
	FromLocal Source = "local"
	// FromThrowaway: start a throwaway server from Resolution.BinDir.
	FromThrowaway Source = "throwaway"
	// FromNone: nothing answers and nothing can be started (Resolution.Install says what to
	// install).
	FromNone Source = "none"
)

// Env is what the resolver asks of the machine; tests replace it.
type Env struct {
	Getenv   func(string) string
	LookPath func(string) (string, error)
	Glob     func(string) ([]string, error)
	// Output runs a program and returns its standard output (pg_config --bindir).
	Output func(name string, args ...string) (string, error)
	// Answers says whether a PostgreSQL answers at dsn (a Redis at addr for AnswersRedis).
	Answers      func(dsn string) bool
	AnswersRedis func(addr string) bool
	// Euid is the effective user id (0: root, which initdb refuses).
	Euid int
	// LookupUser returns the uid and gid of a user name.
	LookupUser func(name string) (uid, gid int, err error)
	GOOS       string
}

// MachineEnv is this machine's.
func MachineEnv() Env {
	return Env{
		Getenv: os.Getenv, LookPath: exec.LookPath, Glob: filepath.Glob,
		Output: func(name string, args ...string) (string, error) {
			b, err := exec.Command(name, args...).Output()
			return strings.TrimSpace(string(b)), err
		},
		Answers: answers, AnswersRedis: answersRedis,
		Euid: os.Geteuid(), LookupUser: lookupUser, GOOS: runtime.GOOS,
	}
}

// Resolution is the resolver's answer for PostgreSQL.
type Resolution struct {
	Source Source
	// DSN is the server's for FromUser and FromLocal.
	DSN string
	// BinDir holds initdb, pg_ctl and postgres, for FromThrowaway.
	BinDir string
	// RunAs is the user the throwaway server runs as when we are root (nil: ourselves).
	RunAs *User
	// Install is, for FromNone, one line naming what to install and what runs without it.
	Install string
}

// User is an account to run the server as (initdb and postgres refuse root).
type User struct {
	Name     string
	Uid, Gid int
}

// Resolve finds PostgreSQL in the order: userDSN (the DSN the user set), else the
// local server when it answers and OUTBOXCTL_THROWAWAY is not 1, else the server binaries
// on the machine, else none.
func Resolve(e Env, userDSN string) Resolution {
	if userDSN != "" {
		return Resolution{Source: FromUser, DSN: userDSN}
	}
	if e.Getenv(ForceEnv) != "1" && e.Answers(LocalDSN) {
		return Resolution{Source: FromLocal, DSN: LocalDSN}
	}
	dir := FindBinaries(e)
	if dir == "" {
		return Resolution{Source: FromNone, Install: InstallHint(e, false)}
	}
	r := Resolution{Source: FromThrowaway, BinDir: dir}
	if e.Euid == 0 {
		for _, name := range []string{"postgres", "nobody"} {
			if uid, gid, err := e.LookupUser(name); err == nil && uid != 0 {
				r.RunAs = &User{Name: name, Uid: uid, Gid: gid}
				break
			}
		}
		if r.RunAs == nil {
			return Resolution{Source: FromNone, Install: "running as root, and neither a postgres nor a nobody user exists to run the throwaway server as (initdb refuses root): create one (useradd -r postgres) or set OUTBOXCTL_TEST_DSN"}
		}
	}
	return r
}

// serverBinaries are what a throwaway cluster needs, in one directory.
var serverBinaries = []string{"initdb", "pg_ctl", "postgres"}

// FindBinaries returns a directory holding initdb, pg_ctl and postgres: OUTBOXCTL_PG_BIN when
// set (only there), else the one on PATH, pg_config --bindir, the newest of Debian's
// /usr/lib/postgresql/*/bin and RHEL's /usr/pgsql-*/bin, Homebrew's, Postgres.app's; "" if
// none.
func FindBinaries(e Env) string {
	if d := e.Getenv("OUTBOXCTL_PG_BIN"); d != "" {
		if hasBinaries(e, d) {
			return d
		}
		return ""
	}
	var dirs []string
	if p, err := e.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	if p, err := e.LookPath("pg_config"); err == nil {
		if d, err := e.Output(p, "--bindir"); err == nil && d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, pattern := range []string{
		"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin",
		"/opt/homebrew/opt/postgresql@*/bin", "/usr/local/opt/postgresql@*/bin",
		"/opt/homebrew/opt/postgresql/bin", "/usr/local/opt/postgresql/bin",
		"/Applications/Postgres.app/Contents/Versions/*/bin",
	} {
		m, _ := e.Glob(pattern)
		dirs = append(dirs, newestFirst(m)...)
	}
	for _, d := range dirs {
		if hasBinaries(e, d) {
			return d
		}
	}
	return ""
}

func hasBinaries(e Env, dir string) bool {
	for _, b := range serverBinaries {
		m, _ := e.Glob(filepath.Join(globEscape(dir), b))
		if len(m) == 0 {
			return false
		}
	}
	return true
}

// globEscape quotes a directory's glob characters, so that Glob tests one exact path.
func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// newestFirst orders version directories by the first number in their path, highest first
// (/usr/lib/postgresql/16/bin before 9.6's).
func newestFirst(dirs []string) []string {
	version := func(s string) float64 {
		var digits strings.Builder
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '@' || r == '-' }) {
			if part != "" && part[0] >= '0' && part[0] <= '9' {
				digits.WriteString(part)
				break
			}
		}
		v, _ := strconv.ParseFloat(digits.String(), 64)
		return v
	}
	out := append([]string(nil), dirs...)
	sort.SliceStable(out, func(i, j int) bool { return version(out[i]) > version(out[j]) })
	return out
}

// InstallHint is one line: what to install for a throwaway PostgreSQL, and what runs without
// it, for the tests or (forDemo) for make demo and demo up.
func InstallHint(e Env, forDemo bool) string {
	how := "install PostgreSQL's server binaries (Debian/Ubuntu: sudo apt-get install postgresql; Fedora/RHEL: sudo dnf install postgresql-server; macOS: brew install postgresql@16 or Postgres.app)"
	if e.GOOS == "darwin" {
		how = "install PostgreSQL's server binaries (brew install postgresql@16, or Postgres.app)"
	}
	head := "no PostgreSQL answers at 127.0.0.1:5432 and no server binaries (initdb, pg_ctl, postgres) were found: " + how
	if forDemo {
		return head + ", or set OUTBOXCTL_DSN to a server; without one, every command still prints its SQL (--print-sql)"
	}
	return head + ", or set OUTBOXCTL_TEST_DSN; without them the unit, golden and printed-SQL tests run and the database tests skip (under CI=true they fail)"
}

// RedisResolution is the resolver's answer for Redis.
type RedisResolution struct {
	Source Source
	Addr   string // host:port for FromUser and FromLocal
	Binary string // redis-server, for FromThrowaway
}

// ResolveRedis finds Redis in the same order: userAddr, the local 127.0.0.1:6379, a
// throwaway redis-server from PATH, else none (the Redis tests skip, or fail under CI=true).
func ResolveRedis(e Env, userAddr string) RedisResolution {
	if userAddr != "" {
		return RedisResolution{Source: FromUser, Addr: userAddr}
	}
	if e.Getenv(ForceEnv) != "1" && e.AnswersRedis(LocalRedis) {
		return RedisResolution{Source: FromLocal, Addr: LocalRedis}
	}
	if p, err := e.LookPath("redis-server"); err == nil {
		return RedisResolution{Source: FromThrowaway, Binary: p}
	}
	return RedisResolution{Source: FromNone}
}

// RedisInstallHint is one line, like InstallHint's, for Redis.
const RedisInstallHint = "no Redis answers at 127.0.0.1:6379 and redis-server is not on PATH: install it (sudo apt-get install redis-server; brew install redis) or set OUTBOXCTL_TEST_REDIS_ADDR; without it the Redis tests skip (under CI=true they fail)"

// answers connects to dsn and runs SELECT 1, within 3 s.
func answers(dsn string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false
	}
	cfg.ConnectTimeout = 2 * time.Second
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false
	}
	defer c.Close(context.Background())
	return c.Ping(ctx) == nil
}

// answersRedis sends PING to addr and wants +PONG, within 2 s.
func answersRedis(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := c.Read(buf)
	return strings.HasPrefix(string(buf[:n]), "+PONG")
}

// Describe is one line for the operator saying which server a run uses.
func (r Resolution) Describe(dsn string) string {
	switch r.Source {
	case FromUser:
		return "PostgreSQL: the DSN set (" + db.RedactDSN(dsn) + ")"
	case FromLocal:
		return "PostgreSQL: the local server at 127.0.0.1:5432"
	case FromThrowaway:
		return fmt.Sprintf("PostgreSQL: a throwaway cluster from %s at %s (removed at the end)", r.BinDir, db.RedactDSN(dsn))
	}
	return "PostgreSQL: none (" + r.Install + ")"
}
