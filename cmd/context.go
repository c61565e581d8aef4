package cmd

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

func newContextCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "context",
		Short: "List, show and switch the named contexts of the config file (one per cell, one for control)",
		Long: strings.TrimSpace(`
A context names the settings of one database (a Sentry cell, or the control silo): dsn (or
dsn-env: a variable holding it, or service: a pg_service.conf section), replica-dsn, schema,
silo, cell, table, redis-url and the timeouts. They live in $OUTBOXCTL_CONFIG, else
$XDG_CONFIG_HOME/outboxctl/config.yaml (~/.config/outboxctl/config.yaml); see
docs/README.md#contexts. Without the file everything works as before.

A password written inline (in dsn, replica-dsn or redis-url) is refused unless the file is
mode 0600. Passwords are never printed.`),
		Example: examples(`
  # Every context; * marks the current one
  outboxctl context list

  # What the current context resolves to, and where each value comes from
  outboxctl context show

  # Make control the current context (the rest of the file, comments included, stays)
  outboxctl context use control`),
	}
	c.AddCommand(newContextListCmd(a), newContextShowCmd(a), newContextUseCmd(a))
	return c
}

func newContextListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the contexts of the config file",
		Args:  exactArgs(0, "(none)"),
		RunE: func(*cobra.Command, []string) error {
			f, err := a.configFile()
			if err != nil {
				return err
			}
			if !f.Exists {
				a.printer().Notef("no config file at %s: see docs/README.md#contexts", f.Path)
			}
			return a.printer().Print(render.Doc{{Table: contextTable(f)}})
		},
	}
}

// contextTable is one row per context: where it connects (password redacted), its silo,
// cell and schema.
func contextTable(f *config.File) *render.Table {
	t := &render.Table{Columns: []string{"current", "name", "connects_to", "silo", "cell", "schema"}, Rows: [][]any{}}
	for _, n := range f.Names() {
		c, _ := f.Context(n)
		get := func(k string) string { v, _, _ := c.Get(k); return v }
		to := db.RedactDSN(get(config.KeyDSN))
		if v := get(config.KeyDSNEnv); v != "" {
			to = "$" + v
		} else if v := get(config.KeyService); v != "" {
			to = "service=" + v
		}
		mark := ""
		if n == f.Current {
			mark = "*"
		}
		t.Rows = append(t.Rows, []any{mark, n, to, get(config.KeySilo), get(config.KeyCell), get(config.KeySchema)})
	}
	return t
}

func newContextShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a context's settings (default: the current one) and where each value comes from",
		Long: strings.TrimSpace(`
Shows what a context resolves to, one setting a line with its source: the config file's
line, the dsn-env variable, a global flag given on this command line (flags win over the
context), the environment (OUTBOXCTL_DSN, the libpq variables, OUTBOXCTL_REDIS_URL) or the
default. NAME defaults to $OUTBOXCTL_CONTEXT, then current-context. Passwords are redacted.`),
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, err := a.configFile()
			if err != nil {
				return err
			}
			ctx, err := showTarget(f, args, a.getenv)
			if err != nil {
				return configError(err)
			}
			s := config.Resolve(ctx, a.overrides(c), a.getenv)
			t := &render.Table{Columns: []string{"key", "value", "source"}}
			for _, x := range s.Show() {
				t.Rows = append(t.Rows, []any{x.Key, x.Value, x.Source})
			}
			return a.printer().Print(render.Doc{{Table: t}})
		},
	}
}

// showTarget is NAME, else the context OUTBOXCTL_CONTEXT or current-context selects.
func showTarget(f *config.File, args []string, getenv func(string) string) (*config.Context, error) {
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	cs, err := f.Select(name, false, getenv)
	switch {
	case err != nil:
		return nil, err
	case len(cs) == 0 && f.Exists:
		return nil, &config.Error{Msg: "no context given and " + f.Path + " sets no current-context",
			Hint: "outboxctl context show NAME, or outboxctl context use NAME"}
	case len(cs) == 0:
		return nil, &config.Error{Msg: "no context given and no config file at " + f.Path,
			Hint: "write the file (see docs/README.md#contexts) or set " + config.EnvConfig}
	case len(cs) > 1:
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.Name
		}
		return nil, &config.Error{Msg: "context show takes one context, got " + strings.Join(names, ","),
			Hint: "outboxctl context show " + cs[0].Name}
	}
	return cs[0], nil
}

func newContextUseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make NAME the current context (rewrites current-context, keeps the rest of the file)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.configFile()
			if err != nil {
				return err
			}
			if err := f.Use(args[0]); err != nil {
				return configError(err)
			}
			a.printer().Notef("current context: %s (%s)", args[0], f.Path)
			return nil
		},
	}
}

// configFile loads the config file; its errors are the operator's to fix (exit 2).
func (a *app) configFile() (*config.File, error) {
	f, err := config.Load(a.getenv)
	return f, configError(err)
}

// overrides are the global flags given on this command line: they win over a context.
func (a *app) overrides(c *cobra.Command) config.Overrides {
	var o config.Overrides
	str := map[string]**string{"dsn": &o.DSN, "schema": &o.Schema, "silo": &o.Silo, "cell": &o.Cell, "table": &o.Table}
	vals := map[string]*string{"dsn": &a.g.DSN, "schema": &a.g.Schema, "silo": &a.g.Silo, "cell": &a.g.Cell, "table": &a.g.Table}
	for name, dst := range str {
		if c.Flags().Changed(name) {
			*dst = vals[name]
		}
	}
	if c.Flags().Changed("statement-timeout") {
		o.StatementTimeout = &a.g.StatementTimeout
	}
	if c.Flags().Changed("lock-timeout") {
		o.LockTimeout = &a.g.LockTimeout
	}
	if c.Flags().Changed("connect-timeout") {
		o.ConnectTimeout = &a.g.ConnectTimeout
	}
	return o
}

// configError turns a config.Error into a usage error with its hint (exit 2, "Try: …").
func configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return usageErrorf(ce.Hint, "%s", ce.Msg)
	}
	return err
}
