package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
)

// Select names the contexts a command runs against: --context (a comma-separated list),
// else $OUTBOXCTL_CONTEXT, else current-context; --all-contexts (all) means every context in
// name order. It returns nil for "no context": the command runs as it did before contexts.
func (f *File) Select(flag string, all bool, getenv func(string) string) ([]*Context, error) {
	if all {
		if flag != "" {
			return nil, errorf("", "`--context` and `--all-contexts` both pick contexts; pass one")
		}
		if !f.Exists {
			return nil, f.noFile("--all-contexts")
		}
		var out []*Context
		for _, n := range f.Names() {
			out = append(out, f.contexts[n])
		}
		if len(out) == 0 {
			return nil, errorf("", "--all-contexts: %s defines no contexts", f.Path)
		}
		return out, nil
	}
	spec, from := f.spec(flag, getenv)
	if spec == "" {
		return nil, nil
	}
	if !f.Exists {
		return nil, f.noFile(from)
	}
	var out []*Context
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, errorf("", "%s %q has an empty name: write names separated by single commas", from, spec)
		}
		if seen[name] {
			return nil, errorf("", "%s names context %q twice", from, name)
		}
		seen[name] = true
		c, err := f.Context(name)
		if err != nil && from != "--context" {
			var ce *Error
			errors.As(err, &ce)
			return nil, &Error{Msg: from + ": " + ce.Msg, Hint: ce.Hint}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// spec is the context list asked for, and which setting asked. The environment wins over
// the config file, as for every peer tool (the AWS CLI, gh's GH_HOST, DOCKER_HOST, libpq):
// when it names a database (EnvDatabase), current-context is not used (Overruled says so).
func (f *File) spec(flag string, getenv func(string) string) (spec, from string) {
	switch {
	case flag != "":
		return flag, "--context"
	case getenv(EnvContext) != "":
		return getenv(EnvContext), EnvContext
	case f.Current != "" && !f.overruled(getenv):
		return f.Current, fmt.Sprintf("current-context (%s:%d)", f.Path, f.CurrentLine)
	}
	return "", ""
}

// overruled reports whether the environment names another database than current-context's.
func (f *File) overruled(getenv func(string) string) bool {
	c, err := f.Context(f.Current)
	return EnvDatabase(getenv) != "" && (err != nil || !sameDatabase(c, getenv))
}

// sameDatabase reports whether $OUTBOXCTL_DSN is the context's own DSN (its dsn, or the
// value of its dsn-env): then the environment and the context agree, and the context's
// other settings (its silo, schema, table) still apply. libpq's variables cannot be
// compared with a DSN, so they never agree.
func sameDatabase(c *Context, getenv func(string) string) bool {
	v := getenv("OUTBOXCTL_DSN")
	if EnvDatabase(getenv) != "OUTBOXCTL_DSN" || v == "" {
		return false
	}
	if dsn, _, ok := c.Get(KeyDSN); ok {
		return dsn == v
	}
	if name, _, ok := c.Get(KeyDSNEnv); ok {
		return getenv(name) == v
	}
	return false
}

// databaseEnv are the variables that name a database, in the order they are told: outboxctl's
// own, then libpq's (PGPORT, PGUSER alone name none).
var databaseEnv = []string{"OUTBOXCTL_DSN", "PGSERVICE", "PGHOST", "PGHOSTADDR", "PGDATABASE"} //nolint:gochecknoglobals // constant list

// EnvDatabase is the first variable of the environment that names a database, "" for none.
func EnvDatabase(getenv func(string) string) string {
	for _, k := range databaseEnv {
		if getenv(k) != "" {
			return k
		}
	}
	return ""
}

// Overruled is the current-context the environment's database overrules (see spec), and
// the variable that does: "" when a context was asked for otherwise, or the environment
// names none or the context's own (sameDatabase).
func (f *File) Overruled(flag string, all bool, getenv func(string) string) (current, env string) {
	if flag != "" || all || getenv(EnvContext) != "" || f.Current == "" || !f.overruled(getenv) {
		return "", ""
	}
	return f.Current, EnvDatabase(getenv)
}

// EnvConflict refuses $OUTBOXCTL_CONTEXT beside a variable naming another database than the
// context's own dsn: both are the environment, and neither may silently win (a runbook that
// exported one cell's DSN would change the other cell). --context or --dsn settles it.
func (f *File) EnvConflict(flag string, all bool, getenv func(string) string) error {
	name, env := getenv(EnvContext), EnvDatabase(getenv)
	if flag != "" || all || name == "" || env == "" || strings.Contains(name, ",") {
		return nil
	}
	c, err := f.Context(name)
	if err != nil || sameDatabase(c, getenv) {
		return nil // Select says what is wrong with the name; the same database is no conflict
	}
	return errorf("pass --context "+name+" or --dsn to say which, or unset one of them",
		"$%s (%s) and $%s both name a database, and not the same one", EnvContext, name, env)
}

// One is Select for a command that changes a database: it takes exactly one context.
func (f *File) One(flag string, all bool, getenv func(string) string) (*Context, error) {
	cs, err := f.Select(flag, all, getenv)
	switch {
	case err != nil:
		return nil, err
	case all || len(cs) > 1:
		spec, _ := f.spec(flag, getenv)
		if all {
			spec = "--all-contexts"
		}
		return nil, errorf("run the command once per context, e.g. --context "+cs[0].Name,
			"a command that changes a database takes exactly one context, got %d (%s)", len(cs), spec)
	case len(cs) == 0:
		return nil, nil
	}
	return cs[0], nil
}

// Overrides are the global flags the operator typed (nil: not given). They win over the
// context.
type Overrides struct {
	DSN, Schema, Silo, Cell, Table, RedisURL      *string
	StatementTimeout, LockTimeout, ConnectTimeout *time.Duration
}

// Settings are one target's resolved settings, each with where it came from.
type Settings struct {
	// Context is the context's name ("" without one).
	Context string
	// DSN is where to connect ("" with DSNGiven: the libpq environment). DSNEnv names a
	// dsn-env variable that turned out unset.
	DSN                string
	DSNGiven           bool
	DSNEnv             string
	ReplicaDSN         string
	Schema, Silo, Cell string
	Table, RedisURL    string
	// ReadOnly and Allow are the context's readonly and allow ("" when unset).
	ReadOnly, Allow string
	// PrometheusURL is the context's prometheus-url ("" when unset): the context's alone.
	PrometheusURL           string
	StatementTimeout        time.Duration
	LockTimeout             time.Duration
	ConnectTimeout          time.Duration
	sources                 map[string]string
	dsnFromFlag, hasReplica bool
}

// Resolve applies, for the context selected (c may be nil: no context), the precedence
// flags > context > environment (OUTBOXCTL_DSN, the libpq variables, OUTBOXCTL_REDIS_URL)
// > defaults. Which context is selected is Select's: the environment's database overrules
// current-context there.
func Resolve(c *Context, o Overrides, getenv func(string) string) Settings {
	s := Settings{sources: map[string]string{}, StatementTimeout: db.DefaultStatementTimeout,
		LockTimeout: db.DefaultLockTimeout, ConnectTimeout: db.DefaultConnectTimeout, Silo: "cell"}
	if c != nil {
		s.Context = c.Name
	}
	s.resolveDSN(c, o.DSN, getenv)
	for _, x := range []struct {
		key  string
		flag *string
		dst  *string
		env  string
	}{
		{KeySchema, o.Schema, &s.Schema, ""}, {KeySilo, o.Silo, &s.Silo, ""}, {KeyCell, o.Cell, &s.Cell, ""},
		{KeyTable, o.Table, &s.Table, ""}, {KeyRedisURL, o.RedisURL, &s.RedisURL, "OUTBOXCTL_REDIS_URL"},
		{KeyReplicaDSN, nil, &s.ReplicaDSN, ""},
	} {
		s.pick(c, x.key, x.flag, x.dst, x.env, getenv)
	}
	s.hasReplica = s.ReplicaDSN != ""
	// readonly and allow are the context's alone (no flag or variable lifts them): shown
	// when it sets them.
	for _, x := range []struct {
		key string
		dst *string
	}{{KeyReadOnly, &s.ReadOnly}, {KeyAllow, &s.Allow}} {
		if v, _, ok := c.Get(x.key); ok {
			*x.dst, s.sources[x.key] = strings.ReplaceAll(v, ",", ", "), contextSource(c, x.key)
		}
	}
	// prometheus-url too is the context's alone (top's history; shown redacted).
	if v, _, ok := c.Get(KeyPrometheusURL); ok {
		s.PrometheusURL, s.sources[KeyPrometheusURL] = v, contextSource(c, KeyPrometheusURL)
	}
	for _, x := range []struct {
		key  string
		flag *time.Duration
		dst  *time.Duration
	}{
		{KeyStatementTimeout, o.StatementTimeout, &s.StatementTimeout},
		{KeyLockTimeout, o.LockTimeout, &s.LockTimeout},
		{KeyConnectTimeout, o.ConnectTimeout, &s.ConnectTimeout},
	} {
		s.pickDuration(c, x.key, x.flag, x.dst)
	}
	return s
}

// contextSource names a context's line as a value's source.
func contextSource(c *Context, key string) string {
	return fmt.Sprintf("context %s, line %d", c.Name, c.lines[key])
}

func (s *Settings) pick(c *Context, key string, flag, dst *string, env string, getenv func(string) string) {
	if flag != nil {
		*dst, s.sources[key] = *flag, "flag --"+key
		return
	}
	if v, _, ok := c.Get(key); ok {
		*dst, s.sources[key] = v, contextSource(c, key)
		return
	}
	if env != "" && getenv(env) != "" {
		*dst, s.sources[key] = getenv(env), "env "+env
		return
	}
	s.sources[key] = "default"
}

func (s *Settings) pickDuration(c *Context, key string, flag, dst *time.Duration) {
	if flag != nil {
		*dst, s.sources[key] = *flag, "flag --"+key
		return
	}
	if v, _, ok := c.Get(key); ok {
		d, _ := time.ParseDuration(v) // checked by Parse
		*dst, s.sources[key] = d, contextSource(c, key)
		return
	}
	s.sources[key] = "default"
}

// resolveDSN: --dsn, else the context's dsn, dsn-env or service, else OUTBOXCTL_DSN, else
// the libpq environment.
func (s *Settings) resolveDSN(c *Context, flag *string, getenv func(string) string) {
	if v, line, ok := c.Get(KeyDSNEnv); ok && flag == nil {
		s.sources[KeyDSN] = fmt.Sprintf("env %s (dsn-env, context %s, line %d)", v, c.Name, line)
		s.DSN, s.DSNGiven = getenv(v), getenv(v) != ""
		if !s.DSNGiven {
			s.DSNEnv = v
		}
		return
	}
	if v, line, ok := c.Get(KeyService); ok && flag == nil {
		s.sources[KeyDSN] = fmt.Sprintf("pg_service.conf (service, context %s, line %d)", c.Name, line)
		s.DSN, s.DSNGiven = "service="+v, true
		return
	}
	var given bool
	var src string
	switch v, _, ok := c.Get(KeyDSN); {
	case flag != nil:
		s.DSN, src, s.dsnFromFlag = *flag, "flag --dsn", true
	case ok:
		s.DSN, src = v, contextSource(c, KeyDSN)
	case getenv("OUTBOXCTL_DSN") != "":
		s.DSN, src = getenv("OUTBOXCTL_DSN"), "env OUTBOXCTL_DSN"
	default:
		_, given = db.Resolve("", getenv)
		src = "default (none given)"
		if given {
			src = "libpq environment (PGHOST, PGDATABASE, …)"
		}
	}
	s.DSNGiven = given || s.DSN != ""
	s.sources[KeyDSN] = src
}

// Connection returns where a command connects: a read goes to replica-dsn when the context
// has one and --dsn did not name another server; a write (mutation) never does. given is
// false when nothing says where to connect (the command prints its SQL instead).
func (s Settings) Connection(write bool) (dsn string, given bool, err error) {
	if !write && s.hasReplica && !s.dsnFromFlag {
		return s.ReplicaDSN, true, nil
	}
	if s.DSNEnv != "" {
		return "", false, errorf("export "+s.DSNEnv+"=postgres://USER@HOST:5432/DB, or pass --dsn",
			"context %s: its dsn-env variable %s is not set", s.Context, s.DSNEnv)
	}
	return s.DSN, s.DSNGiven, nil
}

// Source is where key's value came from, as context show says it ("flag --dsn", "env
// OUTBOXCTL_DSN", "context us, line 3", "default").
func (s Settings) Source(key string) string { return s.sources[key] }

// Setting is one line of `context show`: a key, its value (passwords redacted) and source.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Show lists the settings in Keys order, with every password redacted (db.RedactDSN).
// dsn-env and service show as the dsn they resolve to.
func (s Settings) Show() []Setting {
	dsn := s.DSN
	if s.DSNEnv != "" {
		dsn = "(" + s.DSNEnv + " is not set)"
	}
	vals := map[string]string{
		KeyDSN: dsn, KeyReplicaDSN: s.ReplicaDSN, KeySchema: s.Schema, KeySilo: s.Silo, KeyCell: s.Cell,
		KeyTable: s.Table, KeyRedisURL: s.RedisURL, KeyStatementTimeout: s.StatementTimeout.String(),
		KeyLockTimeout: s.LockTimeout.String(), KeyConnectTimeout: s.ConnectTimeout.String(),
		KeyReadOnly: s.ReadOnly, KeyAllow: s.Allow, KeyPrometheusURL: s.PrometheusURL,
	}
	var out []Setting
	for _, k := range Keys {
		src, ok := s.sources[k]
		if !ok {
			continue // dsn-env and service are shown as dsn's source
		}
		out = append(out, Setting{Key: k, Value: db.RedactDSN(vals[k]), Source: src})
	}
	return out
}

// ContextRow is one context of context list: where it connects (password redacted; a
// dsn-env context as $VAR, a service one as service=NAME), its silo, cell and schema;
// current is "*" for the current context.
type ContextRow struct {
	Current    string `json:"current"`
	Name       string `json:"name"`
	ConnectsTo string `json:"connects_to"`
	Silo       string `json:"silo"`
	Cell       string `json:"cell"`
	Schema     string `json:"schema"`
}

// Rows are the file's contexts, one row each, in the file's order of names.
func (f *File) Rows() []ContextRow {
	rows := []ContextRow{}
	for _, n := range f.Names() {
		c, _ := f.Context(n)
		get := func(k string) string { v, _, _ := c.Get(k); return v }
		to := db.RedactDSN(get(KeyDSN))
		if v := get(KeyDSNEnv); v != "" {
			to = "$" + v
		} else if v := get(KeyService); v != "" {
			to = "service=" + v
		}
		mark := ""
		if n == f.Current {
			mark = "*"
		}
		rows = append(rows, ContextRow{Current: mark, Name: n, ConnectsTo: to, Silo: get(KeySilo), Cell: get(KeyCell), Schema: get(KeySchema)})
	}
	return rows
}
