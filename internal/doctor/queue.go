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
		return query.Script{query.DoctorCappedShards(t, cfg.Limit)}
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
		why := schedulerWhy(env.Demo)
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

// checkStuck: shards at the 1 h backoff cap, whose head message has failed about a dozen
// times in a row and blocks every other message of the shard.
func checkStuck(ctx context.Context, env *Env) ([]Finding, error) {
	var out []Finding
	for _, t := range env.Targets {
		rows, cells, err := shardRows[query.DoctorCappedRow](ctx, env, t, query.DoctorCappedShards(t, max(env.Config.Limit, groupScan)))
		if err != nil {
			return nil, err
		}
		// A kill-switched shard backs off to the cap too (each visit claims it): that is the
		// kill-switch check's business, not a poison message.
		sw, _ := killswitch.ReadSwitches(ctx, env.Tx, env.target(t), env.Schema)
		var capped []cappedShard
		for i, w := range rows {
			if d := sw.IsDisabled(int(w.ShardScope), w.ShardIdentifier); d != nil && *d {
				continue
			}
			capped = append(capped, cappedShard{row: w, cell: cells[i], suspect: !w.HeadAdded.After(w.LastAttempt)})
		}
		groups, left := env.groupStuck(t, capped)
		out = append(out, groups...)
		for i, s := range left {
			if i >= env.Config.Limit {
				break
			}
			out = append(out, env.stuckFinding(t, s.row, s.cell))
		}
		if len(capped) == 0 {
			out = append(out, Finding{Check: CheckStuck, Severity: OK,
				Summary:  t.TableName() + ": no shard at the 1 h backoff cap",
				Evidence: Evidence{{"table", t.TableName()}, {"capped_shards", 0}}})
		}
	}
	return out, nil
}

func (env *Env) stuckFinding(t query.Target, w query.DoctorCappedRow, cell string) Finding {
	head := shardstate.Shard{Depth: w.Depth, NextAttempt: w.NextAttempt, HeadScheduledFrom: w.LastAttempt}
	head.HeadScheduledFor = head.HeadScheduledFrom.Add(time.Duration(w.LastDelaySeconds * float64(time.Second)))
	st := shardstate.Classify(env.Now, head)
	age := env.Now.Sub(w.HeadAdded)
	sev := Warn
	if age >= StuckCritAge {
		sev = Crit
	}
	cat := env.Registry.CategoryName(int(w.HeadCategory))
	name := env.shardName(t, cell, w.ShardScope, w.ShardIdentifier)
	ev := Evidence{
		{"table", t.TableName()}, {"shard_scope", w.ShardScope}, {"shard_identifier", w.ShardIdentifier},
		{"depth", w.Depth}, {"depth_at_least", w.DepthAtLeast}, {"head_id", w.HeadID}, {"head_category", cat}, {"head_object", w.HeadObject},
		{"head_added", w.HeadAdded}, {"head_age_seconds", seconds(age)}, {"last_attempt", w.LastAttempt},
		{"attempts_estimate", st.Attempts}, {"backoff_seconds", seconds(st.Delay)},
		{"next_attempt", w.NextAttempt}, {"capped_shards", w.CappedShards},
	}
	scope := env.scopeArg(w.ShardScope)
	// A depth counted up to the cap: the command that counts the shard exactly is the last
	// next step.
	var exact []string
	if w.DepthAtLeast {
		exact = []string{env.shardCommand(t, cell, w.ShardScope, w.ShardIdentifier)}
	}
	if w.HeadAdded.After(w.LastAttempt) {
		// Written after the claim that set the backoff: the backoff was earned by rows that
		// are gone, and this head was never attempted. Not a poison suspect.
		return Finding{
			Check: CheckStuck, Severity: Warn, Target: name, Short: "1 h backoff its head did not earn",
			Summary: fmt.Sprintf("%s: shard %s waits out a 1 h backoff its head message %d (%s) did not earn: the head was written after the last attempt, so it was never tried; make the shard due now",
				t.TableName(), name, w.HeadID, cat),
			Evidence: append(ev, KV{"poison_suspect", false}),
			Next:     env.command(t, cell, "reschedule", scope, fmt.Sprint(w.ShardIdentifier), "--reason", "backoff earned by a removed head"),
			Then:     exact,
		}
	}
	return Finding{
		Check: CheckStuck, Severity: sev, Target: name,
		Short: fmt.Sprintf("poison? %s ×%d", cat, st.Attempts),
		Summary: fmt.Sprintf("%s: shard %s at the 1 h backoff cap: head message %d (%s, object %d, %s old) has been the head through all ≥%d attempts its backoff shows (2 s doubling to the cap), a poison suspect blocking %s row(s)",
			t.TableName(), name, w.HeadID, cat, w.HeadObject, dur(age.Seconds()), st.Attempts, depthText(w.Depth, w.DepthAtLeast)),
		Evidence: append(ev, KV{"poison_suspect", true}),
		Next:     env.command(t, cell, "inspect", "message", fmt.Sprint(w.HeadID)),
		Then:     append([]string{env.command(t, cell, "skip", fmt.Sprint(w.HeadID), "--reason", "poison: "+cat)}, exact...),
	}
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
	var out []Finding
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
			out = append(out, env.disabledFinding(t, ks.Table, w, cells[i]))
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckKillswitch, Severity: OK,
			Summary:  fmt.Sprintf("%s: no kill-switched shard holds rows (%d shard(s) disabled in %s)", t.TableName(), disabled, ks.Table),
			Evidence: Evidence{{"table", t.TableName()}, {"options_table", ks.Table}, {"disabled_shards", disabled}}})
	}
	return out, nil
}

func (env *Env) disabledFinding(t query.Target, optTable string, w query.DoctorDisabledRow, cell string) Finding {
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
	name := env.shardName(t, cell, w.ShardScope, w.ShardIdentifier)
	return Finding{
		Check: CheckKillswitch, Severity: Warn, Target: name,
		Short: fmt.Sprintf("disabled, %s rows%s", depth, map[bool]string{true: ", trim stalled"}[stalled]),
		Summary: fmt.Sprintf("%s: kill-switched shard %s holds %s row(s) that are never delivered while it is disabled; %s",
			t.TableName(), name, depth, trim),
		Evidence: Evidence{
			{"table", t.TableName()}, {"options_table", optTable}, {"shard_scope", w.ShardScope},
			{"shard_identifier", w.ShardIdentifier}, {"depth", w.Depth}, {"depth_at_least", atLeast}, {"head_id", w.HeadID},
			{"last_visit", w.LastVisit}, {"oldest_message", w.HeadAdded}, {"trimming_stalled", stalled},
		},
		Next: fmt.Sprintf("%s killswitch check %s %d", env.Prefix, env.scopeArg(w.ShardScope), w.ShardIdentifier),
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
