package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
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
	for key, v := range options.KillswitchScopes {
		if v == scope.Value {
			return scope, key, nil
		}
	}
	return nil, "", usageErrorf("outboxctl killswitch add organization ID --reason …",
		"%s shards cannot be disabled: Sentry's should_skip_shard reads a kill switch only for ORGANIZATION_SCOPE and USER_SCOPE", scope.Name)
}

func parseIDs(args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, s := range args {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 {
			return nil, usageErrorf("", "invalid shard id %q: want a non-negative integer", s)
		}
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// killswitchList is one options table's kill switches, as read.
type killswitchList struct {
	table string
	key   string
	scope int
	ids   []int64
	err   error
}

// readLists reads the kill-switch lists of every options table present, whether or not
// Sentry reads it here (a list Sentry ignores is shown and warned about, not hidden).
func readLists(ctx context.Context, tx pgx.Tx, schema string, sch query.Schema) ([]killswitchList, error) {
	var out []killswitchList
	for _, ot := range []string{query.OptionTable, query.ControlOptionTable} {
		if !sch.Table(ot).Present {
			continue
		}
		ks, err := options.ReadKillswitchesFrom(ctx, tx, schema, ot)
		if ks == nil {
			return nil, db.Classify(err, "killswitch-options")
		}
		for _, key := range []string{options.DisabledOrgShards, options.DisabledUserShards} {
			l := killswitchList{table: ot, key: key, scope: options.KillswitchScopes[key], err: ks.Failed[options.KillswitchScopes[key]]}
			for id := range ks.Disabled[l.scope] {
				l.ids = append(l.ids, id)
			}
			slices.Sort(l.ids)
			out = append(out, l)
		}
	}
	return out, nil
}

// governsText says which outboxes an options table's values apply to in this deployment.
func governsText(optionsTable string, sch query.Schema) string {
	silos := options.Governs(optionsTable, sch)
	if len(silos) == 0 {
		return "nothing (Sentry does not read it here)"
	}
	names := make([]string, len(silos))
	for i, s := range silos {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// storesSection shows which options table governs which outbox, and why.
func storesSection(sch query.Schema) render.Section {
	t := &render.Table{Columns: []string{"outbox", "options_table", "deployment", "decided"}, Labels: map[string]string{"options_table": "read from"}}
	for _, o := range []struct {
		silo  query.Silo
		table string
	}{{query.SiloCell, query.CellTable}, {query.SiloControl, query.ControlTable}} {
		if sch.Tables != nil && !sch.Table(o.table).Present {
			continue
		}
		var ot any
		if name := options.OptionTableFor(o.silo, sch); name != "" {
			ot = name
		}
		dep := string(sch.Deployment)
		if dep == "" {
			dep = "unknown (split assumed)"
		}
		t.Rows = append(t.Rows, []any{o.table, ot, dep, sch.DeploymentWhy})
	}
	return render.Section{Name: "stores", Title: "Options tables Sentry reads here", Table: t}
}

// presentOutboxes are the standard outbox tables of the database, adapted to its columns.
func presentOutboxes(schema string, sch query.Schema) []query.Target {
	var out []query.Target
	for _, silo := range []query.Silo{query.SiloCell, query.SiloControl} {
		t := sch.Adapt(query.Target{Silo: silo, Schema: schema})
		if sch.Tables == nil || sch.Table(t.TableName()).Present {
			out = append(out, t)
		}
	}
	return out
}

func newKillswitchListCmd(a *app) *cobra.Command {
	var coded []string
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
			overrides, err := backfill.ParseCoded(coded)
			if err != nil {
				return usageErrorf("outboxctl killswitch list --coded sentry_organization=4", "%s", err.Error())
			}
			if printOnly, noDB := a.wantsSQL(); printOnly {
				return a.printScript(query.Script{
					options.KillswitchStatement(a.g.Schema, query.OptionTable),
					options.KillswitchStatement(a.g.Schema, query.ControlOptionTable),
					query.KillswitchShards(presentOutboxes(a.g.Schema, query.Schema{}), nil),
				}, noDB)
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			tables := backfill.Registered(overrides)
			disabled := &render.Table{Columns: []string{"options_table", "governs", "scope", "shard", "silo", "region_name", "depth", "coalesce_groups", "oldest_message", "next_attempt"},
				Labels: map[string]string{"options_table": "option in", "coalesce_groups": "groups", "region_name": "cell"}}
			gates := &render.Table{Columns: []string{"options_table", "governs", "key", "value", "coded"}, Labels: map[string]string{"options_table": "option in"}}
			var listErr error
			var sch query.Schema
			ignored := map[string][]int64{}
			err = a.plainSession(c.Context(), "killswitch", func(s *session) error {
				sch = s.schema
				lists, err := readLists(s.ctx, s.tx, s.target.Schema, s.schema)
				if err != nil {
					return err
				}
				var qlists []query.KillswitchList
				for _, l := range lists {
					if l.err != nil && listErr == nil {
						listErr = l.err
					}
					if len(options.Governs(l.table, s.schema)) == 0 {
						ignored[l.table] = append(ignored[l.table], l.ids...)
					}
					qlists = append(qlists, query.KillswitchList{OptionsTable: l.table, Scope: l.scope, IDs: l.ids})
				}
				res, err := s.run(query.KillswitchShards(presentOutboxes(s.target.Schema, s.schema), qlists))
				if err != nil {
					return err
				}
				for _, r := range res.Rows {
					ot, _ := r[0].(string)
					disabled.Rows = append(disabled.Rows, []any{ot, governsText(ot, s.schema), reg.ScopeName(int(query.AsInt64(r[1]))), r[2], r[3], r[4], r[5], r[6], r[7], r[8]})
				}
				return a.readGates(s, tables, gates)
			})
			if err != nil {
				return err
			}
			p := a.printer()
			if !p.Structured() {
				if len(disabled.Rows) == 0 {
					p.Notef("no shard is disabled")
				}
				for ot, ids := range ignored {
					if len(ids) > 0 {
						p.Warnf("%s lists %d disabled shard(s), but Sentry does not read %s in this deployment (%s): they are NOT disabled; use killswitch add to disable them where Sentry reads", ot, len(ids), ot, sch.DeploymentWhy)
					}
				}
			}
			if err := p.Print(render.Doc{
				storesSection(sch),
				{Name: "disabled", Title: "Disabled shards", Table: disabled},
				{Name: "backfill_gates", Title: "Backfill gates (option below the coded version)", Table: gates},
			}); err != nil {
				return err
			}
			return listErr
		},
	}
	c.Flags().StringArrayVar(&coded, "coded", nil, "override a table's coded replication_version, TABLE=N (repeatable), for the backfill gates")
	return c
}

// readGates adds to gates every replication_version option below its table's coded version.
func (a *app) readGates(s *session, tables []backfill.Table, gates *render.Table) error {
	keys := make([]string, len(tables))
	for i, t := range tables {
		keys[i] = backfill.OptionKey(t.Name)
	}
	for _, ot := range []string{query.OptionTable, query.ControlOptionTable} {
		if !s.schema.Table(ot).Present {
			continue
		}
		res, err := s.run(query.OptionValues(s.target.Schema, ot, keys))
		if err != nil {
			return err
		}
		for _, r := range res.Rows {
			key, _ := r[0].(string)
			raw, _ := r[1].(string)
			n, err := options.DecodeInt(key, raw)
			if err != nil {
				return err
			}
			name := strings.TrimSuffix(strings.TrimPrefix(key, "outbox_replication."), ".replication_version")
			if t, ok := backfill.Lookup(tables, name); ok && n < t.Coded {
				gates.Rows = append(gates.Rows, []any{ot, governsText(ot, s.schema), key, n, t.Coded})
			}
		}
	}
	return nil
}

// plainSession is a read session that does not require an outbox table (the kill switches
// and options can be read from any Sentry database).
func (a *app) plainSession(ctx context.Context, command string, fn func(*session) error) error {
	return a.openSession(ctx, command, func(s *session) error {
		if !s.schema.Table(query.OptionTable).Present && !s.schema.Table(query.ControlOptionTable).Present {
			where := "the search_path"
			if s.target.Schema != "" {
				where = "schema " + s.target.Schema
			}
			return fmt.Errorf("no sentry_option or sentry_controloption table in %s: this does not look like Sentry's database; check --dsn or --schema", where)
		}
		return fn(s)
	})
}

func newKillswitchCheckCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "check SCOPE ID",
		Short: "Is this shard disabled, and what is waiting behind it?",
		Example: examples(`
			outboxctl killswitch check organization 42`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			scope, _, err := a.killswitchKey(args[0])
			if err != nil {
				return err
			}
			ids, err := parseIDs(args[1:])
			if err != nil {
				return err
			}
			id := ids[0]
			if printOnly, noDB := a.wantsSQL(); printOnly {
				t, _ := a.target()
				return a.printScript(query.Script{options.KillswitchStatement(t.Schema, options.OptionTableFor(t.Silo, a.printSchema())), query.ShardDepths(t, *scope, ids)}, noDB)
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			card := []render.Field{{Key: "scope", Value: scope.Name}, {Key: "shard", Value: id}}
			var depth *render.Table
			var listErr error
			err = a.plainSession(c.Context(), "killswitch", func(s *session) error {
				lists, err := readLists(s.ctx, s.tx, s.target.Schema, s.schema)
				if err != nil {
					return err
				}
				for _, l := range lists {
					if l.scope != scope.Value {
						continue
					}
					if l.err != nil {
						listErr = l.err
					}
					card = append(card, render.Field{Key: "disabled_in_" + l.table, Value: slices.Contains(l.ids, id)})
				}
				// What Sentry's workers for this outbox read: the verdict that counts.
				ks, _ := options.ReadKillswitches(s.ctx, s.tx, s.target.Schema, s.schema, s.target.Silo)
				var disabled any
				if d := ks.IsDisabled(scope.Value, id); d != nil {
					disabled = *d
				}
				card = append(card, render.Field{Key: "read_from", Value: ks.Table}, render.Field{Key: "disabled", Value: disabled},
					render.Field{Key: "deployment", Value: s.schema.DeploymentWhy})
				t := s.target
				if s.schema.Table(t.TableName()).Present {
					res, err := s.run(query.ShardDepths(t, *scope, ids))
					if err != nil {
						return err
					}
					depth = report.Table(reg, res)
				}
				return nil
			})
			if err != nil {
				return err
			}
			doc := render.Doc{{Name: "killswitch", Title: fmt.Sprintf("Shard %s/%d", scope.Name, id), Card: card}}
			if depth != nil {
				doc = append(doc, render.Section{Name: "waiting", Title: "Waiting in " + a.g.Silo + " outbox", Table: depth})
			}
			if err := a.printer().Print(doc); err != nil {
				return err
			}
			return listErr
		},
	}
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

type changeOptions struct {
	Reason string
	Yes    bool
}

// checkReason warns when a change comes without --reason: the change is still audited,
// but the audit line and pg_stat_activity will not say why.
func (a *app) checkReason(command, reason string) error {
	if strings.TrimSpace(reason) == "" {
		a.printer().Warnf("no --reason given: the audit line and the SQL comment will not say why (%s --reason 'INC-1234: …')", command)
	}
	return nil
}

func newKillswitchChangeCmd(a *app, add bool) *cobra.Command {
	var o changeOptions
	verb, prep := "remove", "from"
	short := "Re-enable shards: remove their ids from the kill-switch list"
	if add {
		verb, prep = "add", "to"
		short = "Disable shards: add their ids to the kill-switch list"
	}
	c := &cobra.Command{
		Use:   verb + " SCOPE ID...",
		Short: short,
		Example: examples(fmt.Sprintf(`
			outboxctl killswitch %[1]s organization 42 --reason 'INC-1234: poison message' --yes
			outboxctl killswitch %[1]s user 7 8 --silo control --reason 'INC-1234'
			outboxctl killswitch %[1]s organization 42 --reason 'INC-1234' --print-sql`, verb)),
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf(c.CommandPath()+" organization 42 --reason …", "%s takes a scope and at least one shard id", c.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			command := "outboxctl killswitch " + verb
			scope, key, err := a.killswitchKey(args[0])
			if err != nil {
				return err
			}
			ids, err := parseIDs(args[1:])
			if err != nil {
				return err
			}
			if err := a.checkReason(command, o.Reason); err != nil {
				return err
			}
			t, err := a.target()
			if err != nil {
				return err
			}
			if printOnly, noDB := a.wantsSQL(); printOnly {
				table := options.OptionTableFor(t.Silo, a.printSchema())
				// Printed for the current Sentry (jsonb values); a text column takes the same
				// statements with the ::jsonb casts, as outboxctl sends them when it connects.
				return a.printScript(query.Script{
					query.OptionEnsure(t.Schema, table, "jsonb", key, "[]", o.Reason),
					query.ShardListUpdate(t.Schema, table, "jsonb", key, ids, add, o.Reason),
				}, noDB)
			}
			conn, err := a.connect(c.Context(), "killswitch")
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(c.Context()))

			// Plan from a read-only look; the write recomputes under the row lock.
			var before []int64
			var valueType, table, why string
			var depth *query.Result
			err = db.ReadTx(c.Context(), conn, func(tx pgx.Tx) error {
				sch, err := a.loadSchema(c.Context(), tx, t.Schema, []string{query.OptionTable, query.ControlOptionTable, t.TableName()})
				if err != nil {
					return err
				}
				why = sch.DeploymentWhy
				if table = options.OptionTableFor(t.Silo, sch); table == "" {
					return fmt.Errorf("no options table here for the %s outbox (%s); check --dsn, --schema, --silo or --deployment", t.Silo, sch.DeploymentWhy)
				}
				valueType = sch.Table(table).ValueType
				res, err := query.Run(c.Context(), tx, query.OptionValues(t.Schema, table, []string{key}))
				if err != nil {
					return db.Classify(err, "option-values")
				}
				if len(res.Rows) > 0 {
					raw, _ := res.Rows[0][1].(string)
					v, err := options.Decode(key, raw)
					if err != nil {
						return err
					}
					if before, err = v.StrictIDs(); err != nil {
						return err
					}
				}
				if sch.Table(t.TableName()).Present {
					if depth, err = query.Run(c.Context(), tx, query.ShardDepths(sch.Adapt(t), *scope, ids)); err != nil {
						return db.Classify(err, "shard-depths")
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			after, changed, unchanged := applyChange(before, ids, add)
			for _, id := range unchanged {
				if add {
					a.printer().Notef("note: %s shard %d is already disabled in %s", scope.Name, id, table)
				} else {
					a.printer().Notef("note: %s shard %d is not disabled in %s", scope.Name, id, table)
				}
			}
			if len(changed) == 0 {
				a.printer().Notef("nothing to change")
				return a.printer().Print(render.Doc{{Name: "killswitch", Card: []render.Field{
					{Key: "options_table", Value: table}, {Key: "key", Value: key}, {Key: "value", Value: options.EncodeIDs(before)}, {Key: "changed", Value: false}}}})
			}
			plan := []string{
				fmt.Sprintf("%s %s shard(s) %v %s %s in %s (%s)", verb, scope.Name, changed, prep, key, table, reasonText(o.Reason)),
				fmt.Sprintf("before: %s", options.EncodeIDs(before)),
				fmt.Sprintf("after:  %s", options.EncodeIDs(after)),
				fmt.Sprintf("%s is what Sentry reads for the %s outbox here (deployment %s)", table, t.Silo, why),
			}
			if depth != nil {
				var rows, groups int64
				for _, r := range depth.Rows {
					rows += r[depth.Col("depth")].(int64)
					groups += r[depth.Col("coalesce_groups")].(int64)
				}
				plan = append(plan, fmt.Sprintf("waiting in those shards of the %s outbox: %d rows, %d coalesce groups", t.Silo, rows, groups))
			}
			plan = append(plan, fmt.Sprintf("equivalent: sentry config set %s '%s'", key, options.EncodeIDs(after)))
			if err := a.confirm(command, plan, o.Yes); err != nil {
				return err
			}

			var stored string
			err = db.WriteTx(c.Context(), conn, func(tx pgx.Tx) error {
				if _, err := query.Run(c.Context(), tx, query.OptionEnsure(t.Schema, table, valueType, key, "[]", o.Reason)); err != nil {
					return db.Classify(err, "option-ensure")
				}
				locked, err := query.Run(c.Context(), tx, query.OptionLock(t.Schema, table, key))
				if err != nil {
					return db.Classify(err, "option-lock")
				}
				raw, _ := locked.Rows[0][0].(string)
				v, err := options.Decode(key, raw)
				if err != nil {
					return err
				}
				st := query.ShardListUpdate(t.Schema, table, valueType, key, ids, add, o.Reason)
				if v.Encoding != options.EncodingJSON {
					// A value still stored as a pickle: decode it under the row lock and
					// write the list back as JSON.
					cur, err := v.StrictIDs()
					if err != nil {
						return err
					}
					next, _, _ := applyChange(cur, ids, add)
					st = query.OptionWrite(t.Schema, table, valueType, key, options.EncodeIDs(next), o.Reason, "killswitch "+verb)
				}
				res, err := query.Run(c.Context(), tx, st)
				if err != nil {
					return db.Classify(err, st.Name)
				}
				stored, _ = res.Rows[0][0].(string)
				return nil
			})
			if err != nil {
				return err
			}
			a.audit("killswitch "+verb, map[string]any{
				"options_table": table, "key": key, "scope": scope.Name, "shards": changed,
				"before": options.EncodeIDs(before), "after": stored, "reason": o.Reason,
			})
			return a.printer().Print(render.Doc{{Name: "killswitch", Card: []render.Field{
				{Key: "options_table", Value: table}, {Key: "key", Value: key}, {Key: "value", Value: stored}, {Key: "changed", Value: true}}}})
		},
	}
	c.Flags().StringVar(&o.Reason, "reason", "", "why: written into the SQL as a comment and into the audit line (strongly recommended)")
	c.Flags().BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	return c
}

func reasonText(r string) string {
	if strings.TrimSpace(r) == "" {
		return "no reason given"
	}
	return "reason: " + r
}

// applyChange adds or removes ids from a sorted list, returning the new list, the ids that
// changed it and the ids that were already in (or not in) it.
func applyChange(list, ids []int64, add bool) (after, changed, unchanged []int64) {
	after = append([]int64(nil), list...)
	for _, id := range ids {
		has := slices.Contains(after, id)
		switch {
		case add && !has:
			after = append(after, id)
			changed = append(changed, id)
		case !add && has:
			after = slices.DeleteFunc(after, func(x int64) bool { return x == id })
			changed = append(changed, id)
		default:
			unchanged = append(unchanged, id)
		}
	}
	slices.Sort(after)
	return after, changed, unchanged
}

func newKillswitchGateCmd(a *app) *cobra.Command {
	var o changeOptions
	var version int64
	var coded []string
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
			command := "outboxctl killswitch gate"
			overrides, err := backfill.ParseCoded(coded)
			if err != nil {
				return usageErrorf("", "%s", err.Error())
			}
			if err := backfill.CheckName("table", args[0]); err != nil {
				return usageErrorf(command+" sentry_organization --version 3", "%s", err.Error())
			}
			tb, ok := backfill.Lookup(backfill.Registered(overrides), args[0])
			if !ok {
				return usageErrorf(command+" "+args[0]+" --coded "+args[0]+"=1 --version 1", "%s is not a registered replicated table; pass --coded %s=N to gate it anyway", args[0], args[0])
			}
			if !c.Flags().Changed("version") || version < 0 {
				return usageErrorf(command+" "+args[0]+" --version 0", "`--version` is required and must not be negative")
			}
			if err := a.checkReason(command, o.Reason); err != nil {
				return err
			}
			key := backfill.OptionKey(tb.Name)
			value := strconv.FormatInt(version, 10)
			if printOnly, noDB := a.wantsSQL(); printOnly {
				table := options.OptionTableFor(query.Silo(tb.Silo), a.printSchema())
				return a.printScript(query.Script{query.OptionWrite(a.g.Schema, table, "jsonb", key, value, o.Reason, "killswitch gate")}, noDB)
			}
			conn, err := a.connect(c.Context(), "killswitch")
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(c.Context()))
			var valueType, before, table string
			err = db.ReadTx(c.Context(), conn, func(tx pgx.Tx) error {
				sch, err := a.loadSchema(c.Context(), tx, a.g.Schema, []string{query.OptionTable, query.ControlOptionTable})
				if err != nil {
					return err
				}
				if table = options.OptionTableFor(query.Silo(tb.Silo), sch); table == "" {
					return fmt.Errorf("no options table here for %s's gate (%s silo; %s); check --dsn, --schema or --deployment", tb.Name, tb.Silo, sch.DeploymentWhy)
				}
				valueType = sch.Table(table).ValueType
				res, err := query.Run(c.Context(), tx, query.OptionValues(a.g.Schema, table, []string{key}))
				if err != nil {
					return db.Classify(err, "option-values")
				}
				before = "(unset: 0)"
				if len(res.Rows) > 0 {
					raw, _ := res.Rows[0][1].(string)
					n, err := options.DecodeInt(key, raw)
					if err != nil {
						return err
					}
					before = strconv.FormatInt(n, 10)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if before == value {
				a.printer().Notef("note: %s is already %s; nothing to change", key, value)
				return nil
			}
			effect := fmt.Sprintf("walks at version %d unless the stored cursor version is already above it (a walk that finished stored coded + 1: then nothing runs; check outboxctl backfill status %s)", min(version, tb.Coded), tb.Name)
			if version < tb.Coded {
				effect = fmt.Sprintf("holds the backfill below the coded version %d", tb.Coded)
			}
			plan := []string{
				fmt.Sprintf("set %s in %s: %s -> %s (%s)", key, table, before, value, reasonText(o.Reason)),
				fmt.Sprintf("target becomes min(%s, coded %d): Sentry %s", value, tb.Coded, effect),
				fmt.Sprintf("equivalent: sentry config set %s %s", key, value),
			}
			if err := a.confirm(command, plan, o.Yes); err != nil {
				return err
			}
			var stored string
			err = db.WriteTx(c.Context(), conn, func(tx pgx.Tx) error {
				res, err := query.Run(c.Context(), tx, query.OptionWrite(a.g.Schema, table, valueType, key, value, o.Reason, "killswitch gate"))
				if err != nil {
					return db.Classify(err, "option-write")
				}
				stored, _ = res.Rows[0][0].(string)
				return nil
			})
			if err != nil {
				return err
			}
			a.audit("killswitch gate", map[string]any{"options_table": table, "key": key, "before": before, "after": stored, "reason": o.Reason})
			return a.printer().Print(render.Doc{{Name: "gate", Card: []render.Field{
				{Key: "options_table", Value: table}, {Key: "key", Value: key}, {Key: "value", Value: stored}}}})
		},
	}
	c.Flags().Int64Var(&version, "version", 0, "the replication version to allow (required)")
	c.Flags().StringVar(&o.Reason, "reason", "", "why: written into the SQL as a comment and into the audit line (strongly recommended)")
	c.Flags().BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	c.Flags().StringArrayVar(&coded, "coded", nil, "override a table's coded replication_version, TABLE=N")
	return c
}
