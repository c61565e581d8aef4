package query

import (
	"fmt"
	"strings"
	"time"
)

// The drain statements (reference §3.4–3.7), in sql/drain.sql; the psql drain script in
// sql/drain.psql. They take the shard key like the diagnostics and, where a drain is
// bounded, a watermark: rows above it are never touched.

// watermarkArg binds the drain's watermark and turns its fragment on, when it is set.
func watermarkArg(args Args, on []string, wm int64) []string {
	if wm > 0 {
		args["watermark"] = Arg{Value: wm, Note: "the highest id in the plan"}
		on = append(on, "watermark")
	}
	return on
}

// drainArgs are the shard's key and the cell filter (the drain never selects the control
// silo's cell column: shardArgs' control fragment is not one of its statements').
func (t Target) drainArgs(k ShardKey) (Args, []string) {
	args := t.cellArgs()
	args["scope"] = Arg{Value: k.Scope.Value, Note: k.Scope.Name}
	args["shard"] = Arg{Value: k.ID}
	return args, t.cellFragment()
}

// DrainHead locks the shard's lowest row without waiting (Sentry's task path: SELECT … ORDER
// BY id LIMIT 1 FOR UPDATE NOWAIT). SQLSTATE 55P03 means another drainer holds the shard.
//
// after is a hint, never a bound on what is drained: every row at or below it is known to
// belong to a group already delivered, so the index scan can start above the entries that
// those deletes left dead. A drain confirms emptiness without it.
func DrainHead(t Target, k ShardKey, wm, after int64) Statement {
	args, on := t.drainArgs(k)
	on = watermarkArg(args, on, wm)
	if after > 0 {
		args["after"] = Arg{Value: after, Note: "below: groups already delivered"}
		on = append(on, "after")
	}
	return sqlStatement("drain-head", []string{"Lock the shard's lowest row without waiting (claims the shard)."}, t.idents(), args, on...)
}

// DrainClaim is the claim of Sentry's prepare_next_from_shard: push the whole shard's
// schedule forward before processing ("proof of failure by remaining"): next = now +
// min(2 × last delay, 1 h), where the last delay is the lowest row's scheduled_for −
// scheduled_from, at least one second. It returns every row's schedule from before the claim,
// so that a drain whose handler is unreachable can put the shard back exactly as it was, and
// an archive can keep the rows as they were before outboxctl touched them.
func DrainClaim(t Target, k ShardKey, headFrom, headFor time.Time) Statement {
	args, on := t.drainArgs(k)
	args["head_for"] = Arg{Value: headFor}
	args["head_from"] = Arg{Value: headFrom}
	return sqlStatement("drain-claim", []string{"Apply the backoff to every row of the shard before processing it; return the schedules it replaced."}, t.idents(), args, on...)
}

// PlanCap bounds what a drain's plan counts in each category: its rows, and its coalesce
// groups, up to PlanCap each (more reads as "at least PlanCap"), so that the plan read before
// the claim costs what the cap allows rather than what the shard holds.
const PlanCap = 10_000

// DrainPlanCategories is the drain's plan: each category of the shard with its rows and
// coalesce groups counted up to PlanCap (depth_at_least, groups_at_least: the cap was met).
func DrainPlanCategories(t Target, k ShardKey) Statement {
	args, on := t.drainArgs(k)
	args["cap"] = Arg{Value: int64(PlanCap), Note: "each count stops here"}
	return sqlStatement("drain-plan-categories", []string{
		fmt.Sprintf("The categories of shard %s/%d in %s, their rows and coalesce groups counted up to %d each.", k.Scope.Name, k.ID, t.Describe(), PlanCap),
		"*_at_least = true: the count stopped at the cap (inspect shard counts them all).",
	}, t.idents(), args, on...)
}

// DrainUnclaim puts back the schedules a claim replaced, on the rows that still carry the
// claim's values (a row that was drained, re-claimed or rescheduled meanwhile is left alone).
// Times travel as microseconds since the epoch: exact, and one integer array per column.
func DrainUnclaim(t Target, k ShardKey, ids, fromMicros, forMicros []int64, claimedFrom, claimedFor time.Time) Statement {
	args, on := t.drainArgs(k)
	args["ids"] = Arg{Value: ids}
	args["from_us"] = Arg{Value: fromMicros}
	args["for_us"] = Arg{Value: forMicros}
	args["claimed_from"] = Arg{Value: claimedFrom, Note: "what the claim wrote"}
	args["claimed_for"] = Arg{Value: claimedFor}
	return sqlStatement("drain-unclaim", []string{"Put the shard's schedule back as it was before the claim."}, t.idents(), args, on...)
}

// DrainNewest reads the newest row of a coalesce group (its payload is the one delivered).
// It has no watermark: Sentry delivers select_coalesced_messages().last(), the group's newest
// row, even in its bounded synchronous path; the bound decides which groups are visited, not
// which row of a group is delivered.
func DrainNewest(t Target, k ShardKey, category int, object int64) Statement {
	args, on := t.drainArgs(k)
	args["category"] = Arg{Value: category}
	args["object"] = Arg{Value: object}
	return sqlStatement("drain-newest", []string{"The newest row of the coalesce group: the one delivered."}, t.idents(), args, on...)
}

// DrainDuplicateSlice is Sentry's duplicate scan: 50 ids of the group, in no order; the
// caller keeps those below the delivered id.
func DrainDuplicateSlice(t Target, k ShardKey, category int, object int64) Statement {
	args, on := t.drainArgs(k)
	args["category"] = Arg{Value: category}
	args["object"] = Arg{Value: object}
	return sqlStatement("drain-duplicates", []string{"Up to 50 ids of the coalesce group (Sentry: no ORDER BY)."}, t.idents(), args, on...)
}

// DrainDeleteIDs deletes rows by id and returns the ids it deleted (an archive's commit
// marker names exactly those).
func DrainDeleteIDs(t Target, ids []int64) Statement {
	return sqlStatement("drain-delete", []string{"Delete delivered or superseded rows by id."}, t.tableIdent(), Args{"ids": {Value: ids}})
}

// DrainNext is one iteration's reads in one statement: the shard's head (its lowest row at or
// below the watermark), and the newest row of the head's coalesce group (no watermark: the
// row Sentry delivers) with how many rows that group holds. Run before every delivery of a
// batch, it sees every row committed since, a late-committing lower id included, exactly
// as Sentry's per-iteration reads do.
//
// With prev set, the same statement first deletes (a chunk of) the previous message's group
// up to its delivered row, and the head it reads leaves those rows out (a statement does not
// see its own deletes): one round trip per message. deleted says how many rows went; a full
// chunk means the caller deletes the rest.
func DrainNext(t Target, k ShardKey, wm int64, prev *GroupUpTo) Statement {
	args, on := t.drainArgs(k)
	on = watermarkArg(args, on, wm)
	if prev != nil {
		args["prev_category"] = Arg{Value: prev.Category, Note: "the group just delivered"}
		args["prev_object"] = Arg{Value: prev.Object}
		args["prev_up_to"] = Arg{Value: prev.UpTo}
		args["chunk"] = Arg{Value: DeleteChunk}
		on = append(on, "prev")
	}
	return sqlStatement("drain-next", []string{"Delete the group just delivered; read the shard's head and the newest row of its group: the next message."}, t.idents(), args, on...)
}

// GroupUpTo is a coalesce group and the delivered id its rows are deleted up to.
type GroupUpTo struct {
	Category int
	Object   int64
	UpTo     int64
}

// DeleteChunk is the most rows one delete statement of a drain removes: a hot group of
// millions of rows is deleted in statements that each finish well inside the statement
// timeout (Sentry moved to slices for the same reason, PR #63890).
const DeleteChunk = 10000

// DrainDeleteGroupChunk deletes up to DeleteChunk rows of one coalesce group up to the
// delivered id; the caller repeats it until it deletes fewer.
func DrainDeleteGroupChunk(t Target, k ShardKey, category int, object, upTo int64) Statement {
	args, on := t.drainArgs(k)
	args["category"] = Arg{Value: category}
	args["object"] = Arg{Value: object}
	args["up_to"] = Arg{Value: upTo, Note: "the delivered row"}
	args["chunk"] = Arg{Value: DeleteChunk}
	return sqlStatement("drain-delete-group-chunk", []string{"Delete the delivered group up to the delivered row, a chunk at a time."}, t.idents(), args, on...)
}

// DrainArchiveRows reads, whole, the rows of the given groups up to each id (below it when
// below is set), to archive them before they are deleted without delivery.
func DrainArchiveRows(t Target, k ShardKey, categories, objects, upTo []int64, below bool) Statement {
	args, on := t.drainArgs(k)
	args["categories"] = Arg{Value: categories}
	args["objects"] = Arg{Value: objects}
	args["up_to"] = Arg{Value: upTo}
	on = append(on, t.controlFragments()...)
	if below {
		on = append(on, "below")
	}
	return sqlStatement("drain-archive-rows", []string{"The rows about to be deleted without delivery, whole, for the archive."}, t.idents(), args, on...)
}

// ShardMaxID reads the shard's highest id: the watermark a drain's plan is bounded by.
func ShardMaxID(t Target, k ShardKey) Statement {
	args, on := t.drainArgs(k)
	return sqlStatement("shard-max-id", []string{"The shard's highest id: the drain never touches rows above it (unless --follow)."}, t.idents(), args, on...)
}

// ShardMaxIDs reads the highest id of each shard of scopes[i]/ids[i] (ShardMaxIDRow): the
// watermarks of drain SELECTORS, read at planning time.
func ShardMaxIDs(t Target, scopes []int, ids []int64) Statement {
	return sqlStatement("shard-max-ids", []string{"Each listed shard's highest id: a parallel drain never touches rows above it (unless --follow)."}, t.idents(), listedArgs(t, scopes, ids), t.cellFragment()...)
}

// ShardDepthsListed counts the rows of each shard of scopes[i]/ids[i] (ListedDepthRow): what
// a parallel drain left, read once for every shard.
func ShardDepthsListed(t Target, scopes []int, ids []int64) Statement {
	return sqlStatement("shard-depths-listed", []string{"The depth of each listed shard after the drain."}, t.idents(), listedArgs(t, scopes, ids), t.cellFragment()...)
}

// ListedDepthRow is a row of ShardDepthsListed.
type ListedDepthRow struct {
	Scope int   `db:"shard_scope"`
	ID    int64 `db:"shard_identifier"`
	Depth int64 `db:"depth"`
}

// listedArgs binds @scopes and @ids (the shards scopes[i]/ids[i]) and the target's @cell.
func listedArgs(t Target, scopes []int, ids []int64) Args {
	args := t.cellArgs()
	sc := make([]int64, len(scopes))
	for i, s := range scopes {
		sc[i] = int64(s)
	}
	args["scopes"] = Arg{Value: sc}
	args["ids"] = Arg{Value: ids}
	return args
}

// ShardCategoryCounts counts the rows and coalesce groups of the shards of scopes[i]/ids[i]
// per scope and category (BulkCountRow): drain SELECTORS' plan.
func ShardCategoryCounts(t Target, scopes []int, ids []int64) Statement {
	return sqlStatement("shard-category-counts", []string{"The rows and coalesce groups a parallel drain would deliver and delete, per scope and category."}, t.idents(), listedArgs(t, scopes, ids), t.cellFragment()...)
}

// ShardMaxIDRow is a row of ShardMaxIDs.
type ShardMaxIDRow struct {
	Scope int   `db:"shard_scope"`
	ID    int64 `db:"shard_identifier"`
	MaxID int64 `db:"max_id"`
}

// DrainScript is one drain iteration for a DBA to run in psql (its transaction opened by
// preamble, db.WritePreamble's), in two runs, so that nothing
// is ever deleted that nobody delivered:
//
//   - run as printed, it only reads: the shard's head, the newest row of its coalesce group
//     (the payload to deliver) and the command for the second run;
//   - run again with -v delivered=ID after delivering that row, it locks the head (NOWAIT,
//     like Sentry's task path), checks that ID is still the newest row of the head's group
//     (a newer row means a newer payload to deliver first), deletes the group up to ID and
//     commits, all in one transaction.
//
// psql's \gset carries values between statements; :'delivered' is quoted by psql as a
// literal and cast, so whatever the DBA passes stays data.
func DrainScript(t Target, k ShardKey, preamble []string) (string, error) {
	head, err := DrainHead(t, k, 0, 0).Render()
	if err != nil {
		return "", err
	}
	args, on := t.drainArgs(k)
	peek, err := sqlStatement("drain-peek-head", []string{"The shard's head: the lowest row, the one Sentry is blocked on (read only)."},
		t.idents(), args, on...).Render()
	if err != nil {
		return "", err
	}
	newest := sqlStatement("drain-newest-of-head", []string{"The newest row of the head's coalesce group: the one to deliver.",
		"The payload is shown as a JSON string, so no byte of it reaches the terminal raw."}, t.idents(), args, on...)
	newest.Name = "drain-newest"
	newestSQL, err := newest.Render()
	if err != nil {
		return "", err
	}
	delSQL, err := sqlStatement("drain-delete-group", []string{"The delivered row and the older rows of its group: delete them."},
		t.idents(), args, on...).Render()
	if err != nil {
		return "", err
	}
	// Each region is a printed statement whose ";" psql's \gset takes the place of.
	gset := func(sql string) string { return strings.TrimSuffix(strings.TrimRight(sql, "\n"), ";") }
	pre, err := Preamble(preamble).Render()
	if err != nil {
		return "", err
	}
	script, err := FillScript("drain-script", map[string]string{
		"preamble": strings.TrimRight(pre, "\n"), "head": gset(head), "newest": gset(newestSQL), "peek": gset(peek), "delete": strings.TrimRight(delSQL, "\n"),
	})
	if err != nil {
		return "", err
	}
	return script + "\n", nil
}

// CoalescedCap bounds the ids a handler document lists per group (the count is exact).
const CoalescedCap = 100

// DrainCoalesced counts, per group, the rows waiting in it (an index-only count on the
// (…, category, object_identifier) index) and, with ids, lists its first ids up to each
// group's delivered id (which reads every row: opt-in, --coalesced-ids).
func DrainCoalesced(t Target, k ShardKey, categories, objects, upTo []int64, ids bool) Statement {
	args, on := t.drainArgs(k)
	args["categories"] = Arg{Value: categories}
	args["objects"] = Arg{Value: objects}
	args["up_to"] = Arg{Value: upTo}
	if ids {
		args["cap"] = Arg{Value: CoalescedCap}
		on = append(on, "ids")
	}
	return sqlStatement("drain-coalesced", []string{"How many rows each delivery stands for (and, opt-in, their first ids)."}, t.idents(), args, on...)
}
