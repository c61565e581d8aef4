package doctor

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// The stuck check diagnoses before it prints anything that removes a message (reference
// §10.5: confusing the causes destroys healthy messages). Each shard that is not draining
// gets one cause, from evidence doctor can read:
//
//   - a hot shard: its head coalesce group holds query.HotGroupRows rows or more, too many
//     for Sentry's drain to delete inside the task's deadline; the fix is compact (which
//     keeps every group's newest row), never a skip;
//   - made due and not attempted since: outboxctl rescheduled it (or removed its kill
//     switch) and Sentry's workers have not claimed it yet: wait, or see the scheduler;
//   - failed again after a fresh attempt: outboxctl made it due, Sentry attempted the same
//     head since (a claim after the ledger's time) and the head is still there, its group's
//     newest row written before that attempt (so the newest payload is what failed). It is
//     poison only when a shard outboxctl made due with a head of the same category has
//     delivered since (its group's newest row is gone, and not by a skip): the receiver
//     works, the message does not. Without that delivery it is a receiver still down, or
//     every one of them poison: the evidence does not tell, and nothing is removed;
//   - at the 1 h cap without such a record: a receiver outage (last attempts clustered
//     within OutageWindow) or a poison head, which the evidence cannot tell apart yet. The
//     first step decides without removing anything: make the shards due, and see on the
//     next doctor whether Sentry's own workers deliver them.
//
// A kill-switched shard is the kill-switch check's, whatever its backoff.

// OutageWindow: shards whose heads' last attempts all fall within it reached the backoff
// cap together, the signature of a receiver outage (their backoffs doubled in step).
const OutageWindow = 10 * time.Minute

// LedgerWindow is how far back doctor reads the ledger of shards outboxctl made due.
const LedgerWindow = 24 * time.Hour

// RecentKillswitch: a kill switch written more recently may be an incident's deliberate
// one; older, it is probably left over.
const RecentKillswitch = time.Hour

// The causes a stuck finding names (its evidence's "cause").
const (
	CauseHot          = "hot_shard"
	CauseOutage       = "receiver_outage"
	CauseUndecided    = "outage_or_poison"
	CauseUntried      = "backoff_not_earned"
	CausePoison       = "poison"
	CauseStillFailing = "still_failing"
	CauseWaiting      = "made_due_not_attempted"
	CauseHeld         = "head_held"
)

// obs is what doctor read of one shard that is not draining.
type obs struct {
	cell                                string
	scope, id                           int64
	headID, headCat, headObj            int64
	lastAttempt, nextAttempt, headAdded time.Time
	delay                               float64
	depth                               int64
	depthAtLeast, capped, locked        bool
	// switchUnknown: the kill switch of the shard's scope could not be read; a disabled
	// shard's visit (trimming, no delivery) would look like a failed attempt.
	switchUnknown bool
	query.HeadGroup
	rec   *ledger.Record
	cause string
}

type obsKey struct {
	cell      string
	scope, id int64
}

func (o *obs) key() obsKey { return obsKey{o.cell, o.scope, o.id} }

// untried: the head, or its group's newest row, was written after the last attempt: the
// next attempt sends a payload that has not failed.
func (o *obs) untried() bool {
	return o.headAdded.After(o.lastAttempt) || o.GroupNewestAdded.After(o.lastAttempt)
}

// attemptedSince: Sentry claimed the shard after outboxctl made it due. A claim after the
// ledger's time (on the database's clock) says so; after a reschedule, so does a head whose
// scheduled_for is no longer the THE_PAST the reschedule wrote (clock-free: only a claim, or
// another reschedule, rewrites it).
func (o *obs) attemptedSince() bool {
	return o.lastAttempt.After(o.rec.At) || o.rec.Via == ledger.ViaReschedule && !o.nextAttempt.Equal(shardstate.ThePast)
}

// madeDue is the ledger's evidence for one table.
type madeDue struct {
	// latest is each shard's newest record of being made due.
	latest map[obsKey]ledger.Record
	// heads are those shards' heads now (a shard absent holds no rows).
	heads map[obsKey]query.MadeDueRow
	// delivered are the records of shards outboxctl made due whose head group was
	// delivered since (its newest row gone, and not by a skip): one per shard and time.
	delivered []ledger.Record
}

// FreshRound is how long before a shard's own fresh attempt another shard may have been
// made due for its delivery to count as evidence about the same receiver: the commands of
// one round (a kill switch removed, then the shards rescheduled) are minutes apart, while
// a delivery from an earlier round says nothing about the receiver now.
const FreshRound = 5 * time.Minute

// deliveredFor counts the deliveries that prove o's head poison rather than its receiver
// down: shards of the same cell (a control silo's receivers deliver per cell) and head
// category, other than o, made due in o's round (FreshRound before o at the earliest).
func (ev madeDue) deliveredFor(o *obs) int {
	if o.rec == nil {
		return 0
	}
	n := 0
	for _, r := range ev.delivered {
		if r.Cell == o.cell && int64(r.HeadCategory) == o.headCat && !(int64(r.Scope) == o.scope && r.Shard == o.id) && !r.At.Before(o.rec.At.Add(-FreshRound)) {
			n++
		}
	}
	return n
}

// readMadeDue reads the ledger for t and the database's side of its evidence.
func (env *Env) readMadeDue(ctx context.Context, t query.Target) (madeDue, error) {
	ev := madeDue{latest: map[obsKey]ledger.Record{}, heads: map[obsKey]query.MadeDueRow{}}
	if env.LedgerPath == "" {
		return ev, nil
	}
	id, err := env.identity(ctx)
	if err != nil {
		return ev, err
	}
	recs, err := ledger.Since(env.LedgerPath, ledger.Where{Database: id.Identity, Schema: env.SchemaName, Table: t.TableName()}, id.Now.Add(-LedgerWindow))
	if err != nil || len(recs) == 0 {
		return ev, err
	}
	skipped := map[int64]bool{}
	var newest []int64
	for _, r := range recs {
		if r.Via == ledger.ViaSkip {
			skipped[r.GroupNewestID] = true
			continue
		}
		if t.Cell != "" && r.Cell != t.Cell {
			continue
		}
		k := obsKey{r.Cell, int64(r.Scope), r.Shard}
		if old, ok := ev.latest[k]; !ok || !r.At.Before(old.At) {
			ev.latest[k] = r
		}
		if r.GroupNewestID > 0 {
			newest = append(newest, r.GroupNewestID)
		}
	}
	present := map[int64]bool{}
	if len(newest) > 0 {
		rows, err := readRows[query.PresentRow](ctx, env, query.RowsPresent(t, newest))
		if err != nil {
			return ev, err
		}
		for _, r := range rows {
			present[r.ID] = true
		}
	}
	for _, r := range recs {
		if r.Via == ledger.ViaSkip || r.GroupNewestID == 0 || present[r.GroupNewestID] || skipped[r.GroupNewestID] {
			continue
		}
		ev.delivered = append(ev.delivered, r)
	}
	if len(ev.latest) == 0 {
		return ev, nil
	}
	var cells []string
	var scopes, ids []int64
	for k := range ev.latest {
		cells, scopes, ids = append(cells, k.cell), append(scopes, k.scope), append(ids, k.id)
	}
	rows, rowCells, err := shardRows[query.MadeDueRow](ctx, env, t, query.MadeDueHeads(t, cells, scopes, ids))
	if err != nil {
		return ev, err
	}
	for i, r := range rows {
		ev.heads[obsKey{rowCells[i], r.ShardScope, r.ShardIdentifier}] = r
	}
	return ev, nil
}

// identity reads (once) which database this is and its clock.
func (env *Env) identity(ctx context.Context) (query.IdentityRow, error) {
	if env.ident != nil {
		return *env.ident, nil
	}
	rows, err := readRows[query.IdentityRow](ctx, env, query.DatabaseIdentity())
	if err != nil {
		return query.IdentityRow{}, err
	}
	if len(rows) != 1 {
		return query.IdentityRow{}, fmt.Errorf("database-identity returned %d rows, want 1", len(rows))
	}
	env.ident = &rows[0]
	return rows[0], nil
}

// checkStuck: the shards that do not drain, by cause (see above).
func checkStuck(ctx context.Context, env *Env) ([]Finding, error) {
	var out []Finding
	for _, t := range env.Targets {
		rows, cells, err := shardRows[query.DoctorCappedRow](ctx, env, t, query.DoctorCappedShards(t, max(env.Config.Limit, groupScan)))
		if err != nil {
			return nil, err
		}
		sw, _ := killswitch.ReadSwitches(ctx, env.Tx, env.target(t), env.Schema)
		ev, err := env.readMadeDue(ctx, t)
		if err != nil {
			return nil, err
		}
		disabled := func(scope, id int64) bool {
			d := sw.IsDisabled(int(scope), id)
			return d != nil && *d
		}
		// Only the organization and user scopes can be disabled (reference §3.8).
		unknown := func(scope int64) bool { return scope <= 1 && sw.IsDisabled(int(scope), 0) == nil }
		var all []*obs
		byKey := map[obsKey]*obs{}
		cappedDisabled := 0
		for i, w := range rows {
			if disabled(w.ShardScope, w.ShardIdentifier) {
				cappedDisabled++
				continue
			}
			o := &obs{cell: cells[i], scope: w.ShardScope, id: w.ShardIdentifier, headID: w.HeadID, headCat: w.HeadCategory, headObj: w.HeadObject,
				lastAttempt: w.LastAttempt, nextAttempt: w.NextAttempt, headAdded: w.HeadAdded, delay: w.LastDelaySeconds,
				depth: w.Depth, depthAtLeast: w.DepthAtLeast, capped: true, locked: w.HeadLocked, HeadGroup: w.Group()}
			all = append(all, o)
			byKey[o.key()] = o
		}
		for k, h := range ev.heads {
			if disabled(k.scope, k.id) {
				continue
			}
			rec := ev.latest[k]
			o := byKey[k]
			if o == nil {
				if h.HeadID != rec.HeadID {
					continue // the recorded head went: Sentry is working through the shard
				}
				o = &obs{cell: k.cell, scope: k.scope, id: k.id, headID: h.HeadID, headCat: h.HeadCategory, headObj: h.HeadObject,
					lastAttempt: h.LastAttempt, nextAttempt: h.NextAttempt, headAdded: h.HeadAdded, delay: h.LastDelaySeconds,
					depth: h.Depth, depthAtLeast: h.Depth >= query.StuckDepthCap, locked: h.HeadLocked, HeadGroup: h.Group()}
				all = append(all, o)
				byKey[k] = o
			}
			if h.HeadID == rec.HeadID {
				r := rec
				o.rec = &r
			}
			o.locked = o.locked || h.HeadLocked
		}
		for _, o := range all {
			o.switchUnknown = unknown(o.scope)
			o.cause = classify(o, ev)
		}
		out = append(out, env.stuckFindings(t, all, ev, sw, len(rows) >= max(env.Config.Limit, groupScan))...)
		if len(all) == 0 {
			out = append(out, Finding{Check: CheckStuck, Severity: OK,
				Summary:  fmt.Sprintf("%s: no shard at the 1 h backoff cap outside the kill switches (%d kill-switched)", t.TableName(), cappedDisabled),
				Evidence: Evidence{{"table", t.TableName()}, {"capped_shards", 0}, {"capped_killswitched", cappedDisabled}}})
		}
	}
	return out, nil
}

// classify names o's cause.
func classify(o *obs, ev madeDue) string {
	switch {
	case o.GroupRows >= query.HotGroupRows:
		return CauseHot
	case o.locked:
		return CauseHeld // an attempt in flight, or a lock holder: nothing has failed yet
	case o.rec != nil && !o.attemptedSince():
		return CauseWaiting
	case o.rec != nil && !o.untried():
		if ev.deliveredFor(o) > 0 && !o.switchUnknown {
			return CausePoison
		}
		return CauseStillFailing
	case o.untried():
		return CauseUntried
	}
	return CauseUndecided // an outage or poison: stuckFindings tells which the timing suggests
}

// stuckFindings groups t's observations by cell and cause into findings. truncated: the
// capped shards read stopped at the scan's limit (a selector would take more than listed).
func (env *Env) stuckFindings(t query.Target, all []*obs, ev madeDue, sw killswitch.Switches, truncated bool) []Finding {
	byCell := map[string][]*obs{}
	var cells []string
	for _, o := range all {
		if _, ok := byCell[o.cell]; !ok {
			cells = append(cells, o.cell)
		}
		byCell[o.cell] = append(byCell[o.cell], o)
	}
	sort.Strings(cells)
	var out []Finding
	for _, cell := range cells {
		group := map[string][]*obs{}
		for _, o := range byCell[cell] {
			group[o.cause] = append(group[o.cause], o)
		}
		for i, o := range group[CauseHot] {
			if i >= env.Config.Limit {
				break
			}
			out = append(out, env.hotFinding(t, o))
		}
		if g := group[CausePoison]; len(g) > 0 {
			out = append(out, env.poisonFinding(t, cell, g, ev))
		}
		if g := group[CauseStillFailing]; len(g) > 0 {
			out = append(out, env.stillFailingFinding(t, cell, g))
		}
		if g := group[CauseWaiting]; len(g) > 0 {
			out = append(out, env.waitingFinding(t, cell, g))
		}
		if g := group[CauseHeld]; len(g) > 0 {
			out = append(out, env.heldFinding(t, cell, g))
		}
		// The shards at the cap that a fresh attempt decides about: untried heads and
		// undecided ones alike get the same first step (make them due).
		var undecided []*obs
		for _, o := range byCell[cell] {
			if o.cause == CauseUndecided || o.cause == CauseUntried {
				undecided = append(undecided, o)
			}
		}
		if len(undecided) > 0 {
			// The selector form (--stuck --at-cap --not-killswitched) selects exactly these
			// only when every capped shard of the cell outside the kill switches is one
			// of them and the kill switches were read whole.
			exact := !truncated && sw.Read.Known() && len(sw.Read.Failed) == 0
			for _, o := range byCell[cell] {
				undecidedToo := o.cause == CauseUndecided || o.cause == CauseUntried
				if o.capped != undecidedToo && (o.capped || undecidedToo) {
					exact = false // a capped shard of another cause, or one of these not at the cap
				}
			}
			out = append(out, env.undecidedFinding(t, cell, undecided, exact, truncated))
		}
	}
	return out
}

// shardLists is the shards of g as reschedule SCOPE ID... takes them: one command line per
// scope.
func (env *Env) shardLists(t query.Target, cell string, g []*obs, reason string) []string {
	byScope := map[int64][]int64{}
	for _, o := range g {
		byScope[o.scope] = append(byScope[o.scope], o.id)
	}
	return env.scopeCommands(t, cell, []string{"reschedule"}, byScope, reason)
}

// scopeCommands is one command line per scope of byScope, scopes and ids in order, repeats
// dropped: WORDS SCOPE ID... --reason REASON (reschedule SCOPE ID..., killswitch remove
// SCOPE ID...).
func (env *Env) scopeCommands(t query.Target, cell string, words []string, byScope map[int64][]int64, reason string) []string {
	scopes := make([]int64, 0, len(byScope))
	for s := range byScope {
		scopes = append(scopes, s)
	}
	slices.Sort(scopes)
	var out []string
	for _, s := range scopes {
		args := append(slices.Clone(words), env.scopeArg(s))
		for _, id := range slices.Compact(sorted(slices.Clone(byScope[s]))) {
			args = append(args, fmt.Sprint(id))
		}
		out = append(out, env.command(t, cell, append(args, "--reason", reason)...))
	}
	return out
}

// state is o's backoff as shardstate reads it (the attempts its delay shows).
func (o *obs) state(now time.Time) shardstate.Status {
	return shardstate.Classify(now, shardstate.Shard{Depth: o.depth, NextAttempt: o.nextAttempt, HeadScheduledFrom: o.lastAttempt,
		HeadScheduledFor: o.lastAttempt.Add(time.Duration(o.delay * float64(time.Second)))})
}

// span is the first and last of g's last attempts, the oldest head and the head
// categories (sorted names).
func (env *Env) span(g []*obs) (first, last, oldest time.Time, cats []string, rows int64, atLeast bool) {
	first, last, oldest = g[0].lastAttempt, g[0].lastAttempt, g[0].headAdded
	seen := map[string]bool{}
	for _, o := range g {
		first, oldest = minTime(first, o.lastAttempt), minTime(oldest, o.headAdded)
		if o.lastAttempt.After(last) {
			last = o.lastAttempt
		}
		if c := env.Registry.CategoryName(int(o.headCat)); !seen[c] {
			seen[c] = true
			cats = append(cats, c)
		}
		rows += o.depth
		atLeast = atLeast || o.depthAtLeast
	}
	sort.Strings(cats)
	return first, last, oldest, cats, rows, atLeast
}

// firstShards names up to five shards of g ("ORGANIZATION_SCOPE/4, …").
func (env *Env) firstShards(t query.Target, g []*obs) string {
	var names []string
	for i, o := range g {
		if i == 5 {
			names = append(names, fmt.Sprintf("… %d more", len(g)-5))
			break
		}
		names = append(names, env.shardName(t, o.cell, o.scope, o.id))
	}
	return strings.Join(names, ", ")
}

func (env *Env) baseEvidence(t query.Target, cell string, cause string, g []*obs) Evidence {
	ev := Evidence{{"table", t.TableName()}}
	if t.Control() {
		ev = append(ev, KV{"cell", Clean(cell)})
	}
	return append(ev, KV{"cause", cause}, KV{"grouped_shards", len(g)}, KV{"shards", env.firstShards(t, g)})
}

// undecidedFinding: shards at the cap whose cause one fresh attempt decides.
// truncated: the capped shards read stopped at groupScan, so g is the undecided among the
// shards read, and more may be at the cap: the summary says "at least", and the next
// command names g's shards (exact is false), the same count.
func (env *Env) undecidedFinding(t query.Target, cell string, g []*obs, exact, truncated bool) Finding {
	first, last, oldest, cats, rows, atLeast := env.span(g)
	untried := 0
	for _, o := range g {
		if o.cause == CauseUntried {
			untried++
		}
	}
	clustered := len(g) >= 2 && last.Sub(first) <= OutageWindow
	cause, why := CauseUndecided, fmt.Sprintf("the evidence cannot yet tell a receiver outage from poison head messages (last attempts spread over %s)", dur(last.Sub(first).Seconds()))
	switch {
	case untried == len(g):
		cause, why = CauseUntried, "each head (or its group's newest row) was written after the shard's last attempt: the backoff was earned by rows that are gone, and the payload Sentry sends next has not failed"
	case clustered:
		cause, why = CauseOutage, fmt.Sprintf("their last attempts all fell within %s (%s to %s), across %d head categor%s: they reached the cap together, a receiver outage's signature",
			dur(last.Sub(first).Seconds()), first.UTC().Format("15:04:05"), last.UTC().Format("15:04:05"), len(cats), map[bool]string{true: "y", false: "ies"}[len(cats) == 1])
	case len(g) == 1:
		why = "one shard's head failing again and again is a poison suspect, but a receiver that was down looks the same until the shard is attempted again"
	}
	sev := Warn
	if env.Now.Sub(oldest) >= StuckCritAge {
		sev = Crit
	}
	reason := fmt.Sprintf("fresh attempt: %d shards at the 1 h cap (%s)", len(g), cause)
	var next []string
	selects := len(g)
	if exact {
		next = []string{env.command(t, cell, "reschedule", "--stuck", "--at-cap", "--not-killswitched", "--reason", reason)}
	} else {
		next = env.shardLists(t, cell, g, reason)
	}
	next = append(next, env.Prefix+" doctor")
	for _, o := range g {
		if o.depthAtLeast { // a depth counted up to its cap: the command that counts it exactly
			next = append(next, env.shardCommand(t, o.cell, o.scope, o.id))
			break
		}
	}
	count := fmt.Sprint(len(g))
	if truncated {
		count = fmt.Sprintf("at least %d (the check reads the first %d shards at the cap; these are the ones it read)", len(g), groupScan)
	}
	summary := fmt.Sprintf("%s: %s shard(s) at the 1 h backoff cap, heads of %s, blocking %s row(s): %s. First step, which removes nothing: make them due now (fix the receiver first if it was down); then run doctor again once Sentry's workers had a go (the cell scheduler runs every minute, the control one every 10 s): a head that fails again while its category delivers elsewhere is poison, and doctor then prints its skip",
		t.TableName(), count, strings.Join(cats, " "), depthText(rows, atLeast), why)
	if cause == CauseOutage {
		summary = fmt.Sprintf("%s: receiver outage: %s shard(s) at the 1 h backoff cap, heads of %s, blocking %s row(s): %s. Once the receivers answer, make them due now (nothing is skipped); doctor again then shows whether they delivered",
			t.TableName(), count, strings.Join(cats, " "), depthText(rows, atLeast), why)
	}
	ev := append(env.baseEvidence(t, cell, cause, g),
		KV{"rows", rows}, KV{"rows_at_least", atLeast}, KV{"head_categories", strings.Join(cats, " ")},
		KV{"untried_heads", untried}, KV{"last_attempts_from", first}, KV{"last_attempts_to", last},
		KV{"oldest_head_added", oldest}, KV{"oldest_head_age_seconds", seconds(env.Now.Sub(oldest))},
		KV{"decided_by", why}, KV{"next_selects_shards", selects}, KV{"capped_read_stopped", truncated}, KV{"poison_suspect", false}, KV{"grouped", len(g) > 1})
	if len(g) == 1 { // one shard: its own numbers, as inspect shard shows them
		o := g[0]
		st := o.state(env.Now)
		ev = append(ev, KV{"shard_scope", o.scope}, KV{"shard_identifier", o.id}, KV{"depth", o.depth}, KV{"depth_at_least", o.depthAtLeast},
			KV{"head_id", o.headID}, KV{"head_category", env.Registry.CategoryName(int(o.headCat))}, KV{"head_object", o.headObj},
			KV{"head_added", o.headAdded}, KV{"last_attempt", o.lastAttempt}, KV{"attempts_estimate", st.Attempts},
			KV{"backoff_seconds", seconds(st.Delay)}, KV{"next_attempt", o.nextAttempt})
	}
	return Finding{
		Check: CheckStuck, Severity: sev, Target: env.groupTargetOf(t, cell, g),
		Short: map[string]string{CauseOutage: "at 1 h cap together: receiver outage", CauseUntried: "1 h backoff its heads did not earn",
			CauseUndecided: "at 1 h cap: outage or poison?"}[cause],
		Summary:  summary,
		Evidence: ev,
		Next:     next[0],
		Then:     next[1:],
	}
}

// groupTargetOf names g's shards for the compact table: a shard, or "N × SCOPE".
func (env *Env) groupTargetOf(t query.Target, cell string, g []*obs) string {
	if len(g) == 1 {
		return env.shardName(t, cell, g[0].scope, g[0].id)
	}
	scopes := map[int64]bool{}
	for _, o := range g {
		scopes[o.scope] = true
	}
	if len(scopes) == 1 {
		return groupTarget(env, t, groupKey{cell, g[0].scope}, len(g))
	}
	s := fmt.Sprintf("%d shards", len(g))
	if t.Control() {
		s = Clean(cell) + ": " + s
	}
	return s
}

// poisonFinding: heads that failed again after a fresh attempt while their category
// delivered elsewhere: skip exactly their coalesce groups.
func (env *Env) poisonFinding(t query.Target, cell string, g []*obs, ev madeDue) Finding {
	_, _, oldest, cats, rows, atLeast := env.span(g)
	var msgs []string
	var delivered []string
	for _, o := range g {
		msgs = append(msgs, fmt.Sprint(o.headID))
	}
	for _, c := range cats {
		n := 0
		for _, o := range g {
			if env.Registry.CategoryName(int(o.headCat)) == c {
				n = max(n, ev.deliveredFor(o))
			}
		}
		delivered = append(delivered, fmt.Sprintf("%s: %d", c, n))
	}
	why := fmt.Sprintf("each head failed again after outboxctl made its shard due (%s), the newest row of its group written before that attempt, while shards made due with heads of the same category delivered (%s)",
		g[0].rec.Via, strings.Join(delivered, ", "))
	sev := Warn
	if env.Now.Sub(oldest) >= StuckCritAge {
		sev = Crit
	}
	args := append([]string{"skip"}, msgs...)
	args = append(args, "--reason", fmt.Sprintf("poison: failed again after a fresh attempt (%s delivered elsewhere)", strings.Join(cats, " ")))
	return Finding{
		Check: CheckStuck, Severity: sev, Target: env.groupTargetOf(t, cell, g),
		Short: fmt.Sprintf("poison: %d head(s) failed again", len(g)),
		Summary: fmt.Sprintf("%s: poison: %d head message(s) (%s) block %s row(s): %s. Skip exactly these %d coalesce group(s) (archived first; restore puts them back); the shards' other messages stay and are delivered",
			t.TableName(), len(g), strings.Join(cats, " "), depthText(rows, atLeast), why, len(g)),
		Evidence: append(env.baseEvidence(t, cell, CausePoison, g),
			KV{"messages", strings.Join(msgs, " ")}, KV{"head_categories", strings.Join(cats, " ")}, KV{"rows", rows}, KV{"rows_at_least", atLeast},
			KV{"made_due_at", g[0].rec.At}, KV{"decided_by", why}, KV{"next_selects_groups", len(g)}, KV{"poison_suspect", true}, KV{"grouped", len(g) > 1}),
		Next: env.command(t, cell, args...),
		Then: []string{env.Prefix + " doctor"},
	}
}

// stillFailingFinding: heads that failed again after a fresh attempt with no delivery of
// their category to compare: a receiver still down, or all poison. Nothing is removed.
func (env *Env) stillFailingFinding(t query.Target, cell string, g []*obs) Finding {
	_, _, _, cats, rows, atLeast := env.span(g)
	why := fmt.Sprintf("each head failed again after outboxctl made its shard due, but no shard made due with a head of %s has delivered since: the receiver may still be failing, or every one of them is poison, and the evidence does not tell which",
		strings.Join(cats, " or "))
	return Finding{
		Check: CheckStuck, Severity: Crit, Target: env.groupTargetOf(t, cell, g),
		Short: fmt.Sprintf("%d head(s) failed again: receiver?", len(g)),
		Summary: fmt.Sprintf("%s: %d shard(s) still failing after a fresh attempt (heads of %s, blocking %s row(s)): %s. Check the receiver's errors (Sentry's OutboxFlushError events for these categories) and the head's payload; once the receiver is known good, make them due again and run doctor: a head that fails while its category delivers is poison",
			t.TableName(), len(g), strings.Join(cats, " "), depthText(rows, atLeast), why),
		Evidence: append(env.baseEvidence(t, cell, CauseStillFailing, g),
			KV{"head_categories", strings.Join(cats, " ")}, KV{"rows", rows}, KV{"rows_at_least", atLeast},
			KV{"made_due_at", g[0].rec.At}, KV{"decided_by", why}, KV{"poison_suspect", true}, KV{"grouped", len(g) > 1}),
		Next: env.command(t, cell, "inspect", "message", fmt.Sprint(g[0].headID)),
		Then: env.shardLists(t, cell, g, "fresh attempt after the receiver was fixed"),
	}
}

// waitingFinding: shards outboxctl made due that Sentry has not attempted since.
func (env *Env) waitingFinding(t query.Target, cell string, g []*obs) Finding {
	at := g[0].rec.At
	for _, o := range g {
		at = minTime(at, o.rec.At)
	}
	waited := env.Now.Sub(at)
	sev, what := OK, "Sentry's workers have not had their go yet"
	if waited >= env.Config.Unclaimed {
		sev, what = Warn, "that is longer than Sentry's scheduler takes: "+schedulerWhy(env.Demo, t)
	}
	return Finding{
		Check: CheckStuck, Severity: sev, Target: env.groupTargetOf(t, cell, g),
		Short: fmt.Sprintf("made due %s ago, not attempted", dur(waited.Seconds())),
		Summary: fmt.Sprintf("%s: %d shard(s) outboxctl made due %s ago (%s) have not been attempted since: %s; run doctor again after their attempt",
			t.TableName(), len(g), dur(waited.Seconds()), g[0].rec.Via, what),
		Evidence: append(env.baseEvidence(t, cell, CauseWaiting, g), KV{"made_due_at", at}, KV{"waited_seconds", seconds(waited)}),
		Next:     env.Prefix + " doctor",
	}
}

// heldFinding: shards whose head row a transaction in progress holds: a drain delivering it
// now, or a session holding its lock (reference §10.5 #6). Nothing has failed on it yet, so
// nothing is to be removed: the locks and xmin checks name the holder.
func (env *Env) heldFinding(t query.Target, cell string, g []*obs) Finding {
	_, _, _, cats, rows, atLeast := env.span(g)
	return Finding{
		Check: CheckStuck, Severity: Warn, Target: env.groupTargetOf(t, cell, g),
		Short: fmt.Sprintf("%d head(s) held by a transaction", len(g)),
		Summary: fmt.Sprintf("%s: the head row of %d shard(s) (heads of %s, blocking %s row(s)) is held by a transaction in progress: a drain delivering it right now, or a session holding its lock, which Sentry's claim (FOR UPDATE NOWAIT) then skips every time. Nothing has failed on it yet: run doctor again in a minute; if it is still held, the locks and xmin checks name the session to end",
			t.TableName(), len(g), strings.Join(cats, " "), depthText(rows, atLeast)),
		Evidence: append(env.baseEvidence(t, cell, CauseHeld, g), KV{"head_categories", strings.Join(cats, " ")}, KV{"rows", rows}, KV{"rows_at_least", atLeast}),
		Next:     env.Prefix + " doctor --check locks,xmin",
		Then:     []string{env.Prefix + " doctor"},
	}
}

// hotFinding: a head coalesce group too large for Sentry's drain: compact the shard.
func (env *Env) hotFinding(t query.Target, o *obs) Finding {
	name := env.shardName(t, o.cell, o.scope, o.id)
	cat := env.Registry.CategoryName(int(o.headCat))
	st := o.state(env.Now)
	why := fmt.Sprintf("its head coalesce group (%s, object %d) holds at least %d rows: Sentry delivers the group's newest row once and then deletes the older ones 50 at a time inside the same transaction, which cannot finish within the drain task's 90 s deadline, so the attempt rolls back and the shard backs off (%d attempt(s) so far)",
		cat, o.headObj, o.GroupRows, st.Attempts)
	return Finding{
		Check: CheckStuck, Severity: Crit, Target: name, Short: "hot shard: compact it",
		Summary: fmt.Sprintf("%s: hot shard %s: depth, not failure: %s. compact keeps every group's newest row (the one Sentry would deliver) and archives the older duplicates Sentry would delete undelivered anyway; never skip the head: that would lose the group's newest update",
			t.TableName(), name, why),
		Evidence: Evidence{{"table", t.TableName()}, {"cause", CauseHot}, {"shard_scope", o.scope}, {"shard_identifier", o.id},
			{"head_id", o.headID}, {"head_category", cat}, {"head_object", o.headObj}, {"head_group_rows_at_least", o.GroupRows},
			{"head_group_newest_id", o.GroupNewestID}, {"depth", o.depth}, {"depth_at_least", o.depthAtLeast}, {"last_attempt", o.lastAttempt},
			{"decided_by", why}, {"poison_suspect", false}},
		Next: env.command(t, o.cell, "compact", env.scopeArg(o.scope), fmt.Sprint(o.id), "--reason", "hot shard: head group too large for the drain"),
		Then: []string{env.Prefix + " doctor"},
	}
}
