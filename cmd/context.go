package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fanout"
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

// contextDeps are what the context commands take from outside: the config file (loaded
// through the environment: $OUTBOXCTL_CONFIG, $XDG_CONFIG_HOME), the environment and the
// printer.
type contextDeps struct {
	configFile func() (*config.File, error)
	getenv     func(string) string
	printer    *render.Printer
}

func (a *app) contextDeps() contextDeps {
	return contextDeps{configFile: a.configFile, getenv: a.getenv, printer: a.printer()}
}

func newContextListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the contexts of the config file",
		Args:  exactArgs(0, "(none)"),
		RunE:  func(*cobra.Command, []string) error { return runContextList(a.contextDeps()) },
	}
}

// runContextList prints one row per context of the config file (none when there is no file,
// with a note saying where it was looked for).
func runContextList(d contextDeps) error {
	f, err := d.configFile()
	if err != nil {
		return err
	}
	if !f.Exists {
		d.printer.Notef("no config file at %s: see docs/README.md#contexts", f.Path)
	}
	return d.printer.Print(render.Doc{{Table: contextTable(f)}})
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
			o := contextShowOptions{Name: a.g.Context, overrides: a.overrides(c)} // --context names it as well as NAME does
			if len(args) == 1 {
				o.Name = args[0]
			}
			return runContextShow(a.contextDeps(), o)
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
func runContextShow(d contextDeps, o contextShowOptions) error {
	f, err := d.configFile()
	if err != nil {
		return err
	}
	ctx, err := showTarget(f, o.Name, d.getenv)
	if err != nil {
		return configError(err)
	}
	s := config.Resolve(ctx, o.overrides, d.getenv)
	t := &render.Table{Columns: []string{"key", "value", "source"}}
	for _, x := range s.Show() {
		t.Rows = append(t.Rows, []any{x.Key, x.Value, x.Source})
	}
	return d.printer.Print(render.Doc{{Table: t}})
}

// showTarget is NAME, else the context OUTBOXCTL_CONTEXT or current-context selects.
func showTarget(f *config.File, name string, getenv func(string) string) (*config.Context, error) {
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
		RunE:  func(_ *cobra.Command, args []string) error { return runContextUse(a.contextDeps(), args[0]) },
	}
}

// runContextUse makes name the config file's current context, keeping the rest of the file.
func runContextUse(d contextDeps, name string) error {
	f, err := d.configFile()
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

// fanOutCommands are the reads that run against several contexts at once, each with the
// sort keys of its sections (column, descending) as its single-target SQL orders them.
var fanOutCommands = map[string]map[string][]sortKey{ //nolint:gochecknoglobals // constant table
	"outboxctl shards":           {"shards": {{"depth", true}, {"shard_scope", false}, {"shard_identifier", false}}},
	"outboxctl depth":            {"depth": {{"category", false}}},
	"outboxctl inspect category": {"category": {{"pending", true}, {"shard_scope", false}}},
	"outboxctl inspect object":   {"outboxes": {{"id", true}}},
	"outboxctl inspect message":  {},
	"outboxctl killswitch list":  {"disabled": {{"depth", true}}, "backfill_gates": {{"key", false}}},
	"outboxctl backfill status":  {"backfill": {{"table", false}}},
	"outboxctl doctor":           {"findings": {{"severity", true}}},
}

// readOnlyCommands may read from a context's replica-dsn besides the fan-out reads; every
// other command (the mutations) connects to the primary.
var readOnlyCommands = map[string]bool{"outboxctl inspect shard": true} //nolint:gochecknoglobals // constant set

type sortKey struct {
	column string
	desc   bool
}

// ranks order a column's text by its place in the list rather than alphabetically.
var ranks = map[string][]string{"severity": {"ok", "warn", "crit"}} //nolint:gochecknoglobals // constant table

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
	_, fans := fanOutCommands[path]
	a.read = fans || readOnlyCommands[path]
	f, err := a.configFile()
	if err != nil {
		return err
	}
	spec, all := a.g.Context, a.g.AllContexts
	if a.only != "" {
		spec, all = a.only, false
	}
	var one *config.Context
	if fans {
		cs, err := f.Select(spec, all, a.env)
		if err != nil {
			return configError(err)
		}
		if len(cs) > 1 {
			a.fan = cs
			c.RunE = func(c *cobra.Command, _ []string) error { return a.fanOut(c.Context()) }
			return nil
		}
		if len(cs) == 1 {
			one = cs[0]
		}
	} else if one, err = a.oneContext(f, path, spec, all); err != nil {
		return err
	}
	if one == nil {
		return nil
	}
	return a.useContext(c, one)
}

// oneContext is the context of a command that takes exactly one: a mutation, or a read that
// streams (inspect shard).
func (a *app) oneContext(f *config.File, path, spec string, all bool) (*config.Context, error) {
	if cs, err := f.Select(spec, all, a.env); err == nil && len(cs) > 1 && a.read {
		return nil, usageErrorf(path+" --context "+cs[0].Name,
			"%s streams one context's rows and takes one context, got %d", strings.TrimPrefix(path, "outboxctl "), len(cs))
	}
	one, err := f.One(spec, all, a.env)
	return one, configError(err)
}

// useContext layers one context's settings under the flags: the context's dsn (its
// replica-dsn for a read) stands in for $OUTBOXCTL_DSN, so --dsn still wins and every
// connection of the command, wherever it is made, goes where the context says.
func (a *app) useContext(c *cobra.Command, one *config.Context) error {
	s := config.Resolve(one, a.overrides(c), a.env)
	dsn, given, err := s.Connection(!a.read)
	if err != nil {
		return configError(err)
	}
	for _, x := range []struct {
		key      string
		dst      *string
		resolved string
	}{
		{config.KeySchema, &a.g.Schema, s.Schema}, {config.KeySilo, &a.g.Silo, s.Silo},
		{config.KeyCell, &a.g.Cell, s.Cell}, {config.KeyTable, &a.g.Table, s.Table},
	} {
		if _, _, ok := one.Get(x.key); ok {
			*x.dst = x.resolved
		}
	}
	a.g.StatementTimeout, a.g.LockTimeout, a.g.ConnectTimeout = s.StatementTimeout, s.LockTimeout, s.ConnectTimeout
	_, _, hasRedis := one.Get(config.KeyRedisURL)
	env := a.env
	a.getenv = func(k string) string {
		switch {
		case k == "OUTBOXCTL_DSN" && given && dsn != "":
			return dsn
		case k == "OUTBOXCTL_REDIS_URL" && hasRedis:
			return s.RedisURL
		}
		return env(k)
	}
	return nil
}

// print prints a read's document, or hands it to the fan-out collecting it.
func (a *app) print(doc render.Doc) error {
	if a.sink != nil {
		*a.sink = append(*a.sink, doc)
		return nil
	}
	return a.printer().Print(doc)
}

// fanAnswer is what one context's run printed, and its verdict (threshold, warning,
// critical or pending) if any.
type fanAnswer struct {
	docs    []render.Doc
	means   meaning
	verdict error
}

// verdictSeverity orders the verdicts a read can end with, best first.
var verdictSeverity = []meaning{meansOK, meansPending, meansWarning, meansThreshold, meansCritical} //nolint:gochecknoglobals // constant list

// fanOut runs the command line once per selected context, concurrently (fanout.Run bounds
// it), each run with its own connection and timeouts, and prints the merged rows.
func (a *app) fanOut(ctx context.Context) error {
	if a.g.PrintSQL {
		return usageErrorf(a.cmd.CommandPath()+" --print-sql --context "+a.fan[0].Name,
			"--print-sql prints one context's SQL, and %d contexts are selected: pass one --context", len(a.fan))
	}
	names := make([]string, len(a.fan))
	for i, c := range a.fan {
		names[i] = c.Name
	}
	errs := &lockedWriter{w: a.io.Err}
	results := fanout.Run(ctx, names, fanout.Options{}, func(ctx context.Context, name string) (fanAnswer, error) {
		return a.runContext(ctx, name, errs)
	})
	return a.mergeFan(results)
}

// runContext runs the command line for one context, collecting what it prints.
func (a *app) runContext(ctx context.Context, name string, errs io.Writer) (fanAnswer, error) {
	var sql bytes.Buffer
	docs, err := a.rerun(ctx, name, &sql, errs)
	if err == nil && sql.Len() > 0 {
		return fanAnswer{}, fmt.Errorf("it names no database (set dsn, dsn-env or service in the context)")
	}
	switch m := meaningOf(ctx, err); {
	case m == meansOK:
		return fanAnswer{docs: docs}, nil
	case slices.Contains(verdictSeverity, m):
		return fanAnswer{docs: docs, means: m, verdict: err}, nil
	}
	return fanAnswer{}, err
}

// rerun runs the command line again, in a fresh command tree of its own, for one context
// ("" for the one the flags select): what it prints as documents is collected, anything
// else goes to out and errs.
func (a *app) rerun(ctx context.Context, only string, out, errs io.Writer) ([]render.Doc, error) {
	var docs []render.Doc
	streams := *a.io
	streams.Out, streams.Err = out, errs
	sub := &app{io: &streams, getenv: a.env, env: a.env, args: a.args, only: only, sink: &docs}
	root := newRootCmd(sub)
	root.SetArgs(a.args)
	root.SetOut(io.Discard)
	root.SetErr(errs)
	_, err := root.ExecuteContextC(ctx)
	return docs, err
}

// mergeFan prints the rows of the contexts that answered, one "context gone" line per
// context that did not, and picks the exit: 6 when some failed (it outranks any verdict: the
// missing context could hide a worse one), 1 when all did, else the worst verdict.
func (a *app) mergeFan(results []fanout.Result[fanAnswer]) error {
	if fanout.OutcomeOf(results) != fanout.AllFailed {
		if err := a.print(mergeDocs(results, fanOutCommands[a.cmd.CommandPath()])); err != nil {
			return err
		}
	}
	for _, f := range fanout.Failures(results) {
		fmt.Fprintf(a.io.Err, "Error: context gone: %s: %s\n", render.Escape(f.Target), oneLine(db.RedactDSN(f.Err.Error())))
	}
	switch fanout.OutcomeOf(results) {
	case fanout.AllFailed:
		return silent(meansRuntime)
	case fanout.Partial:
		return silent(meansPartial)
	case fanout.Complete:
	}
	meanings := make([]meaning, len(results))
	for i, r := range results {
		meanings[i] = r.Value.means
	}
	worst := fanout.Worst(meanings, verdictSeverity)
	for _, r := range results {
		if r.Value.means == worst && r.Value.verdict != nil {
			return verdict(worst, "context "+r.Target+": "+r.Value.verdict.Error())
		}
	}
	return nil
}

// mergeDocs joins the answers' sections by name: tables gain a leading context column
// and are sorted as the single-target command sorts them; cards become one row per context.
func mergeDocs(results []fanout.Result[fanAnswer], keys map[string][]sortKey) render.Doc {
	var out render.Doc
	index := map[string]int{}
	for _, r := range results {
		if r.Err != nil {
			continue
		}
		for _, doc := range r.Value.docs {
			for _, sec := range doc {
				i, ok := index[sec.Name]
				if !ok {
					i, index[sec.Name] = len(out), len(out)
					out = append(out, render.Section{Name: sec.Name, Title: sec.Title, Table: tagged(sec)})
				}
				appendRows(&out[i], r.Target, sec)
			}
		}
	}
	for i := range out {
		sortRows(out[i].Table, keys[out[i].Name])
	}
	return out
}

// tagged is an empty table with a section's columns behind a context column.
func tagged(sec render.Section) *render.Table {
	t := &render.Table{Columns: []string{fanout.ContextColumn}, Rows: [][]any{}, MachineOnly: map[string]bool{}, HumanOnly: map[string]bool{}}
	if sec.Table == nil {
		for _, f := range sec.Card {
			t.Columns = append(t.Columns, f.Key)
			t.MachineOnly[f.Key], t.HumanOnly[f.Key] = f.MachineOnly, f.HumanOnly
		}
		return t
	}
	t.Columns = append(t.Columns, sec.Table.Columns...)
	t.Labels, t.Priority = sec.Table.Labels, sec.Table.Priority
	for k, v := range sec.Table.MachineOnly {
		t.MachineOnly[k] = v
	}
	for k, v := range sec.Table.HumanOnly {
		t.HumanOnly[k] = v
	}
	return t
}

// appendRows adds one context's rows (or card) to a merged section, by column name so a
// column one context lacks stays empty rather than shifting the others.
func appendRows(dst *render.Section, name string, sec render.Section) {
	var cols []string
	var rows [][]any
	if sec.Table != nil {
		cols, rows = sec.Table.Columns, sec.Table.Rows
	} else if len(sec.Card) > 0 {
		row := make([]any, len(sec.Card))
		for i, f := range sec.Card {
			cols, row[i] = append(cols, f.Key), f.Value
		}
		rows = [][]any{row}
	}
	for _, r := range rows {
		out := make([]any, len(dst.Table.Columns))
		out[0] = name
		for j, c := range cols {
			if k := slices.Index(dst.Table.Columns, c); k > 0 {
				out[k] = r[j]
			}
		}
		dst.Table.Rows = append(dst.Table.Rows, out)
	}
	if sec.Footer != "" {
		dst.Footer = strings.TrimPrefix(dst.Footer+"\n"+name+": "+sec.Footer, "\n")
	}
}

// sortRows orders merged rows by the section's keys; equal rows keep the contexts' order.
func sortRows(t *render.Table, keys []sortKey) {
	var ks []fanout.Key
	for _, k := range keys {
		if i := slices.Index(t.Columns, k.column); i >= 0 {
			ks = append(ks, fanout.Key{Index: i, Desc: k.desc})
		}
	}
	if len(ks) == 0 {
		return
	}
	compare := fanout.ByColumns(ks...)
	slices.SortStableFunc(t.Rows, func(a, b []any) int { return compare(ranked(a, t, keys), ranked(b, t, keys)) })
}

// ranked is a row with each ranked column's text replaced by its rank.
func ranked(row []any, t *render.Table, keys []sortKey) []any {
	out := row
	for _, k := range keys {
		if i := slices.Index(t.Columns, k.column); i >= 0 && ranks[k.column] != nil {
			if &out[0] == &row[0] {
				out = slices.Clone(row)
			}
			out[i] = int64(slices.Index(ranks[k.column], render.Plain(row[i])))
		}
	}
	return out
}

// lockedWriter lets the contexts' runs share stderr without interleaving within a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
