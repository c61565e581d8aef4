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
	total, ok := firstTotal(res, countCol)
	if !ok {
		return ""
	}
	return render.Shown(len(res.Rows), int(total), noun, "--limit")
}

// totalRow is the total a listing returns beside its rows (its column renamed to total).
type totalRow struct {
	Total *int64 `db:"total"`
}

// firstTotal is column countCol of res's first row, the listing's total; false when res
// has no such column, or no rows, or the first row's is NULL or not an integer.
func firstTotal(res *query.Result, countCol string) (int64, bool) {
	if len(res.Rows) == 0 {
		return 0, false
	}
	renamed, err := res.ColumnAs(countCol, "total")
	if err != nil {
		return 0, false
	}
	renamed.Rows = renamed.Rows[:1]
	rows, err := query.Rows[totalRow](renamed)
	if err != nil || rows[0].Total == nil {
		return 0, false
	}
	return *rows[0].Total, true
}

// MessagesFooter is the footer of inspect shard's page of messages: the page against the
// shard's depth, which its state card already read ("showing 50 of 466 messages of the
// shard (--limit)").
func MessagesFooter(shown int, depth int64) string {
	return render.Shown(shown, int(depth), "messages of the shard", "--limit")
}
