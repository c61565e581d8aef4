package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/audit"
	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
)

func newKillswitchCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "killswitch",
		Short: "List, check and change the disabled shards and backfill gates",
		Long: strings.TrimSpace(`
Sentry skips the organization and user shards listed in the options
hybrid_cloud.authentication.disabled_organization_shards and disabled_user_shards: a
disabled shard is still visited on the usual backoff (2 s after the claim, doubling on each
visit to a 1 h cap, restarting at 2 s whenever a new row arrives); each visit deletes the
older duplicates of its head coalesce group without delivering them, and nothing is
delivered until it is removed again. Trimming stops for good once the lowest-id row is the
newest of its group. The lists live in the options table Sentry reads for the outbox:
sentry_option in a cell and in a monolith (self-hosted: one database with both outboxes,
which reads sentry_option for both), sentry_controloption in a split deployment's control
database. outboxctl detects which (--deployment overrides). Backfills are gated by
outbox_replication.<table>.replication_version.

Changes take --reason (written into the SQL as a comment, visible in pg_stat_activity, and
into a JSON audit line on stderr; a warning when missing), show a plan, and ask for
confirmation (--yes without a terminal). They write JSON with integer ids, last_updated = now() and last_updated_by =
'cli', as 'sentry config set' does, so Sentry's workers see them within about 20 s.`),
		Args: exactArgs(0, "(a subcommand: list, check, add, remove or gate)"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newKillswitchListCmd(a), newKillswitchCheckCmd(a),
		newKillswitchChangeCmd(a, true), newKillswitchChangeCmd(a, false), newKillswitchGateCmd(a))
	return c
}

// killswitchKey is the option of a scope that can be disabled, or a usage error.
func (a *app) killswitchKey(scopeArg string) (*query.Enum, string, error) {
	scope, err := a.scopeArg(scopeArg)
	if err != nil {
		return nil, "", err
	}
	if key := killswitch.KeyFor(scope.Value); key != "" {
		return scope, key, nil
	}
	return nil, "", usageErrorf("outboxctl killswitch list",
		"%s shards cannot be disabled: Sentry's should_skip_shard reads a kill switch only for ORGANIZATION_SCOPE and USER_SCOPE", scope.Name)
}

// killswitchListOptions are killswitch list's flags.
type killswitchListOptions struct {
	Coded     []string
	overrides map[string]int64 // parsed --coded, set by Validate
}

// Validate checks the flags before anything is read.
func (o *killswitchListOptions) Validate() error {
	overrides, err := backfill.ParseCoded(o.Coded)
	if err != nil {
		return usageErrorf("outboxctl killswitch list --coded sentry_organization=4", "%s", err.Error())
	}
	o.overrides = overrides
	return nil
}

func newKillswitchListCmd(a *app) *cobra.Command {
	var o killswitchListOptions
	c := &cobra.Command{
		Use:   "list",
		Short: "List the disabled shards, what waits behind them, and the backfill gates",
		Long: strings.TrimSpace(`
List the kill-switch lists of every options table present, what waits behind each disabled
shard (one statement for all of them), and the backfill gates held below the coded
version. The "stores" section says which options table Sentry reads for each outbox in
this deployment (--deployment): in a monolith sentry_option governs both outboxes and a
list in sentry_controloption disables nothing.`),
		Example: examples(`
			outboxctl killswitch list
			outboxctl killswitch list -o json`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runKillswitchList(ctx, d, o, t)
			})
		},
	}
	c.Flags().StringArrayVar(&o.Coded, "coded", nil, "override a table's coded replication_version, TABLE=N (repeatable), for the backfill gates")
	a.addWatch(c, []string{"options_table", "scope", "shard"}, []string{"depth"})
	return c
}

// runKillswitchList prints the SQL, or reads and returns the kill-switch lists, what waits
// behind them and the backfill gates, from any Sentry database (killswitch.RunList).
func runKillswitchList(ctx context.Context, d factory, o killswitchListOptions, t query.Target) (render.Doc, error) {
	return killswitch.RunList(d.reader(ctx, "killswitch"), t, backfill.Registered(o.overrides))
}

// killswitchCheckOptions are killswitch check's arguments.
type killswitchCheckOptions struct {
	Scope string
	IDs   []string
	ids   []int64 // parsed IDs, set by Validate
}

// Validate checks the shard id; the scope is a name the registry resolves (killswitchKey).
func (o *killswitchCheckOptions) Validate() error {
	ids, err := killswitch.ParseIDs(o.IDs)
	o.ids = ids
	return err
}

func newKillswitchCheckCmd(a *app) *cobra.Command {
	var o killswitchCheckOptions
	return &cobra.Command{
		Use:   "check SCOPE ID",
		Short: "Is this shard disabled, and what is waiting behind it?",
		Example: examples(`
			outboxctl killswitch check organization 42`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			o.Scope, o.IDs = args[0], args[1:]
			// The scope before the id: the order of errors this command has always had.
			scope, _, err := a.killswitchKey(o.Scope)
			if err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				t, err := on.target()
				if err != nil {
					return nil, err
				}
				return runKillswitchCheck(ctx, on.factory(), o, t, *scope, on.g.Silo)
			})
		},
	}
}

// runKillswitchCheck prints the SQL, or reads and returns whether shard o.ids[0] of scope is
// disabled and what waits in it (killswitch.RunCheck); silo is --silo as given.
func runKillswitchCheck(ctx context.Context, d factory, o killswitchCheckOptions, t query.Target, scope query.Enum, silo string) (render.Doc, error) {
	return killswitch.RunCheck(d.reader(ctx, "killswitch"), t, scope, o.ids, silo)
}

// audit writes the JSON audit line of a change on stderr: who, when, where (without any
// password), what, and why. Payloads never go into it.
func (a *app) audit(command string, fields map[string]any) {
	dsn, _ := db.Resolve(a.g.DSN, a.getenv)
	fmt.Fprintln(a.io.Err, audit.Line(command, db.Describe(dsn), fields, time.Now()))
}

// checkReason warns when a change comes without --reason: the change is still audited,
// but the audit line and pg_stat_activity will not say why.
func (a *app) checkReason(command, reason string) {
	if strings.TrimSpace(reason) == "" {
		a.printer().Warnf("no --reason given: the audit line and the SQL comment will not say why (%s --reason 'INC-1234: …')", command)
	}
}

// killswitchChangeOptions are killswitch add/remove's flags and arguments.
type killswitchChangeOptions struct {
	Add       bool
	IDArgs    []string
	IDsFrom   string // --ids-from: a file of ids, one a line ("-": stdin)
	Reason    string
	Yes       bool
	ValueType string
	ids       []int64 // parsed IDArgs, set by Validate (the file's are merged in by readIDsFrom)
}

// Validate checks the shard ids given as arguments.
func (o *killswitchChangeOptions) Validate() error {
	ids, err := killswitch.ParseIDs(o.IDArgs)
	o.ids = ids
	return err
}

// readIDsFrom merges the ids of --ids-from (a path, or "-" for stdin) into o.ids; a bad line
// is a usage error naming its number.
func (o *killswitchChangeOptions) readIDsFrom(stdin io.Reader, verb string) (repeats int, err error) {
	if o.IDsFrom == "" {
		return 0, nil
	}
	ids, repeats, err := killswitch.IDsFrom(o.IDsFrom, stdin, o.ids)
	if err != nil {
		return 0, usageErrorf("outboxctl killswitch "+verb+" --help", "%s", err.Error())
	}
	o.ids = ids
	return repeats, nil
}

// killswitchChangeArgs wants a scope and at least one id, or a scope alone with --ids-from.
func killswitchChangeArgs(c *cobra.Command, args []string) error {
	if len(args) >= 2 || (len(args) == 1 && c.Flags().Changed("ids-from")) {
		return nil
	}
	return usageErrorf(c.CommandPath()+" organization 42 --reason …", "%s takes a scope and at least one shard id (or a scope and --ids-from FILE)", c.CommandPath())
}

func newKillswitchChangeCmd(a *app, add bool) *cobra.Command {
	o := killswitchChangeOptions{Add: add}
	verb := "remove"
	short := "Re-enable shards: remove their ids from the kill-switch list"
	if add {
		verb = "add"
		short = "Disable shards: add their ids to the kill-switch list"
	}
	c := &cobra.Command{
		Use:   verb + " SCOPE ID... | SCOPE --ids-from FILE",
		Short: short,
		Long: strings.TrimSpace(fmt.Sprintf(`
%s. Many shards go in one option write: --ids-from FILE reads
one shard id per line (blank lines and # comments skipped; '-' reads stdin), refuses a bad
line with its number, and drops repeats; ids given as arguments are added to the file's.
One plan, one confirmation (on a terminal, more than %d shards need their count typed back),
one audit line, one write under the option's row lock.`, short, typedBackOver)),
		Example: examples(fmt.Sprintf(`
			outboxctl killswitch %[1]s organization 42 --reason 'INC-1234: poison message' --yes
			outboxctl killswitch %[1]s user 7 8 --silo control --reason 'INC-1234'
			outboxctl killswitch %[1]s organization --ids-from shards.txt --reason 'INC-1234' --yes
			outboxctl killswitch %[1]s organization 42 --reason 'INC-1234' --print-sql`, verb)),
		Args:              killswitchChangeArgs,
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			scope, key, err := a.killswitchKey(args[0])
			if err != nil {
				return err
			}
			o.IDArgs = args[1:]
			if err := o.Validate(); err != nil {
				return err
			}
			repeats, err := o.readIDsFrom(a.io.In, verb)
			if err != nil {
				return err
			}
			if repeats > 0 {
				a.printer().Notef("note: %d repeated shard id(s) dropped: %d distinct", repeats, len(o.ids))
			}
			a.checkReason("outboxctl killswitch "+verb, o.Reason)
			t, err := a.target()
			if err != nil {
				return err
			}
			ch := killswitch.Change{Target: t, Deployment: a.deployment(), Scope: *scope, Key: key, IDs: o.ids, Add: add, Reason: o.Reason, PrintValueType: o.ValueType}
			return runKillswitchChange(c.Context(), a.factory(), ch, o.Yes)
		},
	}
	c.Flags().StringVar(&o.IDsFrom, "ids-from", "", "read more shard ids from FILE, one a line ('-': stdin)")
	addReasonFlag(c.Flags(), &o.Reason)
	addMutationFlags(a, c.Flags(), &o.Yes)
	addValueTypeFlag(c, &o.ValueType)
	return c
}

// addValueTypeFlag registers --value-type, which only printed SQL needs.
func addValueTypeFlag(c *cobra.Command, vt *string) {
	addEnumFlag(c, c.Flags(), vt, "jsonb", enumFlag{name: "value-type", help: "with --print-sql: the options table's value column type, jsonb (Sentry since Aug 2025) or text (before); a run reads it from the catalog",
		example: "--value-type text", words: []string{"jsonb", "text"}})
}

// runKillswitchChange plans the change from a read-only look, asks, and writes it under
// the row lock (repair.KillswitchChange).
func runKillswitchChange(ctx context.Context, d factory, ch killswitch.Change, yes bool) error {
	return runMutation(ctx, d, "outboxctl killswitch "+ch.Verb(), &repair.KillswitchChange{Env: d.repairEnv(), Change: ch,
		PrintTable: options.OptionTableFor(ch.Target.Silo, d.sql.printSchema)}, yes)
}

// killswitchGateOptions are killswitch gate's flags and argument.
type killswitchGateOptions struct {
	Table      string
	Version    int64
	VersionSet bool
	Coded      []string
	Reason     string
	Yes        bool
	ValueType  string
	table      backfill.Table // the registered table, set by Validate
}

// Validate checks the table, --coded and --version.
func (o *killswitchGateOptions) Validate() error {
	const command = "outboxctl killswitch gate"
	overrides, err := backfill.ParseCoded(o.Coded)
	if err != nil {
		return usageErrorf("", "%s", err.Error())
	}
	if err := backfill.CheckName("table", o.Table); err != nil {
		return usageErrorf(command+" sentry_organization --version 3", "%s", err.Error())
	}
	tb, ok := backfill.Lookup(backfill.Registered(overrides), o.Table)
	if !ok {
		return usageErrorf(command+" "+o.Table+" --coded "+o.Table+"=1 --version 1", "%s is not a registered replicated table; pass --coded %s=N to gate it anyway", o.Table, o.Table)
	}
	if !o.VersionSet || o.Version < 0 {
		return usageErrorf(command+" "+o.Table+" --version 0", "`--version` is required and must not be negative")
	}
	o.table = tb
	return nil
}

func newKillswitchGateCmd(a *app) *cobra.Command {
	var o killswitchGateOptions
	c := &cobra.Command{
		Use:   "gate TABLE --version N",
		Short: "Set a table's backfill gate (outbox_replication.<table>.replication_version)",
		Long: strings.TrimSpace(`
Set outbox_replication.<table>.replication_version, the option that gates a table's outbox
backfill: Sentry backfills up to min(option, coded version). Lower it below the coded
version to hold a walk that has not finished. Raising it starts the coded version's walk
only while the stored cursor version is at most the coded version: a walk that finished at
a lower, option-limited version stored coded version + 1, so that version's walk never
runs (backfill status shows it as "complete, version skipped"). The option is written to
the options table Sentry reads for the table's silo (--deployment).`),
		Example: examples(`
			outboxctl killswitch gate sentry_organization --version 3 --reason 'INC-1234: stop the v4 backfill' --yes`),
		Args: exactArgs(1, "TABLE"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Table, o.VersionSet = args[0], c.Flags().Changed("version")
			if err := o.Validate(); err != nil {
				return err
			}
			a.checkReason("outboxctl killswitch gate", o.Reason)
			g := killswitch.Gate{Schema: a.g.Schema, Deployment: a.deployment(), Table: o.table, Version: o.Version, Reason: o.Reason, PrintValueType: o.ValueType}
			return runKillswitchGate(c.Context(), a.factory(), g, o.Yes)
		},
	}
	c.Flags().Int64Var(&o.Version, "version", 0, "the replication version to allow (required)")
	addReasonFlag(c.Flags(), &o.Reason)
	addMutationFlags(a, c.Flags(), &o.Yes)
	c.Flags().StringArrayVar(&o.Coded, "coded", nil, "override a table's coded replication_version, TABLE=N")
	addValueTypeFlag(c, &o.ValueType)
	return c
}

// runKillswitchGate reads the gate, asks, and writes it (repair.KillswitchGate).
func runKillswitchGate(ctx context.Context, d factory, g killswitch.Gate, yes bool) error {
	return runMutation(ctx, d, "outboxctl killswitch gate", &repair.KillswitchGate{Env: d.repairEnv(), Gate: g,
		PrintTable: options.OptionTableFor(query.Silo(g.Table.Silo), d.sql.printSchema)}, yes)
}

// osUser names who ran a command, for audit lines and archives (audit.User).
func osUser() string { return audit.User() }
