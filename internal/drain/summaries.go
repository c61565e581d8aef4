package drain

import (
	"encoding/json"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The summaries the repairs print (reschedule, compact, skip, restore): their json tags are
// the cards' JSON keys (render.FieldsOf builds the card, internal/contract the schema).

// Count is a summary's count that a COMMIT in doubt may leave unknown (N nil): JSON null,
// "unknown" to a person (CountFields), never a 0.
type Count struct{ N *int64 }

// CardFields are the card's fields of the count under key.
func (c Count) CardFields(key string) []render.Field { return CountFields(key, c.N) }

// MarshalJSON writes the count, or null while it is unknown.
func (c Count) MarshalJSON() ([]byte, error) {
	if c.N == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*c.N)
}

// Settled is a repair's count n and its in_doubt text after outcome, the settle of a COMMIT
// that got no answer ("" when the COMMIT answered): a COMMIT found not committed changed
// nothing (0), one still in doubt has no count.
func Settled(n int64, outcome Settlement) (Count, string) {
	switch outcome {
	case "":
		return Count{N: &n}, ""
	case Unsettled:
		return Count{}, string(outcome)
	case NotCommitted:
		n = 0
	case Committed:
	}
	return Count{N: &n}, string(outcome)
}

// RescheduleSummary is reschedule's card. JSON keeps the schedule's time after (Sentry's
// THE_PAST, next_attempt_after); a person reads what it means (next_attempt: "due now").
// A state that could not be read after the change is "unknown".
type RescheduleSummary struct {
	Shard string `json:"shard"`
	// Mode is which rows were rewritten: all-rows, or group-heads (each coalesce group's lowest).
	Mode              string `json:"mode"`
	Rows              Count  `json:"rows"`
	InDoubt           string `json:"in_doubt,omitempty"`
	NextAttemptBefore any    `json:"next_attempt_before"`
	NextAttemptAfter  any    `json:"next_attempt_after" render:"machine"`
	NextAttempt       any    `json:"next_attempt" render:"human"`
	// Next are the commands to run next (inspect the shard).
	Next render.Commands `json:"next"`
}

// StateAfter is a shard's state after compact or skip removed rows, and what to run next: the
// depth, the head row (null once empty), the next attempt, what became of the backoff
// (made due now when the head row went, unless --keep-backoff), the next commands and the
// undo (restore FILE --operation ID). A state that could not be read is "unknown".
type StateAfter struct {
	DepthAfter       any    `json:"depth_after"`
	HeadAfter        any    `json:"head_after"`
	NextAttemptAfter any    `json:"next_attempt_after"`
	Backoff          string `json:"backoff"`
}

// NextSteps are a repair summary's last fields: the next commands and the undo.
type NextSteps struct {
	Next render.Commands `json:"next"`
	Undo string          `json:"undo,omitempty"`
}

// CompactSummary is compact's card: depth_after is "unknown" when it could not be read.
type CompactSummary struct {
	Shard       string `json:"shard"`
	DepthBefore int64  `json:"depth_before"`
	Deleted     Count  `json:"deleted"`
	InDoubt     string `json:"in_doubt,omitempty"`
	StateAfter
	Archive string `json:"archive"`
	// ArchiveBytes is what the run wrote to the archive, as stored (compressed when the file
	// is): beside the plan's estimate, for a program (#40); a person's card does not show it.
	ArchiveBytes int64  `json:"archive_bytes" render:"machine"`
	Operation    string `json:"operation"`
	NextSteps
}

// SkipSummary is skip's card.
type SkipSummary struct {
	Message int64  `json:"message"`
	Shard   string `json:"shard"`
	Deleted Count  `json:"deleted"`
	InDoubt string `json:"in_doubt,omitempty"`
	StateAfter
	Archive   string `json:"archive"`
	Operation string `json:"operation"`
	NextSteps
}

// RestoreSummary is restore's card: operations is the restored operations' ids, comma
// separated.
type RestoreSummary struct {
	Archive    string `json:"archive"`
	Operations string `json:"operations"`
	Inserted   int64  `json:"inserted"`
	Skipped    int64  `json:"skipped"`
	// Next is what to run next (doctor's stuck check: the rows are back at their heads).
	Next render.Commands `json:"next"`
	// CommittedUnmarked counts the rows of batches with no commit marker that restore found
	// committed (every row the batch staged gone from the table) and so restored.
	CommittedUnmarked int `json:"committed_unmarked"`
	// LeftOut names each row restore did not put back though the table lacks it, with why
	// (the exit is then 6).
	LeftOut []LeftOutRow `json:"left_out" render:"machine"`
}

// SkipTarget is the message skip deletes with its coalesce group: its shard (the target
// narrowed to the message's cell in the control silo), category, object, the group's row
// count and newest id.
type SkipTarget struct {
	Target   query.Target
	Shard    query.ShardKey
	Category int
	Object   int64
	Rows     int64
	Newest   int64
	// Head is whether the message is its shard's head row; Backoff whether the shard waits
	// in backoff (the head's scheduled_for ahead of now), so the head has been attempted.
	Head, Backoff bool
}

// SkipTargetOf reads skip's target from query.Message's result (read by name into
// query.MessageRow); found is false when no row has the id. reg names the scope.
func SkipTargetOf(t query.Target, msg *query.Result, reg *enums.Registry) (sk SkipTarget, found bool, err error) {
	rows, err := query.Rows[query.MessageRow](msg)
	if err != nil || len(rows) == 0 {
		return sk, false, err
	}
	r := rows[0]
	sk = SkipTarget{Target: t, Category: int(r.Category), Object: r.ObjectID, Rows: r.GroupRows, Newest: r.NewestID,
		Head: r.IsHead, Backoff: r.IsHead && r.ScheduledFor.After(time.Now()),
		Shard: query.ShardKey{Scope: query.Enum{Value: int(r.ShardScope), Name: reg.ScopeName(int(r.ShardScope))}, ID: r.ShardIdentifier}}
	if t.Control() {
		if cell := query.Deref(r.RegionName) + query.Deref(r.CellName); cell != "" {
			sk.Target.Cell = cell
		}
	}
	return sk, true, nil
}
