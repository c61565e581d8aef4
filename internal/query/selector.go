package query

import (
	"fmt"
	"time"
)

// The shard selectors, in sql/selector.sql: one definition of "the shards these flags
// select", shared by shards and every bulk repair (reschedule, compact, skip, drain).

// BackoffCap is Sentry's backoff cap in seconds (1 h, PR #51199): a shard whose head row's
// last delay reached it has failed for an hour or more.
const BackoffCap = 3600

// ShardRef names a shard of a --shards-from list.
type ShardRef struct {
	Scope int
	ID    int64
}

// ShardSelector is the criteria of the selector flags. A selector with no criterion
// (HasCriterion false) selects every shard: commands refuse it.
type ShardSelector struct {
	// Stuck keeps the shards in backoff: every row scheduled in the future.
	Stuck bool
	// AtCap keeps the shards whose head row's last delay is at BackoffCap.
	AtCap bool
	Scope *Enum
	// Category keeps the shards holding a row of it (within the added window when set).
	Category *Enum
	// HeadCategory keeps the shards whose head row (lowest id) is of it.
	HeadCategory *Enum
	// AddedAfter and AddedBefore keep the shards holding a row added in [after, before).
	AddedAfter, AddedBefore *time.Time
	MinDepth                int
	// Listed, when not nil, keeps only these shards (--shards-from).
	Listed []ShardRef
	// NotKillswitched (--not-killswitched) leaves out the shards the kill-switch options
	// Sentry reads for the table disable: Excluded is those shards, read from the options
	// when the selection runs (they are decoded in Go: a value may be a pickle).
	NotKillswitched bool
	Excluded        []ShardRef
	// Limit caps the shards selected (0: no cap).
	Limit int
}

// HasCriterion reports whether s narrows the shards at all (Limit alone does not).
func (s ShardSelector) HasCriterion() bool {
	return s.Stuck || s.AtCap || s.Scope != nil || s.Category != nil || s.HeadCategory != nil ||
		s.AddedAfter != nil || s.AddedBefore != nil || s.MinDepth > 0 || s.Listed != nil
}

// Describe is the selector as a plan line reads it ("stuck, scope organization, …").
func (s ShardSelector) Describe() string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if s.Stuck {
		add("stuck")
	}
	if s.AtCap {
		add("at the %d s backoff cap", BackoffCap)
	}
	if s.Scope != nil {
		add("scope %s", s.Scope.Name)
	}
	if s.Category != nil {
		add("holding %s", s.Category.Name)
	}
	if s.HeadCategory != nil {
		add("head row %s", s.HeadCategory.Name)
	}
	if s.AddedAfter != nil {
		add("a row added at or after %s", s.AddedAfter.UTC().Format(time.RFC3339))
	}
	if s.AddedBefore != nil {
		add("a row added before %s", s.AddedBefore.UTC().Format(time.RFC3339))
	}
	if s.MinDepth > 0 {
		add("at least %d rows", s.MinDepth)
	}
	if s.Listed != nil {
		add("one of %d listed shards", len(s.Listed))
	}
	if s.NotKillswitched {
		add("not kill-switched (%d disabled shard(s) left out)", len(s.Excluded))
	}
	if s.Limit > 0 {
		add("the first %d", s.Limit)
	}
	if len(parts) == 0 {
		return "every shard"
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += ", " + p
	}
	return out
}

// SelectedShards lists the shards s selects in key order ([cell,] scope, id), each with its
// depth, head row and earliest schedule (SelectedShard). after, when not nil, starts after
// that shard: a bulk repair's next page.
func SelectedShards(t Target, s ShardSelector, after *ShardRef) Statement {
	args, on := s.args(t)
	if after != nil {
		args["after_scope"] = Arg{Value: after.Scope}
		args["after_shard"] = Arg{Value: after.ID, Note: "the last shard of the previous page"}
		on = append(on, "after")
	}
	if s.Limit > 0 {
		args["limit"] = Arg{Value: s.Limit}
		on = append(on, "limit")
	}
	return sqlStatement("selected-shards", []string{
		"The shards of " + t.Describe() + " selected: " + s.Describe() + ", in key order.",
		"head_category, last_delay_seconds (the backoff step), last_attempt and oldest_message come from",
		"the shard's lowest-id row, which Sentry locks; next_attempt is its earliest scheduled_for.",
	}, t.idents(), args, on...)
}

// args binds the selector's values and returns the fragments it turns on.
func (s ShardSelector) args(t Target) (Args, []string) {
	args := t.cellArgs()
	on := t.controlAndCell()
	if s.Stuck {
		on = append(on, "stuck")
	}
	if s.AtCap {
		args["cap_seconds"] = Arg{Value: BackoffCap, Note: "Sentry's 1 h backoff cap"}
		on = append(on, "at_cap")
	}
	if s.Scope != nil {
		args["scope"] = Arg{Value: s.Scope.Value, Note: s.Scope.Name}
		on = append(on, "scope")
	}
	if s.HeadCategory != nil {
		args["head_category"] = Arg{Value: s.HeadCategory.Value, Note: s.HeadCategory.Name}
		on = append(on, "head_category")
	}
	if s.Category != nil || s.AddedAfter != nil || s.AddedBefore != nil {
		on = append(on, "has_rows")
	}
	if s.Category != nil {
		args["category"] = Arg{Value: s.Category.Value, Note: s.Category.Name}
		on = append(on, "category")
	}
	if s.AddedAfter != nil {
		args["added_after"] = Arg{Value: s.AddedAfter.UTC()}
		on = append(on, "added_after")
	}
	if s.AddedBefore != nil {
		args["added_before"] = Arg{Value: s.AddedBefore.UTC()}
		on = append(on, "added_before")
	}
	if s.MinDepth > 0 {
		args["min_depth"] = Arg{Value: s.MinDepth}
		on = append(on, "min_depth")
	}
	if s.Listed != nil {
		scopes, ids := make([]int64, len(s.Listed)), make([]int64, len(s.Listed))
		for i, r := range s.Listed {
			scopes[i], ids[i] = int64(r.Scope), r.ID
		}
		args["listed_scopes"] = Arg{Value: scopes, Note: "--shards-from"}
		args["listed_ids"] = Arg{Value: ids}
		on = append(on, "listed")
	}
	if s.NotKillswitched {
		scopes, ids := make([]int64, len(s.Excluded)), make([]int64, len(s.Excluded))
		for i, r := range s.Excluded {
			scopes[i], ids[i] = int64(r.Scope), r.ID
		}
		args["excluded_scopes"] = Arg{Value: scopes, Note: "--not-killswitched: the disabled shards, read from the options table when run"}
		args["excluded_ids"] = Arg{Value: ids}
		on = append(on, "excluded")
	}
	return args, on
}

// SelectedShard is a row of SelectedShards.
type SelectedShard struct {
	Cell             *string   `db:"cell"`
	Scope            int       `db:"shard_scope"`
	ID               int64     `db:"shard_identifier"`
	Depth            int64     `db:"depth"`
	HeadID           int64     `db:"head_id"`
	HeadCategory     int       `db:"head_category"`
	LastDelaySeconds float64   `db:"last_delay_seconds"`
	LastAttempt      time.Time `db:"last_attempt"`
	OldestMessage    time.Time `db:"oldest_message"`
	NextAttempt      time.Time `db:"next_attempt"`
}

// Ref is the shard's key.
func (s SelectedShard) Ref() ShardRef { return ShardRef{Scope: s.Scope, ID: s.ID} }
