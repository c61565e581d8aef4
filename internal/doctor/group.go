package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// GroupAt: when GroupAt or more due shards of one table, cell and scope are unclaimed, the
// scheduler check reports them as one finding (one cause), not one per shard.
const GroupAt = 10

// groupScan is how many capped shards the stuck check reads: more than any --limit, so a
// finding's count is exact up to it.
const groupScan = 1000

type groupKey struct {
	cell  string
	scope int64
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
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

func evString(ev Evidence, key string) string { s, _ := evValue(ev, key).(string); return s }

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
			env.shardName(t, k.cell, scope, evInt(f.Evidence, "shard_identifier")), schedulerWhy(env.Demo, t))
		g.Evidence = append(slices.Clone(f.Evidence), KV{"grouped_shards", n}, KV{"grouped", true})
		out = append(out, g)
	}
	return out
}

func schedulerWhy(demo bool, t query.Target) string {
	if demo {
		return "expected of the demo (no Sentry workers run against it); on a real database, Sentry's drain tasks are not running or not reaching it"
	}
	// The names an operator finds in taskbroker, the taskworkers' --namespace and the
	// schedules (reference §10.3), not the Python variables holding them.
	ns, task := "hybridcloud", "deliver-from-outbox (sentry.tasks.enqueue_outbox_jobs, every minute)"
	switch {
	case t.Control():
		ns, task = "hybridcloud.control", "deliver-from-outbox-control (sentry.tasks.enqueue_outbox_jobs_control, every 10 s)"
	case t.TableName() == "sentry_groupactionlogoutbox":
		ns, task = "issues.action_log", "the group action log's drain"
	}
	return fmt.Sprintf("Sentry's drain tasks are not running or not reaching this database: check that taskworkers consume the taskworker namespace %s and that the schedule %s runs", ns, task)
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
