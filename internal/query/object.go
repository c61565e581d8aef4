package query

import (
	"fmt"
	"time"
)

// The statements of inspect object and inspect message, in sql/object.sql.

// ObjectLookup says how to find the outboxes of one object.
type ObjectLookup struct {
	Category Enum
	// Scope is the category's registered scope; nil searches every scope (a full scan).
	Scope    *Enum
	ObjectID int64
	// ShardFromObject uses the object id as the shard id, for categories where they are equal;
	// the lookup then runs on the shard index.
	ShardFromObject bool
	// Shard is the shard the caller knows the object lives in (inspect object --shard: the
	// organization of an ORGANIZATION_MEMBER_UPDATE, …); with Scope it makes the lookup one
	// probe of the shard index, like ShardFromObject.
	Shard *int64
	Limit int
}

// ObjectOutboxes answers "which outboxes exist for this object?".
func ObjectOutboxes(t Target, l ObjectLookup) Statement {
	args := t.cellArgs()
	on := t.controlAndCell()
	how := "it scans the table (no index leads with category); the statement timeout bounds it."
	shardLookup := (l.ShardFromObject || l.Shard != nil) && l.Scope != nil
	switch {
	case shardLookup && l.Shard != nil:
		args["shard"] = Arg{Value: *l.Shard, Note: "--shard"}
		how = "the shard is given, so this is one probe of the shard index."
	case shardLookup:
		args["shard"] = Arg{Value: l.ObjectID, Note: "the object is the shard for " + l.Category.Name}
		how = "the object id is the shard id for this category, so this is one probe of the shard index."
	}
	switch {
	case shardLookup:
		on = append(on, "scope_shard")
	case l.Scope != nil:
		on = append(on, "scope")
		how = "it scans the rows of " + l.Scope.Name + " (no index leads with category); the statement timeout bounds it."
	}
	if l.Scope != nil {
		args["scope"] = Arg{Value: l.Scope.Value, Note: l.Scope.Name}
	}
	args["category"] = Arg{Value: l.Category.Value, Note: l.Category.Name}
	args["object"] = Arg{Value: l.ObjectID}
	args["limit"] = Arg{Value: limitOrDefault(l.Limit)}
	return sqlStatement("object-outboxes", []string{
		fmt.Sprintf("Outboxes of %s object %d in %s, newest first.", l.Category.Name, l.ObjectID, t.Describe()),
		"The newest row is the one Sentry delivers; older rows of the same shard are superseded.",
		"Speed: " + how,
	}, t.idents(), args, on...)
}

// Message answers "what is this outbox row, and where does it stand?": the row, its coalesce
// group, and its shard's head.
func Message(t Target, id int64) Statement {
	return sqlStatement("message", []string{
		fmt.Sprintf("Outbox row %d of %s with its coalesce group and shard.", id, t.Describe()),
		"delivers = true: this row is the newest of its group and is the one Sentry delivers.",
		"is_head = true: this row is the shard's lowest id, the one Sentry locks and delivers first",
		"(a poison message blocks its whole shard from here).",
	}, t.idents(), Args{"id": {Value: id}}, t.controlFragments()...)
}

// ObjectOutboxRow is a row of ObjectOutboxes (inspect object).
type ObjectOutboxRow struct {
	ID              int64     `db:"id" json:"id"`
	RegionName      *string   `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string   `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64     `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64     `db:"shard_identifier" json:"shard_identifier"`
	Category        int64     `db:"category" json:"category"`
	ObjectID        int64     `db:"object_identifier" json:"object_identifier"`
	Payload         *string   `db:"payload" json:"payload"`
	ScheduledFrom   time.Time `db:"scheduled_from" json:"scheduled_from"`
	ScheduledFor    time.Time `db:"scheduled_for" json:"scheduled_for"`
	DateAdded       time.Time `db:"date_added" json:"date_added"`
}

// MessageRow is the row of Message (inspect message): the message, its coalesce group
// (group_rows, newest_id, delivers) and its shard (shard_depth, head_id, is_head).
type MessageRow struct {
	ID              int64     `db:"id" json:"id"`
	RegionName      *string   `db:"region_name,optional" json:"region_name,omitempty"`
	CellName        *string   `db:"cell_name,optional" json:"cell_name,omitempty"`
	ShardScope      int64     `db:"shard_scope" json:"shard_scope"`
	ShardIdentifier int64     `db:"shard_identifier" json:"shard_identifier"`
	Category        int64     `db:"category" json:"category"`
	ObjectID        int64     `db:"object_identifier" json:"object_identifier"`
	GroupRows       int64     `db:"group_rows" json:"group_rows"`
	NewestID        int64     `db:"newest_id" json:"newest_id"`
	Delivers        bool      `db:"delivers" json:"delivers"`
	ShardDepth      int64     `db:"shard_depth" json:"shard_depth"`
	HeadID          int64     `db:"head_id" json:"head_id"`
	IsHead          bool      `db:"is_head" json:"is_head"`
	Payload         *string   `db:"payload" json:"payload"`
	ScheduledFrom   time.Time `db:"scheduled_from" json:"scheduled_from"`
	ScheduledFor    time.Time `db:"scheduled_for" json:"scheduled_for"`
	DateAdded       time.Time `db:"date_added" json:"date_added"`
}
