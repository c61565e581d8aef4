package query

import (
	"time"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// The statements of the bulk repairs (reschedule, skip --category, compact over a selector),
// in sql/bulk.sql. Each works on the shards of its shards argument: ShardBatch (one batch,
// what outboxctl runs) or SelectedShards (every selected shard: the printed form).

// ShardBatch is one batch of a bulk repair: the shards as two bound arrays.
func ShardBatch(refs []ShardRef) Statement {
	scopes, ids := make([]int64, len(refs)), make([]int64, len(refs))
	for i, r := range refs {
		scopes[i], ids[i] = int64(r.Scope), r.ID
	}
	return sqlStatement("shard-batch", nil, nil, Args{"scopes": {Value: scopes}, "ids": {Value: ids}})
}

// withShards fills statement name's shards region with shards' text and merges its values.
func withShards(name string, doc []string, t Target, shards Statement, args Args, on ...string) Statement {
	region, err := shards.region()
	for k, v := range shards.Args {
		if _, ok := args[k]; !ok {
			args[k] = v
		}
	}
	st := regionStatement(name, doc, t.idents(), map[string]sqltemplate.Part{"shards": region}, args, on...)
	if err != nil && st.err == nil {
		st.err = err
	}
	return st
}

// BulkReschedule makes every shard of shards whose head row it can lock due now with a fresh
// backoff (what Reschedule does for one, in mode), skipping those a drainer holds; one
// BulkShardRow per shard, rows the rows it rewrote.
func BulkReschedule(t Target, shards Statement, mode RescheduleMode, why Why) Statement {
	rows := "rows get"
	if mode == RescheduleGroupHeads {
		rows = "the lowest row of each coalesce group gets (--group-heads)"
	}
	return why.Mark(withShards("bulk-reschedule", []string{
		"Make the selected shards of " + t.Describe() + " due now with a fresh backoff: " + rows,
		"scheduled_for = THE_PAST (2016-08-01), as a new row has. A shard whose head row a drainer",
		"holds is skipped (SKIP LOCKED, being_drained); outboxctl runs this one batch of shards per transaction.",
	}, t, shards, t.cellArgs(), mode.on(t.cellFragment())...))
}

// BulkMakeDue is BulkReschedule for the shards a skip or compact removed the head row of:
// their rows that do not carry THE_PAST already get it (a row that does is what the
// reschedule would make it); one BulkShardRow per shard, rows the rows it changed.
func BulkMakeDue(t Target, shards Statement, why Why) Statement {
	return why.Mark(withShards("bulk-reschedule", []string{
		"Make due now the shards whose head row was just removed (their backoff was earned by it): rows that",
		"do not carry THE_PAST (2016-08-01) get it. A shard whose new head a drainer holds is skipped.",
	}, t, shards, t.cellArgs(), append(t.cellFragment(), "not_due")...))
}

// BulkLockHeads locks the head row of each shard of shards for the transaction, skipping
// those a drainer holds; one BulkHeadRow per shard (rows 0).
func BulkLockHeads(t Target, shards Statement) Statement {
	return withShards("bulk-lock-heads", []string{
		"Lock the head row of each shard of the batch, skipping those a drainer holds (being_drained).",
	}, t, shards, t.cellArgs(), t.cellFragment()...)
}

// BulkSkipRows lists, whole, the rows skip --category archives and deletes in shards: every
// coalesce group of category with a row added in [after, before) (nil: unbounded), up to its
// highest such row.
func BulkSkipRows(t Target, shards Statement, category Enum, after, before *time.Time, why Why) Statement {
	return BulkSkip{Target: t, Category: category, After: after, Before: before, Why: why}.Rows(shards)
}

// BulkSkip is what skip --category removes, before the shards are known: Rows is its
// statement over a batch's shards (BulkSkipRows), a method value the bulk run calls as it
// reaches each batch.
type BulkSkip struct {
	Target        Target
	Category      Enum
	After, Before *time.Time
	Why           Why
}

// Rows is BulkSkipRows of s over shards.
func (s BulkSkip) Rows(shards Statement) Statement {
	t := s.Target
	args := t.cellArgs()
	args["category"] = Arg{Value: s.Category.Value, Note: s.Category.Name}
	on := append(t.controlFragments(), t.cellFragment()...)
	if s.After != nil {
		args["added_after"] = Arg{Value: s.After.UTC()}
		on = append(on, "added_after")
	}
	if s.Before != nil {
		args["added_before"] = Arg{Value: s.Before.UTC()}
		on = append(on, "added_before")
	}
	return s.Why.Mark(withShards("bulk-skip-rows", []string{
		"The rows skip --category " + s.Category.Name + " archives, then deletes: in every coalesce group of the",
		"category with a matching row, every row up to the group's highest matching id.",
	}, t, shards, args, on...))
}

// BulkSuperseded lists, whole, the rows compact archives and deletes in shards: each coalesce
// group's rows below its newest id.
func BulkSuperseded(t Target, shards Statement, why Why) Statement {
	return why.Mark(withShards("bulk-superseded", []string{
		"Rows compact deletes undelivered in the selected shards: each coalesce group's rows below its newest id.",
	}, t, shards, t.cellArgs(), append(t.controlFragments(), t.cellFragment()...)...))
}

// BulkShardRow is a row of BulkReschedule and BulkLockHeads: what became of one shard.
type BulkShardRow struct {
	Scope        int   `db:"shard_scope"`
	ID           int64 `db:"shard_identifier"`
	Empty        bool  `db:"empty"`
	BeingDrained bool  `db:"being_drained"`
	Rows         int64 `db:"rows"`
}

// BulkHeadRow is a row of BulkLockHeads: a BulkShardRow and the shard's head row id (nil
// when the shard is empty).
type BulkHeadRow struct {
	Scope        int    `db:"shard_scope"`
	ID           int64  `db:"shard_identifier"`
	Empty        bool   `db:"empty"`
	BeingDrained bool   `db:"being_drained"`
	Rows         int64  `db:"rows"`
	HeadID       *int64 `db:"head_id"`
}

// Shard is the row as a BulkShardRow.
func (h BulkHeadRow) Shard() BulkShardRow {
	return BulkShardRow{Scope: h.Scope, ID: h.ID, Empty: h.Empty, BeingDrained: h.BeingDrained, Rows: h.Rows}
}

// BulkGroupHeads lists the coalesce groups of shards, one row each: what a --group-heads
// reschedule rewrites (one row a group), for BulkCount.
func BulkGroupHeads(t Target, shards Statement) Statement {
	return withShards("bulk-group-heads", []string{
		"The coalesce groups of the selected shards, one row each: reschedule --group-heads rewrites each group's lowest row.",
	}, t, shards, t.cellArgs(), t.cellFragment()...)
}

// BulkCount counts, per scope and category, the rows and coalesce groups rows (a bulk skip's
// or compact's statement over the selection) lists: the plan's counts.
func BulkCount(rows Statement) Statement {
	region, err := rows.region()
	st := regionStatement("bulk-count", []string{"The rows and coalesce groups the repair would archive and delete, per scope and category."},
		nil, map[string]sqltemplate.Part{"rows": region}, rows.Args)
	if err != nil && st.err == nil {
		st.err = err
	}
	return st
}

// BulkCountRow is a row of BulkCount.
type BulkCountRow struct {
	Scope    int   `db:"shard_scope"`
	Category int   `db:"category"`
	Rows     int64 `db:"rows"`
	Groups   int64 `db:"groups"`
	Shards   int64 `db:"shards"`
}
