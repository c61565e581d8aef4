// Package cmd is outboxctl's command line: one constructor per command, no package-level
// command values. Commands are thin: they parse, resolve names, ask internal/query for
// statements, run them through internal/db, and hand the rows to internal/render. Main is
// the process boundary and the only place errors become exit codes.
package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/interrupt"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Main runs outboxctl with args and returns the exit code.
func Main(ctx context.Context, args []string, streams *render.Streams) int {
	// One stderr for everything the command runs at once (see WithSharedErr).
	io := streams.WithSharedErr()
	ctx, stop := interrupt.Notify(ctx)
	defer stop()
	a := &app{io: io, getenv: io.Getenv, args: args}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	a.env = a.getenv
	root := newRootCmd(a)
	// Cobra adds help and completion on Execute; add them now so their argument checks are
	// wrapped as usage errors too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	wrapCobraErrors(root)
	args = cmdline.JSONArgs(cmdline.WatchArgs(args))
	a.args = args
	a.rewritten = cmdline.Rewritten(args)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	cmd, err := root.ExecuteContextC(ctx)
	err = commandLineError(root, args, err)
	path := root.Name()
	if cmd != nil {
		path = cmd.CommandPath()
	}
	err = a.selectionError(path, err)
	err = a.targetedHint(err)
	printError(ctx, io, err, path, a.secrets()...)
	if outputHook != nil && cmd != nil {
		outputHook(printedRun{command: strings.TrimPrefix(path, root.Name()+" "), format: a.g.Output, printSQL: a.g.PrintSQL,
			fanOut: a.g.AllContexts || strings.Contains(a.g.Context, ","), watch: cmd.Flags().Changed("watch"),
			selected: a.g.JSONFields != "" || a.g.JQ != "", out: io.Out, errOut: streams.Err})
	}
	return exitCode(ctx, err)
}

// printedRun is what a command printed, for the tests' output contract (outputHook).
type printedRun struct {
	command, format         string
	printSQL, fanOut, watch bool
	selected                bool      // --json FIELDS or --jq: a selection of the document, not the document
	out                     io.Writer // the streams' stdout, as the caller gave it
	errOut                  io.Writer // and stderr (the Try: lines)
}

// outputHook, when set (by the tests only: export_test.go), sees every run's stdout: the cmd
// tests validate each -o json document against its command's JSON Schema (docs/schema).
var outputHook func(printedRun) //nolint:gochecknoglobals // a test hook, nil in the binary

// secrets are the passwords this invocation was given: in --dsn, in the DSN and Redis URL
// of the environment or the context, PGPASSWORD and REDISCLI_AUTH.
func (a *app) secrets() []string {
	var out []string
	for _, v := range []string{a.g.DSN, a.getenv("OUTBOXCTL_DSN"), a.env("OUTBOXCTL_DSN"), a.getenv("OUTBOXCTL_REDIS_URL")} {
		out = append(out, db.Secrets(v)...)
	}
	// The context's prometheus-url (top's history) may carry basic auth credentials.
	if v, _, ok := a.usedContext.Get(config.KeyPrometheusURL); ok {
		out = append(out, db.Secrets(v)...)
	}
	return append(out, a.env("PGPASSWORD"), a.env("REDISCLI_AUTH"))
}

// app is the state of one invocation: the streams, the global flags, and what is built from
// them on first use (a command that needs no database never dials one).
type app struct {
	// runF, when set (the read commands' flag tests), takes a read command's validated
	// options in place of its run: a command line parsed without a database (gh's runF).
	runF func(opts any) error
	// rewritten are the words cmdline.JSONArgs and WatchArgs wrote (--json=\x00list, --watch=1s):
	// validate refuses another flag that took one as its value.
	rewritten map[string]bool
	io        *render.Streams
	getenv    func(string) string
	g         globalOptions
	reg       *enums.Registry
	// cmd is the command being run (set before it runs), for the no-database verdict rule.
	cmd *cobra.Command
	// args is the command line, env the process environment before a context's settings
	// were layered onto getenv (each context of a fan-out layers its own onto env).
	args []string
	env  func(string) string
	// fan are the contexts a read runs against when --context names several (or
	// --all-contexts): runDocument runs the read once per context and merges the documents.
	fan []*config.Context
	// merged says this app is one context's run of a fan-out, whose document is merged
	// with the others' (doctor then returns its findings as one table, not cards).
	merged bool
	// split are the cell's and the control silo's contexts of a verify or replicate given
	// two (--context us,control).
	split []*config.Context
	// read says the command only reads, so it may go to a context's replica-dsn.
	read bool
	// contextName is the context this app's settings came from (one of a fan-out's), for
	// the --context of the commands it suggests.
	contextName string
	// usedContext is that context, for what it lets top's plans write (readonly, allow).
	usedContext *config.Context
	// dsnSource is where a context's database came from (config.Settings.Source), for the
	// plan's target line.
	dsnSource string
	// dryRun is a mutation's --dry-run (addMutationFlags): confirm shows the plan and stops.
	dryRun bool
	// watches are the commands that take --watch, with what their frames follow.
	watches map[*cobra.Command]*watchSpec
	// sel is --json and --jq, applied by every printer of the invocation.
	sel render.Selection
}

type globalOptions struct {
	DSN              string
	Silo             string
	Cell             string
	Table            string
	Schema           string
	Output           string
	EnumsPath        string
	Deployment       string
	PrintSQL         bool
	NoColor          bool
	NoHeaders        bool
	CSVRaw           bool
	Time             render.TimeMode
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	ConnectTimeout   time.Duration
	Context          string
	AllContexts      bool
	// MaxConfig caps the config file (--max-config-bytes).
	MaxConfig byteSize
	// MaxEnums caps the --enums file and enums lint's (--max-enums-bytes).
	MaxEnums byteSize
	// JSONFields and JQ are --json and --jq (validateSelection makes them a.sel).
	JSONFields string
	JQ         string
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "outboxctl",
		Short: "Inspect and repair Sentry's transactional outboxes in PostgreSQL",
		Long: strings.TrimSpace(`
outboxctl answers "why is this outbox not draining?" for Sentry's hybrid-cloud outboxes
(sentry_regionoutbox, sentry_controloutbox): which shards are stuck in backoff, what waits
in a shard, which row Sentry will deliver, which categories pile up.

Every question is annotated SQL: one statement, or a few named ones (doctor's checks).
Without a database, or with --print-sql, outboxctl prints it for a DBA to paste into psql;
with one, it runs it with bind parameters in a read-only transaction and renders the rows
(on a large table, shards --limit may run a faster form proven to return the same rows).

Connecting: --dsn wins over OUTBOXCTL_DSN, which wins over the libpq environment (PGHOST,
PGPORT, PGUSER, PGDATABASE, PGPASSWORD, ~/.pgpass, PGSSLMODE). --context NAME takes the
settings of a named context of the config file (see outboxctl context), under the flags;
the read commands take several (--context us,de or --all-contexts) and merge their rows.
Which database: the flags (--dsn, --context), then the environment (OUTBOXCTL_CONTEXT;
OUTBOXCTL_DSN, PGHOST, PGHOSTADDR, PGDATABASE or PGSERVICE, which overrule the config
file's current-context, with a note), then current-context; OUTBOXCTL_CONTEXT beside an
OUTBOXCTL_DSN naming another database is refused. A plan's target line names the source.
Names: categories and scopes are accepted by name in any case (scopes with or without
_SCOPE) or by integer.`),
		Example: examples(`
  # Stuck shards as SQL, no database needed
  outboxctl shards --stuck --print-sql

  # The same, run against a database
  outboxctl shards --stuck --dsn postgres://sentry@db.internal:5432/sentry

  # What waits in organization 42's shard
  outboxctl inspect shard organization 42

  # The stuck shards of every cell at once, redrawn every 2s
  outboxctl --all-contexts shards --stuck --watch`),
		SilenceErrors:     true,
		SilenceUsage:      true,
		Version:           versionString(),
		PersistentPreRunE: func(c *cobra.Command, _ []string) error { return a.validate(c) },
	}
	root.SetVersionTemplate("{{.Version}}\n")

	addGlobalFlags(a, root)
	addGlobalCompletions(root)

	root.AddCommand(
		newShardsCmd(a),
		newDoctorCmd(a),
		newInspectCmd(a),
		newDepthCmd(a),
		newDemoCmd(a),
		newBackfillCmd(a),
		newKillswitchCmd(a),
		newMailboxesCmd(a),
		newDrainCmd(a),
		newRestoreCmd(a),
		newRescheduleCmd(a, nil),
		newCompactCmd(a, nil),
		newSkipCmd(a, nil),
		newVerifyCmd(a),
		newReplicateCmd(a),
		newEnumsCmd(a),
		newContextCmd(a),
		newExporterCmd(a),
		newMetricsCmd(a),
		newVersionCmd(a),
		newTopCmd(a),
	)
	wrapCobraErrors(root)
	return root
}

// addGlobalFlags registers the flags every command takes (the global options, a.g) on root.
func addGlobalFlags(a *app, root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.g.DSN, "dsn", "", "PostgreSQL connection string (default: $OUTBOXCTL_DSN, then the libpq PG* environment)")
	addEnumFlag(root, f, &a.g.Silo, "cell", enumFlag{name: "silo", help: "outbox table of which silo: cell (sentry_regionoutbox) or control (sentry_controloutbox)",
		example: "--silo control", words: []string{"cell", "control"}, parse: func(s string) error { _, err := query.ParseSilo(s); return err }})
	f.StringVar(&a.g.Cell, "cell", "", "control silo: only this cell (the region_name column)")
	f.StringVar(&a.g.Table, "table", "", "outbox table name, overriding the silo's default (e.g. sentry_groupactionlogoutbox)")
	f.StringVar(&a.g.Schema, "schema", a.getenv("OUTBOXCTL_SCHEMA"), "schema holding the tables (default: $OUTBOXCTL_SCHEMA, then the search_path)")
	addEnumFlag(root, f, &a.g.Output, "", enumFlag{name: "output", short: "o", help: "output format: table, wide (every column, no cell cut), json, jsonl, csv, markdown (default: table on a terminal, tab-separated otherwise)",
		example: "-o json", words: render.Formats, parse: func(s string) error { _, err := render.ParseFormat(s); return err }})
	f.BoolVar(&a.g.NoHeaders, "no-headers", false, "print tables without their header line")
	f.BoolVar(&a.g.CSVRaw, "csv-raw", false, "with -o csv, print text cells as they are: without it, a cell starting with = + - @, a tab or a carriage return gets a leading ' so a spreadsheet shows it instead of running it as a formula")
	addEnumValue(root, f, enumFlag{name: "time", help: "times on a terminal: relative (\"3m ago\") or absolute (UTC)", example: "--time absolute",
		words: []string{"relative", "absolute"}}, a.g.Time.Type(), a.g.Time.String, a.g.Time.Set)
	f.BoolVar(&a.g.PrintSQL, "print-sql", false, "print the SQL instead of running it")
	addEnumFlag(root, f, &a.g.Deployment, "auto", enumFlag{name: "deployment", help: "which options table Sentry reads: auto (a database with both outbox tables is a monolith), monolith (sentry_option for both outboxes) or split (sentry_controloption for the control outbox)",
		example: "--deployment monolith", words: []string{"auto", "monolith", "split"}, parse: func(s string) error { _, err := query.ParseDeployment(s); return err }})
	f.StringVar(&a.g.EnumsPath, "enums", "", "load categories and scopes from a Sentry checkout's category.py instead of the built-in registry")
	f.BoolVar(&a.g.NoColor, "no-color", false, "disable colour (also: NO_COLOR=1)")
	addDurationFlag(f, &a.g.StatementTimeout, "statement-timeout", db.DefaultStatementTimeout, "30s", "abort any statement that runs longer")
	addDurationFlag(f, &a.g.LockTimeout, "lock-timeout", db.DefaultLockTimeout, "5s", "abort any statement that waits longer for a lock")
	addDurationFlag(f, &a.g.ConnectTimeout, "connect-timeout", db.DefaultConnectTimeout, "10s", "give up connecting after this long")
	f.StringVar(&a.g.Context, "context", "", "use these named contexts of the config file (default: $OUTBOXCTL_CONTEXT, then current-context); read commands take a comma-separated list")
	f.BoolVar(&a.g.AllContexts, "all-contexts", false, "read commands: run against every context of the config file at once")
	addSizeFlag(f, &a.g.MaxEnums, "max-enums-bytes", enums.DefaultMaxSourceBytes, "refuse an --enums or enums lint category.py larger than this (KiB, MiB, GiB): Sentry's is about 14 KB")
	addSizeFlag(f, &a.g.MaxConfig, "max-config-bytes", config.DefaultMaxBytes, "refuse a config file larger than this (KiB, MiB, GiB): a config of a hundred contexts takes a few KiB")
	addSelectionFlags(a, root)
}

// addGlobalCompletions completes the values of the global flags.
func addGlobalCompletions(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("enums", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"py"}, cobra.ShellCompDirectiveFilterFileExt
	})
}

// validate checks the global flags once, before any command runs.
func (a *app) validate(c *cobra.Command) error {
	a.cmd = c
	// Cobra checks required flags and flag groups only after this hook, with plain errors:
	// check them here first so they are usage errors (exit 2).
	if err := c.ValidateRequiredFlags(); err != nil {
		return asUsage(err)
	}
	if err := c.ValidateFlagGroups(); err != nil {
		return asUsage(err)
	}
	if err := a.noRewrittenValue(c); err != nil {
		return err
	}
	if err := a.validateSelection(c); err != nil {
		return err
	}
	if f, _ := render.ParseFormat(a.g.Output); a.g.CSVRaw && f != render.FormatCSV { // -o: refused as parsed (cmdline.Enum)
		return usageErrorf(a.againOr(c.CommandPath()+" --csv-raw", "-o", "csv"), "--csv-raw goes with -o csv (it leaves CSV cells that start with = + - @ unneutralised)")
	}
	for name, d := range map[string]time.Duration{
		"--statement-timeout": a.g.StatementTimeout, "--lock-timeout": a.g.LockTimeout, "--connect-timeout": a.g.ConnectTimeout,
	} {
		if d < time.Millisecond {
			return usageErrorf("", "`%s` must be at least 1ms, got %s", name, d)
		}
	}
	if err := a.applyContexts(c); err != nil {
		return err
	}
	if err := a.applyWatch(c); err != nil {
		return err
	}
	if splitCommands[c.CommandPath()] || mailboxCommands[c.CommandPath()] {
		return nil // verify, replicate and the mailboxes name no outbox target: their --cell is the cell's name
	}
	_, err := a.target()
	return err
}

// registry loads the enum registry once: --enums if given, the built-in one otherwise
// (enums.Load).
func (a *app) registry() (*enums.Registry, error) {
	if a.reg == nil {
		reg, err := enums.Load(a.g.EnumsPath, int64(a.g.MaxEnums))
		if err != nil {
			return nil, err
		}
		a.reg = reg
	}
	return a.reg, nil
}

// target is the outbox table the global flags select.
func (a *app) target() (query.Target, error) {
	silo, err := query.ParseSilo(a.g.Silo)
	if err != nil {
		return query.Target{}, usageErrorf("outboxctl shards --silo control", "%s", err.Error())
	}
	t := query.Target{Silo: silo, Schema: a.g.Schema, Table: a.g.Table, Cell: a.g.Cell}
	if err := t.Validate(); err != nil {
		return query.Target{}, usageErrorf("", "%s", err.Error())
	}
	return t, nil
}

// deployment is --deployment (validated in PersistentPreRunE); unknown means auto.
func (a *app) deployment() query.Deployment {
	d, _ := query.ParseDeployment(a.g.Deployment)
	return d
}

// printSchema is what printed SQL knows of the database without one: only --deployment.
func (a *app) printSchema() query.Schema {
	return query.Schema{Deployment: a.deployment()}
}

// printer builds the output printer for the chosen format.
func (a *app) printer() *render.Printer { return a.printerFor(a.io) }

// printerFor is printer writing to other streams (a watch's frame).
func (a *app) printerFor(s *render.Streams) *render.Printer {
	f, _ := render.ParseFormat(a.g.Output) // validated in PersistentPreRunE
	p := render.NewPrinter(s, f, a.g.NoColor)
	p.Time = a.g.Time
	if a.g.NoHeaders {
		p.Headers = render.HeadersOff
	}
	p.CSVRaw = a.g.CSVRaw
	p.SetSelection(a.commandContext(), a.sel)
	return p
}

// connect opens the database connection for command, or reports that none was given.
func (a *app) connect(ctx context.Context, command string) (*db.Conn, error) {
	return db.Connect(ctx, a.dbConfig(command))
}

// dbConfig is how command connects: the DSN and the global timeouts.
func (a *app) dbConfig(command string) db.Config {
	dsn, _ := db.Resolve(a.g.DSN, a.getenv)
	return db.Config{
		DSN: dsn, Command: command,
		StatementTimeout: a.g.StatementTimeout, LockTimeout: a.g.LockTimeout, ConnectTimeout: a.g.ConnectTimeout,
	}
}

// writePreamble is the session preamble command's write transactions run, for its printed
// script.
func (a *app) writePreamble(command string) []string { return db.WritePreamble(a.dbConfig(command)) }

// wantsSQL reports whether the command should print its SQL instead of running it: on
// --print-sql, or when nothing says which database to use.
func (a *app) wantsSQL() (printOnly, noDatabase bool) {
	_, given := db.Resolve(a.g.DSN, a.getenv)
	return a.g.PrintSQL || !given, !given
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// exactArgs is cobra.ExactArgs with a usage error that names the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			// The hint is a command that runs as printed: the command alone when it takes
			// no argument, else its help (which shows them); never a template like SCOPE ID.
			hint := c.CommandPath() + " --help"
			if n == 0 {
				hint = c.CommandPath()
			}
			return usageErrorf(hint,
				"%s takes %d argument(s), %s; got %d", c.CommandPath(), n, names, len(args))
		}
		return nil
	}
}

// examples indents every line of a help example by two spaces, the cobra convention.
func examples(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			lines[i] = "  " + l
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// targetedHint gives a usage error's Try line (cmd's own, or a service's exitcode.Outcome)
// the invocation's target (cmdline.Targeted): pasted, it runs where the mistaken line would
// have.
func (a *app) targetedHint(err error) error {
	var ce *cmdError
	var o *exitcode.Outcome
	switch {
	case a.cmd == nil:
	case errors.As(err, &ce):
		ce.hint = cmdline.Targeted(ce.hint, a.prefixWords())
	case errors.As(err, &o):
		o.Try = cmdline.Targeted(o.Try, a.prefixWords())
	}
	return err
}
