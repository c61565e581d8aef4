// Package config reads outboxctl's contexts: named sets of connection settings (one per
// Sentry cell and one for the control silo) in a YAML file, so an on-call engineer types
// `--context us` instead of `--dsn … --schema … --silo … --cell …` per database.
//
// The file is $OUTBOXCTL_CONFIG, else $XDG_CONFIG_HOME/outboxctl/config.yaml, else
// ~/.config/outboxctl/config.yaml. Without one, everything works as it did before contexts.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/outboxctl/outboxctl/internal/bytesize"
)

// The keys a context may set. Timeouts are Go durations ("30s", "1m30s").
const (
	KeyDSN              = "dsn"
	KeyDSNEnv           = "dsn-env"
	KeyService          = "service"
	KeyReplicaDSN       = "replica-dsn"
	KeySchema           = "schema"
	KeySilo             = "silo"
	KeyCell             = "cell"
	KeyTable            = "table"
	KeyRedisURL         = "redis-url"
	KeyStatementTimeout = "statement-timeout"
	KeyLockTimeout      = "lock-timeout"
	KeyConnectTimeout   = "connect-timeout"
	// KeyPrometheusURL is the Prometheus server that scrapes this context's exporter: top
	// reads its recent history there (sparklines); nothing else uses it.
	KeyPrometheusURL = "prometheus-url"
)

// Keys lists the context keys in the order `context show` prints them.
var Keys = []string{ //nolint:gochecknoglobals // constant list
	KeyDSN, KeyDSNEnv, KeyService, KeyReplicaDSN, KeySchema, KeySilo, KeyCell, KeyTable,
	KeyRedisURL, KeyStatementTimeout, KeyLockTimeout, KeyConnectTimeout, KeyReadOnly, KeyAllow,
	KeyPrometheusURL,
}

// EnvConfig and EnvContext are the variables that name the file and pick a context.
const (
	EnvConfig  = "OUTBOXCTL_CONFIG"
	EnvContext = "OUTBOXCTL_CONTEXT"
)

// Error is a problem with the operator's configuration: like a bad flag, it is theirs to fix
// (exit 2). Hint, when set, is the command that fixes it.
type Error struct {
	Msg  string
	Hint string
}

func (e *Error) Error() string { return e.Msg }

// UsageError marks configuration errors as usage errors for cmd's exit-code mapping.
func (e *Error) UsageError() bool { return true }

func errorf(hint, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Context is one named set of settings, as written in the file.
type Context struct {
	Name string
	// Line is where the context's name is written.
	Line   int
	values map[string]string
	lines  map[string]int
}

// Get returns the value the file gives key, and its line; ok is false when the file does
// not set it.
func (c *Context) Get(key string) (value string, line int, ok bool) {
	if c == nil {
		return "", 0, false
	}
	v, ok := c.values[key]
	return v, c.lines[key], ok
}

// File is the parsed config file. A File whose Exists is false stands for "no file": it has
// no contexts, and asking it for one says where the file was looked for.
type File struct {
	Path   string
	Exists bool
	Mode   fs.FileMode
	// Current is current-context ("" when unset), written at CurrentLine.
	Current     string
	CurrentLine int
	contexts    map[string]*Context
	raw         []byte
	// maxBytes is the size cap the file was read under (0: DefaultMaxBytes); Use reads it
	// again under the same cap.
	maxBytes int64
}

// Locate returns where the config file is: $OUTBOXCTL_CONFIG (explicit), else
// $XDG_CONFIG_HOME/outboxctl/config.yaml, else $HOME/.config/outboxctl/config.yaml. It
// returns "" when none of those variables is set.
func Locate(getenv func(string) string) (path string, explicit bool) {
	if p := getenv(EnvConfig); p != "" {
		return p, true
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "outboxctl", "config.yaml"), false
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "outboxctl", "config.yaml"), false
	}
	return "", false
}

// Load reads the config file Locate names, under DefaultMaxBytes (LoadCapped). A missing
// file at the default location is no error (a File with Exists false); a missing
// $OUTBOXCTL_CONFIG is, since the operator named it.
func Load(getenv func(string) string) (*File, error) {
	return LoadCapped(getenv, DefaultMaxBytes)
}

// LoadCapped is Load refusing a file over limit bytes (--max-config-bytes) before reading it.
func LoadCapped(getenv func(string) string, limit int64) (*File, error) {
	path, explicit := Locate(getenv)
	if path == "" {
		return &File{}, nil
	}
	data, mode, err := readConfig(path, limit)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return &File{Path: path}, nil
	}
	var big *TooBigError
	if errors.As(err, &big) {
		return nil, err
	}
	if err != nil {
		if !explicit {
			return nil, errorf("fix the file's permissions, or set "+EnvConfig+" to another file",
				"reading config: %s", strings.TrimPrefix(err.Error(), "open "))
		}
		return nil, errorf("unset "+EnvConfig+" or point it at a readable file",
			"reading config (%s): %s", EnvConfig, strings.TrimPrefix(err.Error(), "open "))
	}
	f, err := Parse(path, data, mode)
	if f != nil {
		f.maxBytes = limit
	}
	return f, err
}

// DefaultMaxBytes caps the config file (--max-config-bytes): a hundred contexts take a few
// KiB, so a file over 1 MiB is a mistake (a log or a dump $OUTBOXCTL_CONFIG points at), and
// reading it whole before saying so cost ~5× its size (966 MB for 200 MB).
const DefaultMaxBytes = 1 << 20

// TooBigError is a config file over its cap. Like every input over its cap it is the input's
// problem, not the command line's (exit 1); the message names the flag that raises the cap.
type TooBigError struct {
	Path        string
	Limit, Size int64
}

func (e *TooBigError) Error() string {
	raise := bytesize.Format((e.Size + 1<<20 - 1) >> 20 << 20)
	return fmt.Sprintf("reading config: %s is larger than the %s cap on a config file: point %s at the config file, or raise the cap (--max-config-bytes %s)",
		e.Path, bytesize.Format(e.Limit), EnvConfig, raise)
}

// readConfig reads the file at path and its permissions, refusing one over limit bytes
// (0: DefaultMaxBytes) before reading it: by its size when it has one, and by never reading
// more than limit+1 bytes when it does not say (a pipe, /dev/zero) or grows meanwhile.
func readConfig(path string, limit int64) ([]byte, fs.FileMode, error) {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, 0, err
	}
	// Size is what the file holds (at least, when it does not say): the cap the error
	// suggests reads it.
	if st.Size() > limit {
		return nil, 0, &TooBigError{Path: path, Limit: limit, Size: st.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(data)) > limit {
		return nil, 0, &TooBigError{Path: path, Limit: limit, Size: int64(len(data))}
	}
	return data, st.Mode().Perm(), nil
}

// Names lists the contexts in name order (the order of --all-contexts).
func (f *File) Names() []string {
	names := make([]string, 0, len(f.contexts))
	for n := range f.contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Context returns the named context, or an error listing the ones there are.
func (f *File) Context(name string) (*Context, error) {
	if !f.Exists {
		return nil, f.noFile("context " + name)
	}
	if c, ok := f.contexts[name]; ok {
		return c, nil
	}
	known := "it has none"
	if names := f.Names(); len(names) > 0 {
		known = "known contexts: " + strings.Join(names, ", ")
	}
	return nil, errorf("outboxctl context list", "no context %q in %s (%s)", name, f.Path, known)
}

// noFile is the error for asking a missing file for a context.
func (f *File) noFile(what string) error {
	where := f.Path
	if where == "" {
		where = "$" + EnvConfig + " (no HOME to find ~/.config/outboxctl/config.yaml)"
	}
	return errorf("write the file (see docs/README.md#contexts) or set "+EnvConfig,
		"%s needs a config file, and there is none at %s", what, where)
}
