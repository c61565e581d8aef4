package drain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// BulkRequest is what a drain of selected shards (drain SELECTORS --parallel N) asks.
type BulkRequest struct {
	Request
	Selector         query.ShardSelector
	Workers          int
	FailFast         bool
	IgnoreKillswitch bool
}

// BulkPlan is what a drain of selected shards would do: the selected shards in key order,
// the jobs (kill-switched ones skipped unless --ignore-killswitch), and the plan's lines.
type BulkPlan struct {
	Shards []query.SelectedShard
	Jobs   []Job
	// Rows is the rows of the shards to drain (kill-switched ones left out); Skipped how many
	// shards are kill-switched and left alone.
	Rows    int64
	Skipped int
	// Counts are the rows and coalesce groups to drain per scope and category, Groups their
	// sum (the deliveries, or discards, the drain makes at most).
	Counts []query.BulkCountRow
	Groups int64
	lines  []string
}

// Lines are the plan as the operator confirms it.
func (p BulkPlan) Lines() []string { return p.lines }

// Draining is how many shards the drain will claim.
func (p BulkPlan) Draining() int { return len(p.Jobs) - p.Skipped }

// shownShards is how many shards a bulk plan names.
const shownShards = 10

// ReadBulkPlan lists the shards req's selector selects, in the caller's read-only snapshot,
// and plans their drain. disabled says whether a shard's kill switch disables it; names
// resolve scopes and categories.
func ReadBulkPlan(ctx context.Context, tx pgx.Tx, t query.Target, req BulkRequest, disabled func(query.ShardKey) bool,
	scopeName, categoryName func(int) string) (BulkPlan, error) {
	var p BulkPlan
	st := query.SelectedShards(t, req.Selector, nil)
	shards, err := query.Picked[query.SelectedShard](ctx, tx, st)
	if err != nil {
		return p, db.Classify(err, st.Name)
	}
	p.Shards = shards
	scopes, heads := map[string]int{}, map[string]int{}
	for _, s := range shards {
		k := query.ShardKey{Scope: query.Enum{Value: s.Scope, Name: scopeName(s.Scope)}, ID: s.ID}
		j := Job{Shard: k}
		if disabled(k) && !req.IgnoreKillswitch {
			j.Skip = StatusKillswitched
			p.Skipped++
		} else {
			p.Rows += s.Depth
			scopes[k.Scope.Name]++
			heads[categoryName(s.HeadCategory)]++
		}
		p.Jobs = append(p.Jobs, j)
	}
	if err := p.readWatermarks(ctx, tx, t); err != nil {
		return p, err
	}
	if err := p.readCategoryCounts(ctx, tx, t); err != nil {
		return p, err
	}
	p.lines = p.describe(t, req, scopes, heads, scopeName, categoryName)
	return p, nil
}

// readWatermarks reads every shard's highest id in one statement: each is drained up to
// the rows it held when the drain was planned, as drain SCOPE ID is.
func (p *BulkPlan) readWatermarks(ctx context.Context, tx pgx.Tx, t query.Target) error {
	if len(p.Jobs) == 0 {
		return nil
	}
	scopes, ids := make([]int, len(p.Jobs)), make([]int64, len(p.Jobs))
	for i, j := range p.Jobs {
		scopes[i], ids[i] = j.Shard.Scope.Value, j.Shard.ID
	}
	st := query.ShardMaxIDs(t, scopes, ids)
	rows, err := query.Picked[query.ShardMaxIDRow](ctx, tx, st)
	if err != nil {
		return db.Classify(err, st.Name)
	}
	max := make(map[query.ShardRef]int64, len(rows))
	for _, r := range rows {
		max[query.ShardRef{Scope: r.Scope, ID: r.ID}] = r.MaxID
	}
	for i, j := range p.Jobs {
		p.Jobs[i].Watermark = max[query.ShardRef{Scope: j.Shard.Scope.Value, ID: j.Shard.ID}]
	}
	return nil
}

func (p BulkPlan) describe(t query.Target, req BulkRequest, scopes, heads map[string]int, scopeName, categoryName func(int) string) []string {
	what, verb, each := "deliver and delete", "deliver and delete", "each coalesce group once, its newest row"
	if req.Handler == "discard" {
		what, verb, each = "archive and delete without delivering", "archive and delete", "each shard's rows one archive operation, restorable"
	}
	bound := "each shard's groups with a row up to its highest id now, each delivered with its newest row (groups that only appear later stay; --follow drains them too)"
	if req.Handler == "discard" {
		bound = "each shard's groups with a row up to its highest id now (groups that only appear later stay; --follow takes them too)"
	}
	if req.Follow {
		bound = "each shard to empty, rows inserted while draining included (--follow)"
	}
	lines := []string{
		fmt.Sprintf("drain %d shard(s) of %s selected by: %s; %d at a time, each on its own connection and handler, in %s mode through %s (%s)",
			p.Draining(), t.Describe(), req.Selector.Describe(), max(req.Workers, 1), req.Mode, HandlerName(req.Handler), ReasonText(req.Reason)),
		fmt.Sprintf("%s up to %d row(s) in %d coalesce group(s) (%s); %s", what, p.Rows, p.Groups, each, bound),
	}
	if len(p.Counts) > 0 {
		lines = append(lines, p.categoryLine(verb, scopeName, categoryName))
	}
	if len(scopes) > 0 {
		lines = append(lines, "per scope: "+counts(scopes), "per head category: "+counts(heads))
	}
	if p.Skipped > 0 {
		lines = append(lines, fmt.Sprintf("kill switch: %d selected shard(s) are disabled and left alone (--ignore-killswitch drains them)", p.Skipped))
	}
	var first []string
	for i, s := range p.Shards {
		if len(first) == shownShards {
			first = append(first, fmt.Sprintf("… and %d more", len(p.Shards)-i))
			break
		}
		first = append(first, fmt.Sprintf("%s/%d (%d rows%s)", p.Jobs[i].Shard.Scope.Name, s.ID, s.Depth, map[bool]string{true: ", kill-switched", false: ""}[p.Jobs[i].Skip != ""]))
	}
	if len(first) > 0 {
		lines = append(lines, "shards: "+strings.Join(first, ", "))
	}
	if req.MaxMessages > 0 {
		lines = append(lines, fmt.Sprintf("stop each shard after %d message(s)", req.MaxMessages))
	}
	if req.Rate > 0 {
		lines = append(lines, fmt.Sprintf("at most %g message(s) per second per worker", req.Rate))
	}
	if req.FailFast {
		lines = append(lines, "--fail-fast: the first failing shard stops the others (each finishes its delivery in flight)")
	} else {
		lines = append(lines, "a failing shard stops at its failing message (head-of-line) and the others carry on (--fail-fast stops them all)")
	}
	return lines
}

// counts is "A 3, B 1", the largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
