package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/report"
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

func parseIDs(args []string) ([]int64, error) {
	ids, err := killswitch.ParseIDs(args)
	if err != nil {
		return nil, usageErrorf("", "%s", err.Error())
	}
	return ids, nil
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runKillswitchList(ctx, d, o, t)
			})
		},
	}
	c.Flags().StringArrayVar(&o.Coded, "coded", nil, "override a table's coded replication_version, TABLE=N (repeatable), for the backfill gates")
	a.addWatch(c, []string{"options_table", "scope", "shard"}, []string{"depth"})
	return c
}

// runKillswitchList prints the SQL, or reads and returns the kill-switch lists, what waits
// behind them and the backfill gates, from any Sentry database (plainSession).
func runKillswitchList(ctx context.Context, d factory, o killswitchListOptions, t query.Target) (render.Doc, error) {
	if d.printOnly {
		return nil, d.printScript(query.Script{
			options.KillswitchStatement(t.Schema, query.OptionTable),
			options.KillswitchStatement(t.Schema, query.ControlOptionTable),
			query.KillswitchShards(killswitch.PresentOutboxes(t.Schema, query.Schema{}), nil),
		})
	}
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	var l killswitch.Listing
	err = d.snapshot(ctx, "killswitch", readSpec{check: outbox.CheckOptions}, func(s *outbox.Snapshot) error {
		l, err = killswitch.ReadListing(s.Context(), s, s.Target.Schema, s.Schema, reg, backfill.Registered(o.overrides))
		return err
	})
	if err != nil {
		return nil, err
	}
	return killswitchListingDoc(d.printer, l), l.ListErr
}

// killswitchListingDoc is the listing's document; it says the notes a terminal shows.
func killswitchListingDoc(p *render.Printer, l killswitch.Listing) render.Doc {
	if !p.Structured() {
		if len(l.Disabled) == 0 {
			p.Notef("no shard is disabled")
		}
		for ot, ids := range l.Ignored {
			if len(ids) > 0 {
				p.Warnf("%s lists %d disabled shard(s), but Sentry does not read %s in this deployment (%s): they are NOT disabled; use killswitch add to disable them where Sentry reads", ot, len(ids), ot, l.Schema.DeploymentWhy)
			}
		}
	}
	return l.Doc()
}

// killswitchCheckOptions are killswitch check's arguments.
type killswitchCheckOptions struct {
	Scope string
	IDs   []string
	ids   []int64 // parsed IDs, set by Validate
}

// Validate checks the shard id; the scope is a name the registry resolves (killswitchKey).
func (o *killswitchCheckOptions) Validate() error {
	ids, err := parseIDs(o.IDs)
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runKillswitchCheck(ctx, d, o, t, *scope)
			})
		},
	}
}

// runKillswitchCheck prints the SQL, or reads and returns whether shard o.ids[0] of scope is
// disabled, in each options table and in the one Sentry reads, and what waits in it.
func runKillswitchCheck(ctx context.Context, d factory, o killswitchCheckOptions, t query.Target, scope query.Enum) (render.Doc, error) {
	ids := o.ids
	id := ids[0]
	if d.printOnly {
		return nil, d.printScript(query.Script{d.killswitchStatement(t), query.ShardDepths(t, scope, ids)})
	}
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	var card []render.Field
	var depth *render.Table
	var listErr error
	var warning string
	err = d.snapshot(ctx, "killswitch", readSpec{check: outbox.CheckOptions}, func(s *outbox.Snapshot) error {
		v, err := killswitch.ShardVerdict(s.Context(), s, s.Target, s.Schema, scope, id)
		if err != nil {
			return err
		}
		card, warning, listErr = v.Card(scope.Name, id), v.Warning, v.ListErr
		if t := s.Target; s.Schema.Table(t.TableName()).Present {
			res, err := s.Run(query.ShardDepths(t, scope, ids))
			if err != nil {
				return err
			}
			if depth, _, err = report.TableOf[query.ShardDepthRow](reg, res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if warning != "" {
		d.printer.Warnf("%s", warning)
	}
	doc := render.Doc{{Name: "killswitch", Title: fmt.Sprintf("Shard %s/%d", scope.Name, id), Card: card}}
	if depth != nil {
		doc = append(doc, render.Section{Name: "waiting", Title: "Waiting in " + d.silo + " outbox", Table: depth})
	}
	return doc, listErr
}

// audit writes the JSON audit line of a change on stderr: who, when, where (without any
// password), what, and why. Payloads never go into it.
func (a *app) audit(command string, fields map[string]any) {
	dsn, _ := db.Resolve(a.g.DSN, a.getenv)
	rec := map[string]any{
		"audit": "outboxctl", "command": command, "who": osUser(), "when": time.Now().UTC().Format(time.RFC3339),
		"target": db.Describe(dsn),
	}
	for k, v := range fields {
		rec[k] = v
	}
	b, _ := json.Marshal(rec)
	fmt.Fprintln(a.io.Err, string(b))
}

// checkReason warns when a change comes without --reason: the change is still audited,
// but the audit line and pg_stat_activity will not say why.
func (a *app) checkReason(command, reason string) error {
	if strings.TrimSpace(reason) == "" {
		a.printer().Warnf("no --reason given: the audit line and the SQL comment will not say why (%s --reason 'INC-1234: …')", command)
	}
	return nil
}

// reasonText is a --reason as plan lines show it (one wording with the drain's plan).
func reasonText(r string) string { return drain.ReasonText(r) }

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
	ids, err := parseIDs(o.IDArgs)
	o.ids = ids
	return err
}

// readIDsFrom merges the ids of --ids-from (a path, or "-" for stdin) into o.ids; a bad line
// is a usage error naming its number.
func (o *killswitchChangeOptions) readIDsFrom(stdin io.Reader, verb string) (repeats int, err error) {
	if o.IDsFrom == "" {
		return 0, nil
	}
	try := "outboxctl killswitch " + verb + " --help"
	r, name := stdin, "stdin"
	if o.IDsFrom != "-" {
		f, err := os.Open(o.IDsFrom)
		if err != nil {
			return 0, usageErrorf(try, "--ids-from: %v", err)
		}
		defer f.Close()
		r, name = f, o.IDsFrom
	}
	ids, repeats, err := killswitch.ReadIDs(r, name)
	if err != nil {
		return 0, usageErrorf(try, "--ids-from %v", err)
	}
	if len(ids) == 0 && len(o.ids) == 0 {
		return 0, usageErrorf(try, "--ids-from %s holds no shard id", name)
	}
	n := len(o.ids) + len(ids)
	o.ids = killswitch.MergeIDs(o.ids, ids)
	return repeats + n - len(o.ids), nil
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
			if err := a.checkReason("outboxctl killswitch "+verb, o.Reason); err != nil {
				return err
			}
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
// the row lock.
func runKillswitchChange(ctx context.Context, d factory, ch killswitch.Change, yes bool) error {
	if d.printOnly {
		return d.printScript(ch.Script(options.OptionTableFor(ch.Target.Silo, d.printSchema)))
	}
	conn, err := d.connect(ctx, "killswitch")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	plan, err := ch.Plan(ctx, conn)
	if err != nil {
		return err
	}
	unchangedNotes(d.printer, ch, plan)
	if len(plan.Changed) == 0 {
		d.printer.Notef("nothing to change")
		return d.printer.Print(changeCard(killswitch.ChangeSummary{OptionsTable: plan.Table, Key: ch.Key, Value: options.EncodeIDs(plan.Before)}))
	}
	if err := d.confirm("outboxctl killswitch "+ch.Verb(), repair.Plan{Lines: changePlanLines(ch, plan), Shards: len(plan.Changed)}, yes); err != nil {
		return err
	}
	stored, err := ch.Apply(ctx, conn, plan)
	if err != nil {
		return err
	}
	d.audit("killswitch "+ch.Verb(), map[string]any{
		"options_table": plan.Table, "key": ch.Key, "scope": ch.Scope.Name, "shards": plan.Changed,
		"before": options.EncodeIDs(plan.Before), "after": stored, "reason": ch.Reason,
	})
	if !ch.Add && (ch.Target.Silo != query.SiloControl || ch.Target.Cell != "") {
		// The released shards get a fresh attempt from Sentry's workers: the ledger's
		// evidence (a control silo's release is recorded for the --cell given, whose
		// shards' heads can be read).
		refs := make([]query.ShardRef, len(plan.Changed))
		for i, id := range plan.Changed {
			refs[i] = query.ShardRef{Scope: ch.Scope.Value, ID: id}
		}
		d.repairEnv().RecordMadeDue(ctx, conn, ch.Target, ledger.ViaKillswitch, "", refs)
	}
	sum := killswitch.ChangeSummary{OptionsTable: plan.Table, Key: ch.Key, Value: stored, Changed: true}
	sum.Next, sum.Undo = killswitchNext(d, ch, plan.Changed)
	return d.printer.Print(changeCard(sum))
}

// killswitchNext are a kill-switch change's next step and undo: check the first shard
// changed (where Sentry reads it) and, after a remove, look at the backlog it now drains;
// the undo is the opposite change of the same shards.
func killswitchNext(d factory, ch killswitch.Change, changed []int64) (render.Commands, string) {
	if len(changed) == 0 {
		return nil, ""
	}
	scope := ch.Scope.ScopeWord()
	ids := make([]string, len(changed))
	for i, id := range changed {
		ids[i] = fmt.Sprint(id)
	}
	next := render.Commands{d.next(&ch.Target, "killswitch", "check", scope, ids[0])}
	undo := "add"
	if ch.Add {
		undo = "remove"
	} else {
		// doctor closes the path: once Sentry's workers have had their fresh attempt it
		// tells whether the released shards delivered.
		next = append(next, d.next(&ch.Target, "inspect", "shard", scope, ids[0]), d.next(nil, "doctor"))
	}
	return next, d.next(&ch.Target, append([]string{"killswitch", undo, scope}, append(ids, "--reason", "undo")...)...)
}

func changeCard(sum killswitch.ChangeSummary) render.Doc {
	return render.Doc{{Name: "killswitch", Card: render.FieldsOf(sum)}}
}

// unchangedNotes says which ids the change leaves as they are: one note each, or one for
// them all when there are more than shownIDs.
func unchangedNotes(p *render.Printer, ch killswitch.Change, plan killswitch.ChangePlan) {
	state := "not disabled"
	if ch.Add {
		state = "already disabled"
	}
	if n := len(plan.Unchanged); n > shownIDs {
		p.Notef("note: %d %s shards are %s in %s: %s", n, ch.Scope.Name, state, plan.Table, idsText(plan.Unchanged))
		return
	}
	for _, id := range plan.Unchanged {
		p.Notef("note: %s shard %d is %s in %s", ch.Scope.Name, id, state, plan.Table)
	}
}

// shownIDs is the most ids a plan line or note lists; a longer list shows its first ones and
// its count (the audit line and the option keep every id).
const shownIDs = 20

// idsText is a list of ids as a plan line shows it: whole up to shownIDs, else its first ones
// and how many there are.
func idsText(ids []int64) string {
	if len(ids) <= shownIDs {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%d ids, the first %d %v…", len(ids), shownIDs, ids[:shownIDs])
}

// valueText is an option value as a plan line shows it: its JSON up to 50 ids, else its
// count and first ids.
func valueText(ids []int64) string {
	if len(ids) <= 50 {
		return options.EncodeIDs(ids)
	}
	return idsText(ids)
}

func changePlanLines(ch killswitch.Change, p killswitch.ChangePlan) []string {
	prep := "from"
	if ch.Add {
		prep = "to"
	}
	lines := []string{
		fmt.Sprintf("%s %s shard(s) %s %s %s in %s (%s)", ch.Verb(), ch.Scope.Name, idsText(p.Changed), prep, ch.Key, p.Table, reasonText(ch.Reason)),
		fmt.Sprintf("before: %s", valueText(p.Before)),
		fmt.Sprintf("after:  %s", valueText(p.After)),
		fmt.Sprintf("%s is what Sentry reads for the %s outbox here (deployment %s)", p.Table, ch.Target.Silo, p.Why),
	}
	if p.Waiting != nil {
		lines = append(lines, fmt.Sprintf("waiting in those shards of the %s outbox: %d rows, %d coalesce groups", ch.Target.Silo, p.Waiting.Rows, p.Waiting.Groups))
	}
	if len(p.After) > 50 {
		return append(lines, fmt.Sprintf("one write of the whole list (%d ids), as 'sentry config set %s' would make it", len(p.After), ch.Key))
	}
	return append(lines, fmt.Sprintf("equivalent: sentry config set %s '%s'", ch.Key, options.EncodeIDs(p.After)))
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
			if err := a.checkReason("outboxctl killswitch gate", o.Reason); err != nil {
				return err
			}
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

// runKillswitchGate reads the gate, asks, and writes it.
func runKillswitchGate(ctx context.Context, d factory, g killswitch.Gate, yes bool) error {
	if d.printOnly {
		return d.printScript(query.Script{g.PrintStatement(options.OptionTableFor(query.Silo(g.Table.Silo), d.printSchema))})
	}
	conn, err := d.connect(ctx, "killswitch")
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	plan, err := g.Plan(ctx, conn)
	if err != nil {
		return err
	}
	if plan.Before == g.Value() {
		d.printer.Notef("note: %s is already %s; nothing to change", g.Key(), g.Value())
		return nil
	}
	if err := d.confirm("outboxctl killswitch gate", repair.Plan{Lines: gatePlanLines(g, plan)}, yes); err != nil {
		return err
	}
	stored, err := g.Apply(ctx, conn, plan)
	if err != nil {
		return err
	}
	d.audit("killswitch gate", map[string]any{"options_table": plan.OptionsTable, "key": g.Key(), "before": plan.Before, "after": stored, "reason": g.Reason})
	return d.printer.Print(render.Doc{{Name: "gate", Card: render.FieldsOf(killswitch.GateSummary{OptionsTable: plan.OptionsTable, Key: g.Key(), Value: stored,
		Next: render.Commands{d.next(nil, "backfill", "status", g.Table.Name)}})}})
}

func gatePlanLines(g killswitch.Gate, p killswitch.GatePlan) []string {
	tb, value := g.Table, g.Value()
	effect := fmt.Sprintf("walks at version %d unless the stored cursor version is already above it (a walk that finished stored coded + 1: then nothing runs; check outboxctl backfill status %s)", min(g.Version, tb.Coded), tb.Name)
	if g.Version < tb.Coded {
		effect = fmt.Sprintf("holds the backfill below the coded version %d", tb.Coded)
	}
	return []string{
		fmt.Sprintf("set %s in %s: %s -> %s (%s)", g.Key(), p.OptionsTable, p.Before, value, reasonText(g.Reason)),
		fmt.Sprintf("target becomes min(%s, coded %d): Sentry %s", value, tb.Coded, effect),
		fmt.Sprintf("equivalent: sentry config set %s %s", g.Key(), value),
	}
}

// osUser names who ran a command, for audit lines.
func osUser() string {
	for _, k := range []string{"SUDO_USER", "USER", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}
