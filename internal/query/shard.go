package query

import (
	"fmt"
	"sort"
	"time"
)

// The statements of inspect shard, in sql/shard.sql.

// ShardKey names one shard: scope and identifier (and, in the control silo, the cell, which
// Target.Cell supplies when set).
type ShardKey struct {
	Scope Enum
	ID    int64
}

// shardArgs binds the shard's key (and the cell, when --cell is set) and returns the
// fragments a statement of one shard turns on.
func (t Target) shardArgs(k ShardKey) (Args, []string) {
	args := t.cellArgs()
	args["scope"] = Arg{Value: k.Scope.Value, Note: k.Scope.Name}
	args["shard"] = Arg{Value: k.ID}
	return args, t.controlAndCell()
}

// ShardState answers "what is this shard waiting for?": its depth, its earliest
// scheduled_for, and the lowest-id row Sentry locks and computes the backoff from. The head
// row is one probe of the (…, id) index; depth and next attempt are one index-only pass over
// the narrow (…, scheduled_for) index, so a 200,000-row shard costs milliseconds, not a read
// of every row. In the control silo there is one head row per cell.
func ShardState(t Target, k ShardKey) Statement { return shardState(t, k, nil) }

// ShardStateGivenDepth is ShardState for a caller that has already counted the shard in the
// same snapshot (inspect shard reads shard-categories first, whose depths sum to the shard's):
// the depth is bound, not counted again, and the next attempt is one probe of the
// (…, scheduled_for) index. On a 200,000-row shard the count is a pass over every index
// entry (15–20 ms here), the whole of this statement's cost. depth maps each cell to its
// depth in the control silo, and "" to the shard's in the cell silo; a cell it does not name
// has depth 0.
func ShardStateGivenDepth(t Target, k ShardKey, depth map[string]int64) Statement {
	if depth == nil {
		depth = map[string]int64{}
	}
	return shardState(t, k, depth)
}

// CategoryDepthSums sums the depth column of a shard-categories result per cell (the key "" in
// the cell silo), for ShardStateGivenDepth. A depth that is not an integer is an error, never
// a silent 0: the sum is printed as the shard's depth.
func CategoryDepthSums(t Target, categories *Result) (map[string]int64, error) {
	type depthRow struct {
		Depth int64  `db:"depth"`
		Cell  string `db:"cell,optional"` // the control silo's cell column, renamed
	}
	res := categories
	if t.Control() {
		var err error
		if res, err = categories.ColumnAs(t.CellColumnName(), "cell"); err != nil {
			return nil, err
		}
	}
	rows, err := Rows[depthRow](res)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Cell] += r.Depth
	}
	return out, nil
}

func shardState(t Target, k ShardKey, given map[string]int64) Statement {
	args, on := t.shardArgs(k)
	// One head row per cell in the control silo: DISTINCT ON keeps each cell's lowest id.
	args["limit"] = Arg{Value: 1}
	if t.Control() {
		args["limit"] = Arg{Value: 1000}
	}
	doc := []string{
		fmt.Sprintf("Backoff state of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
		"head_* = the lowest-id row: Sentry locks it to claim the shard and derives the next delay",
		"from it (next = now + min(2 × last_delay_seconds, 3600 s)). due = false means the shard waits",
		"until next_attempt; a new row makes it due at once (new rows are scheduled in 2016).",
	}
	switch {
	case given == nil:
		on = append(on, "counted")
	case !t.Control():
		args["depth"] = Arg{Value: given[""], Note: "rows of the shard: the sum of shard-categories' depth"}
	default:
		cells := make([]string, 0, len(given))
		for c := range given {
			cells = append(cells, c)
		}
		sort.Strings(cells)
		depths := make([]int64, len(cells))
		for i, c := range cells {
			depths[i] = given[c]
		}
		args["cells"] = Arg{Value: cells}
		args["depths"] = Arg{Value: depths, Note: "rows per cell: the sums of shard-categories' depth"}
	}
	if given != nil {
		doc = append(doc, "depth is given: shard-categories counted the shard in the same snapshot.")
	}
	return sqlStatement("shard-state", doc, t.idents(), args, on...)
}

// ShardCategories answers "what is in this shard?": depth per category (Sentry's
// get_shard_category_breakdown) with coalesce groups and ages. The categories are walked on
// the (…, category, object_identifier) index, one probe each; each category's depth and
// groups are an index-only range of that index, already in group order (no sort, no heap);
// its ages are one probe at each end of the (…, id) index: the category's lowest-id and
// highest-id rows (ids and date_added grow together). The walk also keeps the planner's
// estimates small, so it never pays for JIT compilation.
func ShardCategories(t Target, k ShardKey) Statement {
	args, on := t.shardArgs(k)
	return sqlStatement("shard-categories", []string{
		fmt.Sprintf("Per-category depth of shard %s/%d in %s.", k.Scope.Name, k.ID, t.Describe()),
		"coalesce_groups = distinct objects: the deliveries left for that category.",
		"oldest_message / newest_message = date_added of the category's lowest-id / highest-id row.",
	}, t.idents(), args, on...)
}

// GroupCap bounds the per-message coalesce group count of ShardMessages unless exact: a
// count of GroupCap means "at least GroupCap".
const GroupCap = 100

// ShardMessages answers "which messages wait in this shard?", newest first, each marked with
// its coalesce group: delivers = true for the row Sentry would deliver (the newest of its
// group, whose payload wins); false rows are superseded and will be deleted undelivered.
// The shard's head (its lowest row: the one Sentry locks and is blocked on) always comes
// first, marked head = true, even when it is older than the page.
// The page is read first from the (…, id) index; "is there a newer row in my group" then
// looks only at rows newer than the message (fewer than the page size), and the group size
// is counted up to GroupCap on the (…, category, object_identifier) index unless exact.
func ShardMessages(t Target, k ShardKey, limit int, exact bool) Statement {
	return ShardMessagesOrdered(t, k, limit, exact, false)
}

// ShardMessagesOrdered is ShardMessages, the page taken from the oldest rows when oldest is
// set (--order oldest). Rows far from the shard's newest end (the head, an oldest page) ask
// "is there a newer row in my group" of the group's own index instead of walking every
// newer row of the shard.
func ShardMessagesOrdered(t Target, k ShardKey, limit int, exact, oldest bool) Statement {
	args, on := t.shardArgs(k)
	args["limit"] = Arg{Value: limitOrDefault(limit)}
	countDoc := "group_rows = rows sharing (category, object_identifier)."
	if !exact {
		args["group_cap"] = Arg{Value: GroupCap, Note: "count at most this many"}
		on = append(on, "capped")
		countDoc = fmt.Sprintf("group_rows = rows sharing (category, object_identifier), counted up to %d (%d means at least).", GroupCap, GroupCap)
	}
	order := "oldest"
	if !oldest {
		order = "newest"
		on = append(on, "newest")
	}
	return sqlStatement("shard-messages", []string{
		fmt.Sprintf("Messages of shard %s/%d in %s: the head (head = true: the lowest row, which Sentry locks and is blocked on), then the %s.", k.Scope.Name, k.ID, t.Describe(), order),
		countDoc,
		"delivers = true marks the newest row of its group, the one Sentry delivers (its payload wins);",
		"the others are superseded.",
	}, t.idents(), args, on...)
}

// ShardMessagesAll lists every message of a shard, newest first, marked like ShardMessages.
// The coalesce groups are aggregated once and joined, so the cost is two passes over the
// shard however large it is, and rows stream out in id order (inspect shard --all).
func ShardMessagesAll(t Target, k ShardKey) Statement {
	args, on := t.shardArgs(k)
	return sqlStatement("shard-messages-all", []string{
		fmt.Sprintf("Every message of shard %s/%d in %s, newest first.", k.Scope.Name, k.ID, t.Describe()),
		"group_rows = rows sharing (category, object_identifier); delivers = true marks the newest row",
		"of the group, the one Sentry delivers (its payload wins); the others are superseded.",
	}, t.idents(), args, on...)
}

// ShardStateRow is a row of ShardState (one per cell in the control silo): the head of
// inspect shard's document.
type ShardStateRow struct {
	RegionName      *string    `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string    `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64      `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64      `db:"shard_identifier" json:"shard_identifier"`
	Depth           int64      `db:"depth" json:"depth"`
	NextAttempt     *time.Time `db:"next_attempt" json:"next_attempt"`
	Due             *bool      `db:"due" json:"due"`
	HeadID          *int64     `db:"head_id" json:"head_id"`
	HeadCategory    *int64     `db:"head_category" json:"head_category"`
	HeadObject      *int64     `db:"head_object" json:"head_object"`
	LastAttempt     *time.Time `db:"last_attempt" json:"last_attempt"`
	LastDelay       *float64   `db:"last_delay_seconds" json:"last_delay_seconds"`
	ObservedAt      time.Time  `db:"observed_at" json:"observed_at"`
}

// ShardCategoryRow is a row of ShardCategories: one category of the shard (per cell in the
// control silo), its depth, coalesce groups and oldest and newest message's date_added.
type ShardCategoryRow struct {
	RegionName     *string    `db:"region_name,optional" json:"region_name,omitempty"`
	CellName       *string    `db:"cell_name,optional" json:"cell_name,omitempty"`
	Category       int64      `db:"category" json:"category"`
	Depth          int64      `db:"depth" json:"depth"`
	CoalesceGroups int64      `db:"coalesce_groups" json:"coalesce_groups"`
	OldestMessage  *time.Time `db:"oldest_message" json:"oldest_message"`
	NewestMessage  *time.Time `db:"newest_message" json:"newest_message"`
}

// ShardMessageRow is a row of ShardMessages and ShardMessagesAll, the messages inspect shard
// streams: head (the listing's first page starts with the shard's head row) only in
// ShardMessages. payload is the row's payload as text (JSON output nests it when it is JSON).
type ShardMessageRow struct {
	ID            int64     `db:"id" json:"id"`
	RegionName    *string   `db:"region_name,optional" json:"region_name,omitempty"`
	CellName      *string   `db:"cell_name,optional" json:"cell_name,omitempty"`
	Category      int64     `db:"category" json:"category"`
	ObjectID      int64     `db:"object_identifier" json:"object_identifier"`
	GroupRows     int64     `db:"group_rows" json:"group_rows"`
	Delivers      *bool     `db:"delivers" json:"delivers"`
	Payload       *string   `db:"payload" json:"payload"`
	ScheduledFrom time.Time `db:"scheduled_from" json:"scheduled_from"`
	ScheduledFor  time.Time `db:"scheduled_for" json:"scheduled_for"`
	DateAdded     time.Time `db:"date_added" json:"date_added"`
	Head          *bool     `db:"head,optional" json:"head,omitempty"`
}
