package drain

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
)

// readCategoryCounts reads, in the plan's snapshot, the rows and coalesce groups of the
// shards to drain (kill-switched ones left out) per scope and category.
func (p *BulkPlan) readCategoryCounts(ctx context.Context, tx pgx.Tx, t query.Target) error {
	var scopes []int
	var ids []int64
	for _, j := range p.Jobs {
		if j.Skip == "" {
			scopes, ids = append(scopes, j.Shard.Scope.Value), append(ids, j.Shard.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	st := query.ShardCategoryCounts(t, scopes, ids)
	rows, err := query.Picked[query.BulkCountRow](ctx, tx, st)
	if err != nil {
		return db.Classify(err, st.Name)
	}
	p.Counts = rows
	for _, r := range rows {
		p.Groups += r.Groups
	}
	return nil
}

// categoryLine is the plan's line of rows and coalesce groups per scope and category, the
// largest first; verb is what happens to them.
func (p BulkPlan) categoryLine(verb string, scopeName, categoryName func(int) string) string {
	parts := make([]string, len(p.Counts))
	for i, c := range p.Counts {
		parts[i] = fmt.Sprintf("%s %s: %d row(s), %d group(s) in %d shard(s)", scopeName(c.Scope), categoryName(c.Category), c.Rows, c.Groups, c.Shards)
	}
	return fmt.Sprintf("rows to %s per scope and category: %s", verb, strings.Join(parts, "; "))
}
