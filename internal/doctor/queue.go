package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// queueStatements are the statements a queue check runs on one outbox table. The
// kill-switch statement is printed with an empty id list: a run fills in the ids it read.
func queueStatements(t query.Target, name string, cfg Config) query.Script {
	switch name {
	case CheckScheduler:
		return query.Script{query.DoctorUnclaimed(t, cfg.Sample, cfg.Limit)}
	case CheckStuck:
		// The ledger's statements are printed with empty lists: a run fills in the shards
		// outboxctl made due and their groups' newest rows.
		return query.Script{query.DoctorCappedShards(t, max(cfg.Limit, groupScan)), query.DatabaseIdentity(),
			query.RowsPresent(t, []int64{}), query.MadeDueHeads(t, []string{}, []int64{}, []int64{})}
	}
	ks := options.KillswitchStatement(t.Schema, options.OptionTableFor(t.Silo, query.Schema{Deployment: cfg.Deployment}))
	return query.Script{ks,
		query.DoctorDisabledShards(t, query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}, []int64{}),
		query.DoctorDisabledShards(t, query.Enum{Value: 1, Name: "USER_SCOPE"}, []int64{})}
}

// checkScheduler: due shards whose head has not been claimed for a while mean Sentry's drain
// tasks (deliver-from-outbox, enqueue_outbox_jobs) are not running or not reaching this
// database. A due shard claimed seconds ago is probably draining right now.
func checkScheduler(ctx context.Context, env *Env) ([]Finding, error) {
	var out []Finding
	for _, t := range env.Targets {
		rows, cells, err := shardRows[query.DoctorUnclaimedRow](ctx, env, t, query.DoctorUnclaimed(t, env.Config.Sample, env.Config.Limit))
		if err != nil {
			return nil, err
		}
		out = append(out, env.schedulerFindings(t, rows, cells)...)
	}
	return out, nil
}

func (env *Env) schedulerFindings(t query.Target, rows []query.DoctorUnclaimedRow, cells []string) []Finding {
	cfg := env.Config
	var out []Finding
	var inFlight, waiting int
	for i, w := range rows {
		since := time.Duration(w.UnclaimedSeconds * float64(time.Second))
		never := w.LastClaim.Sub(w.HeadAdded) < time.Second
		switch {
		case !never && since < shardstate.InFlightWindow:
			inFlight++
			continue
		case since < cfg.Unclaimed:
			waiting++
			continue
		}
		sev := Warn
		if since >= cfg.Unclaimed*UnclaimedCritFactor {
			sev = Crit
		}
		cell := cells[i]
		how := "last claimed"
		if never {
			how = "never claimed since it was written"
		}
		why := schedulerWhy(env.Demo, t)
		if env.Demo {
			sev = Warn // no Sentry worker drains a demo schema: this is what it shows, not a fault
		}
		name := env.shardName(t, cell, w.ShardScope, w.ShardIdentifier)
		out = append(out, Finding{
			Check: CheckScheduler, Severity: sev, Target: name,
			Short: schedulerShort(env.Demo, "due, unclaimed "+dur(since.Seconds())),
			Summary: fmt.Sprintf("%s: shard %s is due but its head was %s %s ago: %s",
				t.TableName(), name, how, dur(since.Seconds()), why),
			Evidence: Evidence{
				{"table", t.TableName()}, {"shard_scope", w.ShardScope}, {"shard_identifier", w.ShardIdentifier},
				{"head_id", w.HeadID}, {"head_category", env.Registry.CategoryName(int(w.HeadCategory))},
				{"last_claim", w.LastClaim}, {"unclaimed_seconds", seconds(since)}, {"never_claimed", never},
				{"due_shards_among_oldest", w.DueShards}, {"oldest_rows_examined", cfg.Sample},
			},
			Next: env.shardCommand(t, cell, w.ShardScope, w.ShardIdentifier),
		})
		if t.Control() {
			out[len(out)-1].Evidence = append(out[len(out)-1].Evidence, KV{"cell", Clean(cell)})
		}
		if len(out) >= cfg.Limit {
			break
		}
	}
	if len(out) > 0 {
		return env.groupScheduler(t, out)
	}
	due, longest := int64(0), 0.0
	if len(rows) > 0 {
		due, longest = rows[0].DueShards, rows[0].UnclaimedSeconds
	}
	return []Finding{{Check: CheckScheduler, Severity: OK,
		Summary: fmt.Sprintf("%s: none of the %d due shard(s) among the oldest rows' shards has waited %s for a claim (longest %s; of the %d longest waiting, %d were claimed seconds ago, probably draining now)",
			t.TableName(), due, dur(cfg.Unclaimed.Seconds()), dur(longest), len(rows), inFlight),
		Evidence: Evidence{{"table", t.TableName()}, {"due_shards_among_oldest", due}, {"longest_unclaimed_seconds", roundTo(longest, 1)},
			{"in_flight", inFlight}, {"waiting_under_threshold", waiting}, {"threshold_seconds", seconds(cfg.Unclaimed)}, {"oldest_rows_examined", cfg.Sample}},
	}}
}

// depthText is a depth as a summary says it: "at least N" when a shard's count stopped at
// its cap (query.StuckDepthCap).
func depthText(depth int64, atLeast bool) string {
	if atLeast {
		return fmt.Sprintf("at least %d (a shard's rows counted up to %d; inspect shard counts them all)", depth, query.StuckDepthCap)
	}
	return fmt.Sprint(depth)
}

// checkKillswitch: disabled shards with rows waiting behind them (never delivered while
// disabled), and whether Sentry's trimming of them has stalled.
func checkKillswitch(ctx context.Context, env *Env) ([]Finding, error) {
	var out []Finding
	for _, t := range env.Targets {
		sw, err := killswitch.ReadSwitches(ctx, env.Tx, env.target(t), env.Schema)
		if err != nil {
			return nil, err
		}
		ks := sw.Read
		if !ks.Known() {
			out = append(out, Finding{Check: CheckKillswitch, Severity: Warn,
				Summary:  t.TableName() + ": no sentry_option or sentry_controloption table here: kill-switch state unknown",
				Evidence: Evidence{{"table", t.TableName()}}, Next: env.Prefix + " doctor --check schema"})
			continue
		}
		fs, err := env.disabledFindings(ctx, t, ks)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
		// Read only to warn: a failed read of the other table is no finding.
		if sw.Unread != nil {
			out = append(out, env.unreadFinding(t, sw.Unread))
		}
	}
	return out, nil
}

// unreadFinding warns of the shards that the options table Sentry does not read for t here
// disables: they are not disabled, unless --deployment is not what this database is.
func (env *Env) unreadFinding(t query.Target, u *options.Unread) Finding {
	var shards []string
	for scope := range 2 {
		for _, id := range u.Disabled[scope] {
			shards = append(shards, fmt.Sprintf("%s %d", env.scopeArg(int64(scope)), id))
		}
	}
	return Finding{
		Check: CheckKillswitch, Severity: Warn,
		Summary: fmt.Sprintf("%s: %s disables %d shard(s) (%s), but they are NOT disabled: %s",
			t.TableName(), u.Table, len(shards), strings.Join(shards, ", "), u.Why(t.TableName(), env.Schema)),
		Evidence: Evidence{{"table", t.TableName()}, {"options_table", u.Table}, {"read_from", u.Read},
			{"deployment", env.Schema.DeploymentWhy}, {"would_read_it", string(u.Deployment)}, {"shards", strings.Join(shards, ", ")}},
		Next: fmt.Sprintf("%s --deployment %s killswitch check %s", env.Prefix, u.Deployment, shards[0]),
	}
}

func (env *Env) disabledFindings(ctx context.Context, t query.Target, ks *options.Killswitches) ([]Finding, error) {
	var held []heldShard
	disabled := 0
	for scope := range 2 {
		var ids []int64
		for id := range ks.Disabled[scope] {
			ids = append(ids, id)
		}
		disabled += len(ids)
		if len(ids) == 0 {
			continue
		}
		st := query.DoctorDisabledShards(t, query.Enum{Value: scope, Name: env.Registry.ScopeName(scope)}, sorted(ids))
		rows, cells, err := shardRows[query.DoctorDisabledRow](ctx, env, t, st)
		if err != nil {
			return nil, err
		}
		for i, w := range rows {
			held = append(held, heldShard{w, cells[i]})
		}
	}
	if len(held) == 0 {
		return []Finding{{Check: CheckKillswitch, Severity: OK,
			Summary:  fmt.Sprintf("%s: no kill-switched shard holds rows (%d shard(s) disabled in %s)", t.TableName(), disabled, ks.Table),
			Evidence: Evidence{{"table", t.TableName()}, {"options_table", ks.Table}, {"disabled_shards", disabled}}}}, nil
	}
	if len(held) == 1 {
		return []Finding{env.disabledFinding(t, ks, held[0].row, held[0].cell)}, nil
	}
	return []Finding{env.disabledGroup(t, ks, held)}, nil
}

// heldShard is a kill-switched shard that holds rows.
type heldShard struct {
	row  query.DoctorDisabledRow
	cell string
}

// switchAge is when a scope's kill-switch option was last written and by whom, as a
// summary says it, and whether it is recent enough to be an incident's deliberate switch.
func (env *Env) switchAge(ks *options.Killswitches, scope int64) (string, bool, time.Time, string) {
	set, ok := ks.Set[int(scope)]
	if !ok || set.At.IsZero() {
		return "its option row's last write is unknown", false, time.Time{}, ""
	}
	by := set.By
	if by == "" {
		by = "unknown"
	}
	age := env.Now.Sub(set.At)
	return fmt.Sprintf("the option was last written %s ago (%s) by %s", dur(age.Seconds()), set.At.UTC().Format(time.RFC3339), Clean(by)), age < RecentKillswitch, set.At, by
}

// removeAndReschedule are the commands that release held shards: one killswitch remove per
// scope (the option is one list per scope), then one reschedule per scope, since a shard
// left at the 1 h cap while disabled would otherwise wait out its backoff, then doctor.
func (env *Env) removeAndReschedule(t query.Target, held []heldShard, reason string) (remove, rest []string) {
	byScope := map[int64][]int64{}
	byCell := map[string]map[int64][]int64{}
	for _, h := range held {
		s, id := h.row.ShardScope, h.row.ShardIdentifier
		byScope[s] = append(byScope[s], id)
		if byCell[h.cell] == nil {
			byCell[h.cell] = map[int64][]int64{}
		}
		byCell[h.cell][s] = append(byCell[h.cell][s], id)
	}
	// The option is one list per scope, the same for every cell: no --cell on the remove.
	remove = env.scopeCommands(query.Target{Silo: t.Silo, Table: t.Table}, "", []string{"killswitch", "remove"}, byScope, reason)
	for _, cell := range sortedKeys(byCell) {
		rest = append(rest, env.scopeCommands(t, cell, []string{"reschedule"}, byCell[cell], "released from the kill switch")...)
	}
	return remove, append(rest, env.Prefix+" doctor")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// disabledGroup is one finding for every kill-switched shard of t that holds rows: one
// cause (the switches), one set of commands.
func (env *Env) disabledGroup(t query.Target, ks *options.Killswitches, held []heldShard) Finding {
	var rows int64
	atLeast, stalled := false, 0
	cats := map[string]bool{}
	var names []string
	oldest := held[0].row.HeadAdded
	for i, h := range held {
		rows += h.row.Depth
		atLeast = atLeast || h.row.Depth >= query.DisabledDepthCap
		if h.row.TrimmingStalled {
			stalled++
		}
		cats[env.Registry.CategoryName(int(h.row.HeadCategory))] = true
		oldest = minTime(oldest, h.row.HeadAdded)
		if i < 5 {
			names = append(names, env.shardName(t, h.cell, h.row.ShardScope, h.row.ShardIdentifier))
		} else if i == 5 {
			names = append(names, fmt.Sprintf("… %d more", len(held)-5))
		}
	}
	ages := map[string]bool{}
	recent := false
	var setAt time.Time
	var setBy string
	for _, h := range held {
		a, r, at, by := env.switchAge(ks, h.row.ShardScope)
		ages[a] = true
		recent = recent || r
		if setAt.IsZero() || at.Before(setAt) {
			setAt, setBy = at, by
		}
	}
	remove, rest := env.removeAndReschedule(t, held, "kill switch left on")
	next, then := remove[0], append(remove[1:], rest...)
	advice := "remove the switch (one write per scope) and make the shards due; never skip their rows: they are healthy until shown otherwise"
	if recent {
		advice = "it was set within the last hour: if an incident still needs it, leave it; otherwise remove it and make the shards due. Never skip their rows"
		then = append([]string{next}, then...)
		next = env.Prefix + " killswitch list"
	}
	return Finding{
		Check: CheckKillswitch, Severity: Warn, Target: fmt.Sprintf("%d kill-switched shards", len(held)),
		Short: fmt.Sprintf("%d shards held by kill switch", len(held)),
		Summary: fmt.Sprintf("%s: %d kill-switched shard(s) (%s) hold %s row(s) that are never delivered while disabled (heads of %s; oldest row %s old); %s. %s",
			t.TableName(), len(held), strings.Join(names, ", "), depthText(rows, atLeast), strings.Join(sortedKeys(cats), " "),
			dur(env.Now.Sub(oldest).Seconds()), strings.Join(sortedKeys(ages), "; "), advice),
		Evidence: Evidence{{"table", t.TableName()}, {"options_table", ks.Table}, {"cause", "killswitch_left_on"}, {"grouped_shards", len(held)},
			{"shards", strings.Join(names, ", ")}, {"rows", rows}, {"rows_at_least", atLeast}, {"trimming_stalled_shards", stalled},
			{"switch_set_at", setAt}, {"switch_set_by", Clean(setBy)}, {"switch_recent", recent}, {"next_selects_shards", len(held)}, {"grouped", true}},
		Next: next,
		Then: then,
	}
}

func (env *Env) disabledFinding(t query.Target, ks *options.Killswitches, w query.DoctorDisabledRow, cell string) Finding {
	stalled := w.TrimmingStalled
	trim := "Sentry still trims its head group on each visit"
	if stalled {
		trim = "trimming has stalled (the head row is the newest of its group): nothing more is deleted until it is re-enabled"
	}
	atLeast := w.Depth >= query.DisabledDepthCap
	depth := fmt.Sprint(w.Depth)
	if atLeast {
		depth = "at least " + depth
	}
	age, recent, setAt, setBy := env.switchAge(ks, w.ShardScope)
	name := env.shardName(t, cell, w.ShardScope, w.ShardIdentifier)
	remove, rest := env.removeAndReschedule(t, []heldShard{{w, cell}}, "kill switch left on")
	next, then := remove[0], rest
	if recent {
		next, then = fmt.Sprintf("%s killswitch check %s %d", env.Prefix, env.scopeArg(w.ShardScope), w.ShardIdentifier), append(remove, rest...)
	}
	return Finding{
		Check: CheckKillswitch, Severity: Warn, Target: name,
		Short: fmt.Sprintf("disabled, %s rows%s", depth, map[bool]string{true: ", trim stalled"}[stalled]),
		Summary: fmt.Sprintf("%s: kill-switched shard %s holds %s row(s) that are never delivered while it is disabled; %s; %s",
			t.TableName(), name, depth, trim, age),
		Evidence: Evidence{
			{"table", t.TableName()}, {"options_table", ks.Table}, {"cause", "killswitch_left_on"}, {"shard_scope", w.ShardScope},
			{"shard_identifier", w.ShardIdentifier}, {"depth", w.Depth}, {"depth_at_least", atLeast}, {"head_id", w.HeadID},
			{"last_visit", w.LastVisit}, {"oldest_message", w.HeadAdded}, {"trimming_stalled", stalled},
			{"switch_set_at", setAt}, {"switch_set_by", Clean(setBy)}, {"switch_recent", recent},
		},
		Next: next,
		Then: then,
	}
}

func sorted(ids []int64) []int64 {
	slices.Sort(ids)
	return ids
}

// target is t in the schema the doctor reads, where its options tables are.
func (env *Env) target(t query.Target) query.Target {
	t.Schema = env.SchemaName
	return t
}
