package report

import (
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestScheduleAndFractionCellsAreTyped: a result's scheduled_for and next_attempt become
// render.Due and its progress render.Ratio, so a terminal reads "due now" and "30.8%"; other
// times, NULLs and numbers stay as they are.
func TestScheduleAndFractionCellsAreTyped(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	res := &query.Result{Columns: []string{"scheduled_for", "next_attempt", "date_added", "progress", "depth"},
		Rows: [][]any{{at, nil, at, 0.308, 0.5}}}
	got := table(enums.Builtin(), res).Rows[0]
	want := []any{render.Due(at), nil, at, render.Ratio(0.308), 0.5}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: %#v, want %#v", res.Columns[i], got[i], want[i])
		}
	}
	if s := render.Due(at).String(); s != "2026-11-30T12:00:00.000000000Z" {
		t.Errorf("Due.String() = %q", s)
	}
}

// TestMessageRowsCarryHandlerNames: a message row (it has a payload) gets the handler
// document's shard_scope_name beside the older "scope", both machine-only names of the
// same integer; a shard listing (no payload) does not.
func TestMessageRowsCarryHandlerNames(t *testing.T) {
	t.Parallel()
	reg := enums.Builtin()
	msg := table(reg, &query.Result{Columns: []string{"id", "shard_scope", "payload"}, Rows: [][]any{{int64(1), int64(1), `{"a":1}`}}})
	if got := strings.Join(msg.Columns, ","); got != "id,shard_scope,scope,payload,shard_scope_name" ||
		msg.Rows[0][4] != "USER_SCOPE" || msg.Rows[0][3] != render.JSONText(`{"a":1}`) || !msg.MachineOnly["shard_scope_name"] {
		t.Errorf("message columns %s, row %#v", got, msg.Rows[0])
	}
	raw := table(reg, &query.Result{Columns: []string{"payload"}, Rows: [][]any{{[]byte(`{"b":2}`)}}})
	if raw.Rows[0][0] != render.JSONText(`{"b":2}`) {
		t.Errorf("a jsonb payload as bytes: %#v", raw.Rows[0][0])
	}
	shards := table(reg, &query.Result{Columns: []string{"shard_scope", "depth"}})
	if got := strings.Join(shards.Columns, ","); got != "shard_scope,scope,depth" {
		t.Errorf("shard columns %s", got)
	}
}
