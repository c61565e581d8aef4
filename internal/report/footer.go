package report

import (
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// ListFooter is the footer of a listing cut by --limit ("showing 20 of 466 stuck shards
// (--limit)"), from a total the statement returns beside its rows in column countCol
// (count(*) OVER () computed before the LIMIT). It is "" when nothing is hidden, and when
// the result has no such column or no rows: a footer never guesses a total.
func ListFooter(res *query.Result, countCol, noun string) string {
	if res == nil || len(res.Rows) == 0 {
		return ""
	}
	i := res.Col(countCol)
	if i < 0 {
		return ""
	}
	total, ok := res.Rows[0][i].(int64)
	if !ok {
		return ""
	}
	return render.Shown(len(res.Rows), int(total), noun, "--limit")
}

// MessagesFooter is the footer of inspect shard's page of messages: the page against the
// shard's depth, which its state card already read ("showing 50 of 466 messages of the
// shard (--limit)").
func MessagesFooter(shown int, depth int64) string {
	return render.Shown(shown, int(depth), "messages of the shard", "--limit")
}
