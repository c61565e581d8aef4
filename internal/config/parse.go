package config

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The patterns are compiled when a config file is read, not at every command's start-up.
var (
	// A context name is a word: commas separate names in --context us,de.
	nameRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// envRE is a POSIX environment variable name; serviceRE a pg_service.conf section that
	// needs no quoting in a key=value DSN.
	envRE     = lazyRE(`^[A-Za-z_][A-Za-z0-9_]*$`)
	serviceRE = lazyRE(`^[A-Za-z0-9_.-]+$`)
)

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// topKeys are the keys of the file's top-level mapping.
var topKeys = []string{"current-context", "contexts"} //nolint:gochecknoglobals // constant list

// Parse reads a config file's contents; path and mode are for messages and the password rule.
func Parse(path string, data []byte, mode fs.FileMode) (*File, error) {
	f := &File{Path: path, Exists: true, Mode: mode, contexts: map[string]*Context{}, raw: data}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errorf("", "%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return f, nil // an empty file: no contexts
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, f.at(root, "want a mapping with current-context and contexts")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, f.at(k, "%q appears twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "current-context":
			f.Current, err = f.scalar(v, "current-context")
			f.CurrentLine = v.Line
		case "contexts":
			err = f.parseContexts(v)
		default:
			err = f.at(k, "unknown key %q (known: %s)", k.Value, strings.Join(topKeys, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

// at is an error located at node's line.
func (f *File) at(n *yaml.Node, format string, args ...any) error {
	return errorf("", "%s:%d: %s", f.Path, n.Line, fmt.Sprintf(format, args...))
}

// scalar returns a node's text, refusing lists, mappings and empty values.
func (f *File) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		return "", f.at(n, "%s wants a non-empty string", what)
	}
	return n.Value, nil
}

// list returns a sequence of words (allow: [reschedule, compact]) joined by commas.
func (f *File) list(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.SequenceNode {
		return "", f.at(n, "%s wants a list such as [reschedule, compact]", what)
	}
	words := make([]string, 0, len(n.Content))
	for _, w := range n.Content {
		s, err := f.scalar(w, what)
		if err != nil {
			return "", err
		}
		words = append(words, strings.TrimSpace(s))
	}
	return strings.Join(words, ","), nil
}

func (f *File) parseContexts(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "contexts:" with nothing under it
	}
	if n.Kind != yaml.MappingNode {
		return f.at(n, "contexts wants a mapping of context names to settings")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !nameRE().MatchString(k.Value) {
			return f.at(k, "context name %q: use letters, digits, '_', '.' and '-' (commas separate names in --context)", k.Value)
		}
		if _, dup := f.contexts[k.Value]; dup {
			return f.at(k, "context %q appears twice", k.Value)
		}
		c, err := f.parseContext(k, v)
		if err != nil {
			return err
		}
		f.contexts[c.Name] = c
	}
	return nil
}

func (f *File) parseContext(k, v *yaml.Node) (*Context, error) {
	c := &Context{Name: k.Value, Line: k.Line, values: map[string]string{}, lines: map[string]int{}}
	if v.Kind != yaml.MappingNode {
		return nil, f.at(v, "context %q wants a mapping of settings (dsn, schema, silo, …)", c.Name)
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		key, val := v.Content[i], v.Content[i+1]
		if !known(key.Value) {
			return nil, f.at(key, "context %q: unknown key %q (known: %s)", c.Name, key.Value, strings.Join(Keys, ", "))
		}
		if _, dup := c.values[key.Value]; dup {
			return nil, f.at(key, "context %q: %q appears twice", c.Name, key.Value)
		}
		var s string
		var err error
		if key.Value == KeyAllow {
			s, err = f.list(val, fmt.Sprintf("context %q: %s", c.Name, key.Value))
		} else {
			s, err = f.scalar(val, fmt.Sprintf("context %q: %s", c.Name, key.Value))
		}
		if err != nil {
			return nil, err
		}
		c.values[key.Value], c.lines[key.Value] = s, key.Line
	}
	if err := f.check(c); err != nil {
		return nil, err
	}
	return c, nil
}

func known(key string) bool {
	for _, k := range Keys {
		if k == key {
			return true
		}
	}
	return false
}

// check validates one context's values, each error naming the line.
func (f *File) check(c *Context) error {
	bad := func(key, format string, args ...any) error {
		return errorf("", "%s:%d: context %q: %s: %s", f.Path, c.lines[key], c.Name, key, fmt.Sprintf(format, args...))
	}
	var where []string
	for _, k := range []string{KeyDSN, KeyDSNEnv, KeyService} {
		if _, _, ok := c.Get(k); ok {
			where = append(where, k)
		}
	}
	if len(where) > 1 {
		return bad(where[1], "%s and %s both say where to connect; keep one", where[0], where[1])
	}
	checks := []struct {
		key string
		ok  func(string) error
	}{
		{KeyDSNEnv, match(envRE(), "want an environment variable name such as US_DSN")},
		{KeyService, match(serviceRE(), "want a pg_service.conf section name (letters, digits, '_', '.', '-')")},
		{KeySilo, func(s string) error { _, err := query.ParseSilo(s); return err }},
		{KeySchema, func(s string) error { return query.ValidateIdent("schema", s) }},
		{KeyTable, func(s string) error { return query.ValidateIdent("table", s) }},
		{KeyCell, func(s string) error { return query.ValidateIdent("cell", s) }},
		{KeyRedisURL, redisURL},
		{KeyPrometheusURL, func(s string) error { _, err := history.Parse(s); return err }},
		{KeyStatementTimeout, duration},
		{KeyLockTimeout, duration},
		{KeyConnectTimeout, duration},
		{KeyReadOnly, func(s string) error {
			if s != "true" && s != "false" {
				return fmt.Errorf("%q: want true or false", s)
			}
			return nil
		}},
		{KeyAllow, func(s string) error {
			for _, w := range strings.Split(s, ",") {
				if !slices.Contains(allowWords(), w) {
					return fmt.Errorf("%q is no command that writes (known: %s)", w, strings.Join(allowWords(), ", "))
				}
			}
			return nil
		}},
	}
	for _, ch := range checks {
		if v, _, ok := c.Get(ch.key); ok {
			if err := ch.ok(v); err != nil {
				return bad(ch.key, "%s", err.Error())
			}
		}
	}
	if v, _, _ := c.Get(KeyReadOnly); v == "false" {
		if _, _, ok := c.Get(KeyAllow); ok {
			return bad(KeyReadOnly, "false, and allow limits the writes: drop one of them")
		}
	}
	if _, _, ok := c.Get(KeyCell); ok {
		if s, _, _ := c.Get(KeySilo); s != "control" {
			return bad(KeyCell, "a cell filters the control outbox; add silo: control")
		}
	}
	return f.checkSecrets(c)
}

func match(re *regexp.Regexp, want string) func(string) error {
	return func(s string) error {
		if !re.MatchString(s) {
			return fmt.Errorf("%q: %s", s, want)
		}
		return nil
	}
}

func redisURL(s string) error {
	if !strings.HasPrefix(s, "redis://") && !strings.HasPrefix(s, "rediss://") {
		return fmt.Errorf("%q: want redis://HOST:6379/DB or rediss://… for TLS", db.RedactDSN(s))
	}
	return nil
}

func duration(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it as 30s, 500ms or 1m30s", s)
	}
	if d < time.Millisecond {
		return fmt.Errorf("%q: must be at least 1ms", s)
	}
	return nil
}

// checkSecrets refuses a password written inline in a file others can read. Whatever the
// project's redaction would hide is a password.
func (f *File) checkSecrets(c *Context) error {
	if f.Mode&0o077 == 0 {
		return nil
	}
	for _, k := range []string{KeyDSN, KeyReplicaDSN, KeyRedisURL, KeyPrometheusURL} {
		v, line, ok := c.Get(k)
		if ok && db.RedactDSN(v) != v {
			return errorf("chmod 600 "+f.Path,
				"%s:%d: context %q: %s holds a password, and the file can be read by others (mode %04o): run chmod 600 %s, or move the password out (dsn-env, ~/.pgpass, REDISCLI_AUTH)",
				f.Path, line, c.Name, k, uint32(f.Mode.Perm()), f.Path)
		}
	}
	return nil
}
