package report

import (
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestFooters: a listing's footer comes from the total the statement returned, and says
// nothing when nothing is hidden or no total is there; a message page is measured against
// the shard's depth.
func TestFooters(t *testing.T) {
	t.Parallel()
	res := &query.Result{Columns: []string{"shard_identifier", "total_shards"}, Rows: [][]any{{int64(1), int64(466)}, {int64(2), int64(466)}}}
	for _, tt := range []struct {
		res  *query.Result
		col  string
		want string
	}{
		{res, "total_shards", "showing 2 of 466 stuck shards (--limit)"},
		{res, "no_such_column", ""},
		{&query.Result{Columns: []string{"total_shards"}, Rows: [][]any{{int64(1)}}}, "total_shards", ""},
		{&query.Result{Columns: []string{"total_shards"}}, "total_shards", ""},
	} {
		if got := ListFooter(tt.res, tt.col, "stuck shards"); got != tt.want {
			t.Errorf("ListFooter(%s) = %q, want %q", tt.col, got, tt.want)
		}
	}
	if got := MessagesFooter(50, 466); got != "showing 50 of 466 messages of the shard (--limit)" {
		t.Errorf("MessagesFooter = %q", got)
	}
	if got := MessagesFooter(3, 3); got != "" {
		t.Errorf("MessagesFooter(all) = %q", got)
	}
}
