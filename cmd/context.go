package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

func newContextCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "context",
		Short: "List, show and switch the named contexts of the config file (one per cell, one for control)",
		Long: strings.TrimSpace(`
A context names the settings of one database (a Sentry cell, or the control silo): dsn (or
dsn-env: a variable holding it, or service: a pg_service.conf section), replica-dsn, schema,
silo, cell, table, redis-url, the timeouts, readonly, allow and prometheus-url (top's
history). They live in $OUTBOXCTL_CONFIG, else $XDG_CONFIG_HOME/outboxctl/config.yaml
(~/.config/outboxctl/config.yaml); see docs/README.md#contexts. Without the file everything
works as before.

A password written inline (in dsn, replica-dsn, redis-url or prometheus-url) is refused
unless the file is mode 0600. Passwords are never printed.`),
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
		RunE:  func(*cobra.Command, []string) error { return runContextList(a.factory(), a.configFile) },
	}
}

// runContextList prints one row per context of the config file (none when there is no file,
// with a note saying where it was looked for).
func runContextList(d factory, load func() (*config.File, error)) error {
	f, err := load()
	if err != nil {
		return err
	}
	if !f.Exists {
		d.printer.Notef("no config file at %s: see docs/README.md#contexts", f.Path)
	}
	return d.printer.Print(render.Doc{{Table: contextTable(f)}})
}

// contextTable is one row per context (config.ContextRow).
func contextTable(f *config.File) *render.Table { return render.TableOf(f.Rows()) }

func newContextShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a context's settings (default: the current one) and where each value comes from",
		Long: strings.TrimSpace(`
Shows what a context resolves to, one setting a line with its source: the config file's
line, the dsn-env variable, a global flag given on this command line (flags win over the
context), the environment (OUTBOXCTL_DSN, the libpq variables, OUTBOXCTL_REDIS_URL) or the
default. NAME defaults to $OUTBOXCTL_CONTEXT, then current-context (unless the environment
names a database: then no context, as the commands run). Passwords are redacted.`),
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o := contextShowOptions{Name: a.g.Context, overrides: a.overrides(c)} // --context names it as well as NAME does
			if len(args) == 1 {
				o.Name = args[0]
			}
			return runContextShow(a.factory(), a.configFile, o)
		},
	}
}

// contextShowOptions are context show's argument (or --context) and the global flags given
// on the command line, which win over the context.
type contextShowOptions struct {
	Name      string
	overrides config.Overrides
}

// runContextShow prints what a context resolves to, one setting a line with its source.
func runContextShow(d factory, load func() (*config.File, error), o contextShowOptions) error {
	f, err := load()
	if err != nil {
		return err
	}
	ctx, err := f.ShowTarget(o.Name, d.getenv)
	if err != nil {
		return configError(err)
	}
	s := config.Resolve(ctx, o.overrides, d.getenv)
	t := render.TableOf(s.Show())
	if len(t.Rows) == 0 {
		t.Rows = nil
	}
	return d.printer.Print(render.Doc{{Table: t}})
}

func newContextUseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make NAME the current context (rewrites current-context, keeps the rest of the file)",
		Args:  exactArgs(1, "NAME"),
		RunE:  func(_ *cobra.Command, args []string) error { return runContextUse(a.factory(), a.configFile, args[0]) },
	}
}

// runContextUse makes name the config file's current context, keeping the rest of the file.
func runContextUse(d factory, load func() (*config.File, error), name string) error {
	f, err := load()
	if err != nil {
		return err
	}
	if err := f.Use(name); err != nil {
		return configError(err)
	}
	d.printer.Notef("current context: %s (%s)", name, f.Path)
	return nil
}

// configFile loads the config file; its errors are the operator's to fix (exit 2).
func (a *app) configFile() (*config.File, error) {
	f, err := config.LoadCapped(a.getenv, int64(a.g.MaxConfig))
	return f, configError(err)
}

// overrides are the global flags given on this command line: they win over a context.
func (a *app) overrides(c *cobra.Command) config.Overrides {
	f := a.contextFlags()
	return f.Overrides(c.Flags().Changed)
}

// contextFlags are the global flags a context's settings go under.
func (a *app) contextFlags() config.Flags {
	return config.Flags{DSN: a.g.DSN, Schema: a.g.Schema, Silo: a.g.Silo, Cell: a.g.Cell, Table: a.g.Table,
		StatementTimeout: a.g.StatementTimeout, LockTimeout: a.g.LockTimeout, ConnectTimeout: a.g.ConnectTimeout}
}

// configError turns a config.Error into a usage error with its hint (exit 2, "Try: …").
func configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return usageErrorf(ce.Hint, "%s", ce.Msg)
	}
	return err
}

// splitCommands compare a cell with the control silo: given two contexts (--context
// CELL,CONTROL) they read both, each on its own connection (app.split).
var splitCommands = map[string]bool{"outboxctl verify": true, "outboxctl replicate": true} //nolint:gochecknoglobals // constant set

// splitContexts keeps the two contexts of a split verify or replicate: the cell's first.
func (a *app) splitContexts(path string, cs []*config.Context) error {
	if len(cs) != 2 {
		return usageErrorf(path+" --context us,control",
			"%s compares one cell with the control silo: pass two contexts, the cell's then the control silo's (got %d)", strings.TrimPrefix(path, "outboxctl "), len(cs))
	}
	a.split = cs
	return nil
}

// readOnlyCommands may read from a context's replica-dsn besides the fan-out reads; every
// other command (the mutations) connects to the primary.
var readOnlyCommands = map[string]bool{"outboxctl inspect shard": true, "outboxctl verify": true, "outboxctl top": true} //nolint:gochecknoglobals // constant set

// contextless commands never connect, so a broken config file must not stop them.
func contextless(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		switch p.Name() {
		case "context", "enums", "version", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

// applyContexts picks the contexts --context, --all-contexts, $OUTBOXCTL_CONTEXT or
// current-context select. One context's settings go under the flags (flags still win); a
// list, allowed for the fan-out reads only, replaces the command's run with the fan-out.
func (a *app) applyContexts(c *cobra.Command) error {
	if contextless(c) {
		return nil
	}
	if a.env == nil {
		a.env = a.getenv
	}
	path := c.CommandPath()
	fans := fanout.Fans(path)
	a.read = fans || readOnlyCommands[path] || multiContextCommands[path]
	f, err := a.configFile()
	if err != nil {
		return err
	}
	spec, all := a.g.Context, a.g.AllContexts
	if err := f.EnvConflict(spec, all, a.env); err != nil {
		return configError(err)
	}
	if cur, env := f.Overruled(spec, all, a.env); cur != "" && env != "" {
		// The environment wins over the config file; said once, as Docker says it when
		// DOCKER_HOST overrides a context.
		fmt.Fprintf(a.io.Err, "note: $%s names the database, and the environment wins over current-context %s (%s): pass --context %s to use the context\n",
			env, textsafe.Clean(cur), textsafe.Clean(f.Path), textsafe.Clean(cur))
	}
	p, err := f.Pick(spec, all, a.env, config.Kind{Multi: multiContextCommands[path],
		Several: splitCommands[path] || path == "outboxctl top", FanOut: fans, Read: a.read})
	if many := (*config.OneError)(nil); errors.As(err, &many) {
		return usageErrorf(a.oneContextHint(path, many.Got[0].Name),
			"%s streams one context's rows and takes one context, got %d", strings.TrimPrefix(path, "outboxctl "), len(many.Got))
	}
	switch {
	case err != nil || multiContextCommands[path]: // exporterSources layers each context under the flags itself
		a.fan = p.Several
		return configError(err)
	case p.Several != nil && splitCommands[path]:
		if err := a.checkWritable(c, p.Several...); err != nil {
			return err
		}
		return a.splitContexts(path, p.Several)
	case p.Several != nil: // runDocument (top: runTop) reads each context and merges
		a.fan = p.Several
		return nil
	case p.One == nil:
		return nil
	}
	if err := a.checkWritable(c, p.One); err != nil {
		return err
	}
	return a.useContext(c, p.One)
}

// checkWritable is the one check of a context's readonly and allow, before any command
// writes: a command that takes --yes (every one that changes a database) on a context that
// does not permit it is refused, before anything is read or written. --dry-run and
// --print-sql change nothing and pass.
func (a *app) checkWritable(c *cobra.Command, cs ...*config.Context) error {
	if dry := c.Flags().Lookup("dry-run"); c.Flags().Lookup("yes") == nil || a.g.PrintSQL || dry != nil && dry.Value.String() == "true" {
		return nil
	}
	command := strings.TrimPrefix(c.CommandPath(), "outboxctl ")
	for _, one := range cs {
		if err := one.Permits(command); err != nil {
			return readOnlyf("%s", err.Error())
		}
	}
	return nil
}

// oneContextHint is this invocation for one context, name: its arguments kept, its
// --context (or --all-contexts) replaced.
func (a *app) oneContextHint(path, name string) string {
	if len(a.args) == 0 {
		return path + " --context " + name
	}
	return textsafe.Command(append(a.argsWithout(map[string]bool{"dsn": true, "context": true, "all-contexts": false}), "--context", name)...)
}

// useContext layers one context's settings under the flags: the context's dsn (its
// replica-dsn for a read) stands in for $OUTBOXCTL_DSN, so --dsn still wins and every
// connection of the command, wherever it is made, goes where the context says.
func (a *app) useContext(c *cobra.Command, one *config.Context) error {
	l, err := config.Layer(one, a.contextFlags(), c.Flags().Changed, a.env, a.read)
	a.contextName, a.dsnSource, a.usedContext = one.Name, l.DSNSource, one
	if err != nil {
		return configError(err)
	}
	f := l.Flags
	a.g.Schema, a.g.Silo, a.g.Cell, a.g.Table = f.Schema, f.Silo, f.Cell, f.Table
	a.g.StatementTimeout, a.g.LockTimeout, a.g.ConnectTimeout = f.StatementTimeout, f.LockTimeout, f.ConnectTimeout
	a.getenv = l.Getenv
	return nil
}

// on is a fork of the app for one context of several (a fan-out's, a split's, top's or the
// exporter's) writing to s: its settings under the flags (useContext), and none of the
// invocation's other contexts.
func (a *app) on(one *config.Context, s *render.Streams) (*app, error) {
	sub := a.fork(s)
	sub.fan, sub.split = nil, nil
	return sub, sub.useContext(a.cmd, one)
}

// fanDocument runs the read once per selected context, concurrently (fanout.Run bounds it),
// each run with its own connection and timeouts, and merges the documents (fanout.Settle):
// the merged document (nil when no context answered), the contexts gone, and the exit the
// merge picks.
func (a *app) fanDocument(ctx context.Context, run readRun) (render.Doc, []fanout.Gone, error) {
	if a.g.PrintSQL {
		return nil, nil, usageErrorf(a.cmd.CommandPath()+" --print-sql --context "+a.fan[0].Name,
			"--print-sql prints one context's SQL, and %d contexts are selected: pass one --context", len(a.fan))
	}
	names := make([]string, len(a.fan))
	byName := make(map[string]*config.Context, len(a.fan))
	for i, c := range a.fan {
		names[i], byName[c.Name] = c.Name, c
	}
	errs := &fanout.LockedWriter{W: a.io.Err}
	results := fanout.Run(ctx, names, fanout.Options{}, func(ctx context.Context, name string) (fanout.Read, error) {
		return a.runContext(ctx, byName[name], run, errs)
	})
	return fanout.Settle(a.cmd.CommandPath(), results)
}

// runContext runs the read for one context: a fork of the app with the context's settings
// under the flags, its notes on the shared stderr. A context that would print SQL names no
// database: that is its failure, not a result.
func (a *app) runContext(ctx context.Context, one *config.Context, run readRun, errs io.Writer) (fanout.Read, error) {
	var sql bytes.Buffer
	streams := *a.io
	streams.Out, streams.Err = &sql, errs
	sub, err := a.on(one, &streams)
	if err != nil {
		return fanout.Read{}, err
	}
	sub.merged = true
	doc, err := run(ctx, sub)
	if err == nil && sql.Len() > 0 {
		return fanout.Read{}, fmt.Errorf("it names no database (set dsn, dsn-env or service in the context)")
	}
	return fanout.ReadOf(ctx, doc, err)
}
