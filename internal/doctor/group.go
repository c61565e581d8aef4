package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Repeated findings are grouped: when GroupAt or more shards of one table, cell and scope
// share a finding, they are one finding whose next command is the bulk repair that selects
// them (the selector flags of outboxctl shards), not one finding per shard.
//
//   - the same category at the head of GroupAt or more capped shards, each head written
//     before the last attempt (a poison category): skip --category C --head-category C
//     --at-cap --scope S, then reschedule --at-cap --scope S (the shards' backoff was earned
//     by the rows the skip removed);
//   - GroupAt or more capped shards otherwise (heads of several categories, or heads written
//     after the last attempt: a receiver that was down, a backoff not earned by the head):
//     reschedule --at-cap --scope S.
const GroupAt = 10

// groupScan is how many capped shards the stuck check reads to group them: more than any
// --limit, so a group's count is exact up to it (capped_shards counts them all).
const groupScan = 1000

// cappedShard is one capped shard's row, its cell, and whether it is a poison suspect.
type cappedShard struct {
	row     query.DoctorCappedRow
	cell    string
	suspect bool
}

type groupKey struct {
	cell  string
	scope int64
}

// groupStuck splits t's capped shards into grouped findings and the shards left to report
// one by one (in the order read).
func (env *Env) groupStuck(t query.Target, shards []cappedShard) ([]Finding, []cappedShard) {
	byScope := map[groupKey][]int{}
	var keys []groupKey
	for i, s := range shards {
		k := groupKey{s.cell, s.row.ShardScope}
		if _, ok := byScope[k]; !ok {
			keys = append(keys, k)
		}
		byScope[k] = append(byScope[k], i)
	}
	grouped := make([]bool, len(shards))
	var out []Finding
	for _, k := range keys {
		// A poison category: the same head category among suspects, GroupAt or more.
		byCat := map[int64][]int{}
		var cats []int64
		for _, i := range byScope[k] {
			if !shards[i].suspect {
				continue
			}
			c := shards[i].row.HeadCategory
			if _, ok := byCat[c]; !ok {
				cats = append(cats, c)
			}
			byCat[c] = append(byCat[c], i)
		}
		for _, c := range cats {
			if len(byCat[c]) < GroupAt {
				continue
			}
			out = append(out, env.poisonGroup(t, k, c, pick(shards, byCat[c])))
			for _, i := range byCat[c] {
				grouped[i] = true
			}
		}
		var rest []int
		for _, i := range byScope[k] {
			if !grouped[i] {
				rest = append(rest, i)
			}
		}
		if len(rest) >= GroupAt {
			out = append(out, env.capGroup(t, k, pick(shards, rest)))
			for _, i := range rest {
				grouped[i] = true
			}
		}
	}
	var left []cappedShard
	for i, s := range shards {
		if !grouped[i] {
			left = append(left, s)
		}
	}
	return out, left
}

func pick(shards []cappedShard, idx []int) []cappedShard {
	out := make([]cappedShard, len(idx))
	for i, j := range idx {
		out[i] = shards[j]
	}
	return out
}

// groupEvidence is what a group's shards share and span: how many, the first few, the
// oldest head, and the minutes their last attempts fell in.
func (env *Env) groupEvidence(t query.Target, k groupKey, g []cappedShard) (Evidence, time.Duration) {
	var ids []string
	var depth int64
	atLeast := false
	oldest, first, last := g[0].row.HeadAdded, g[0].row.LastAttempt, g[0].row.LastAttempt
	cats := map[string]bool{}
	for i, s := range g {
		if i < 5 {
			ids = append(ids, fmt.Sprint(s.row.ShardIdentifier))
		}
		depth += s.row.Depth
		atLeast = atLeast || s.row.DepthAtLeast
		oldest = minTime(oldest, s.row.HeadAdded)
		first = minTime(first, s.row.LastAttempt)
		if s.row.LastAttempt.After(last) {
			last = s.row.LastAttempt
		}
		cats[env.Registry.CategoryName(int(s.row.HeadCategory))] = true
	}
	if len(g) > 5 {
		ids = append(ids, "…")
	}
	names := make([]string, 0, len(cats))
	for c := range cats {
		names = append(names, c)
	}
	sort.Strings(names)
	age := env.Now.Sub(oldest)
	ev := Evidence{{"table", t.TableName()}}
	if t.Control() {
		ev = append(ev, KV{"cell", Clean(k.cell)})
	}
	return append(ev,
		KV{"shard_scope", k.scope}, KV{"grouped_shards", len(g)}, KV{"shards", strings.Join(ids, " ")},
		KV{"rows", depth}, KV{"rows_at_least", atLeast}, KV{"head_categories", strings.Join(names, " ")},
		KV{"oldest_head_added", oldest}, KV{"oldest_head_age_seconds", seconds(age)},
		KV{"last_attempts_from", first}, KV{"last_attempts_to", last}), age
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// poisonGroup is the finding of category c at the head of every shard of g.
func (env *Env) poisonGroup(t query.Target, k groupKey, c int64, g []cappedShard) Finding {
	ev, age := env.groupEvidence(t, k, g)
	cat := env.Registry.CategoryName(int(c))
	scope := env.scopeArg(k.scope)
	sev := Warn
	if age >= StuckCritAge {
		sev = Crit
	}
	return Finding{
		Check: CheckStuck, Severity: sev, Target: groupTarget(env, t, k, len(g)),
		Short: fmt.Sprintf("poison: %s heads", cat),
		Summary: fmt.Sprintf("%s: %d shards of %s at the 1 h backoff cap, each with a %s head message written before its last attempt: a poison category blocking %s row(s) (if its receiver was down instead, fix it and run only the reschedule)",
			t.TableName(), len(g), env.Registry.ScopeName(int(k.scope)), cat, depthText(evInt(ev, "rows"), evBool(ev, "rows_at_least"))),
		Evidence: append(ev, KV{"head_category", cat}, KV{"poison_suspect", true}, KV{"grouped", true}),
		Next: env.command(t, k.cell, "skip", "--category", cat, "--head-category", cat, "--at-cap", "--scope", scope,
			"--reason", fmt.Sprintf("poison: %s at the head of %d shards", cat, len(g))),
		Then: []string{env.command(t, k.cell, "reschedule", "--at-cap", "--scope", scope,
			"--reason", "backoff earned by the skipped "+cat+" heads")},
	}
}

// capGroup is the finding of the shards of g at the cap with heads of several categories
// (or heads that did not earn the backoff): a receiver outage rather than poison.
func (env *Env) capGroup(t query.Target, k groupKey, g []cappedShard) Finding {
	ev, _ := env.groupEvidence(t, k, g)
	return Finding{
		Check: CheckStuck, Severity: Warn, Target: groupTarget(env, t, k, len(g)),
		Short: "at 1 h cap: receiver outage?",
		Summary: fmt.Sprintf("%s: %d shards of %s at the 1 h backoff cap, last attempted between %s and %s, heads of %s: a receiver outage rather than one poison message; once the receivers answer, make them due now",
			t.TableName(), len(g), env.Registry.ScopeName(int(k.scope)),
			evTime(ev, "last_attempts_from"), evTime(ev, "last_attempts_to"), evString(ev, "head_categories")),
		Evidence: append(ev, KV{"poison_suspect", false}, KV{"grouped", true}),
		Next: env.command(t, k.cell, "reschedule", "--at-cap", "--scope", env.scopeArg(k.scope),
			"--reason", fmt.Sprintf("%d shards at the cap", len(g))),
	}
}

func evValue(ev Evidence, key string) any {
	for _, kv := range ev {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func evInt(ev Evidence, key string) int64 { n, _ := evValue(ev, key).(int64); return n }

func evBool(ev Evidence, key string) bool { b, _ := evValue(ev, key).(bool); return b }

func evString(ev Evidence, key string) string { s, _ := evValue(ev, key).(string); return s }

func evTime(ev Evidence, key string) string {
	tm, _ := evValue(ev, key).(time.Time)
	return tm.UTC().Format("15:04")
}

// groupTarget names a group's shards: "50 × ORGANIZATION_SCOPE" (with the cell in the
// control silo).
func groupTarget(env *Env, t query.Target, k groupKey, n int) string {
	s := env.Registry.ScopeName(int(k.scope))
	if t.Control() {
		s = Clean(k.cell) + ":" + s
	}
	return fmt.Sprintf("%d × %s", n, s)
}

// groupScheduler folds the scheduler findings of t that share a cell and scope, when there
// are min(GroupAt, --limit) or more of them, into one: Sentry's drain tasks not running is
// one cause, not one finding per shard. The group's next is to inspect its longest-waiting
// shard (the first, as read).
func (env *Env) groupScheduler(t query.Target, fs []Finding) []Finding {
	at := min(GroupAt, env.Config.Limit)
	type key struct {
		cell  string
		scope any
	}
	keyOf := func(f Finding) key { return key{evString(f.Evidence, "cell"), evValue(f.Evidence, "shard_scope")} }
	count := map[key]int{}
	for _, f := range fs {
		count[keyOf(f)]++
	}
	var out []Finding
	done := map[key]bool{}
	for _, f := range fs {
		k := keyOf(f)
		if count[k] < at || count[k] < 2 {
			out = append(out, f)
			continue
		}
		if done[k] {
			continue
		}
		done[k] = true
		n := count[k]
		scope, _ := k.scope.(int64)
		tgt := groupTarget(env, t, groupKey{k.cell, scope}, n)
		more := ""
		if n >= env.Config.Limit {
			more = "at least "
		}
		g := f
		g.Target = tgt
		g.Short = schedulerShort(env.Demo, fmt.Sprintf("%s%d due, unclaimed", strings.Replace(more, "at least ", "≥", 1), n))
		g.Summary = fmt.Sprintf("%s: %s%d due shards of %s are unclaimed, the longest for %s (shard %s): %s",
			t.TableName(), more, n, env.Registry.ScopeName(int(scope)), dur(evFloat(f.Evidence, "unclaimed_seconds")),
			env.shardName(t, k.cell, scope, evInt(f.Evidence, "shard_identifier")), schedulerWhy(env.Demo))
		g.Evidence = append(slices.Clone(f.Evidence), KV{"grouped_shards", n}, KV{"grouped", true})
		out = append(out, g)
	}
	return out
}

func schedulerWhy(demo bool) string {
	if demo {
		return "expected of the demo (no Sentry workers run against it); on a real database, Sentry's drain tasks are not running or not reaching it"
	}
	return "Sentry's drain tasks are not running or not reaching this database"
}

func evFloat(ev Evidence, key string) float64 { f, _ := evValue(ev, key).(float64); return f }

// schedulerShort is a scheduler finding's short summary: on the demo, that it is expected
// there (the first words, so a cut keeps them).
func schedulerShort(demo bool, s string) string {
	if demo {
		return "expected of the demo: " + s
	}
	return s
}
