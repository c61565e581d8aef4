package query

import (
	"slices"
	"strings"
	"time"
)

// The era model: which side of Sentry's changes since May 2026 a database is on (reference
// §10), decided from its catalog as introspection read it, never from a version an operator
// types. A command loads the era's tables once (LoadSchema(…, EraTables())) in its session
// and asks the Schema; it does not probe the catalog on its own.

// Tables the era model looks up besides the outboxes and the watermarks.
const (
	// GroupActionLogTable is GroupActionLogOutbox's table (cell silo, 2026; its own
	// scheduler, taskworker namespace issues.action_log).
	GroupActionLogTable = "sentry_groupactionlogoutbox"
	// WebhookPayloadTable is the control silo's webhook payload mailboxes (reference §10.4).
	WebhookPayloadTable = "hybridcloud_webhookpayload"
)

// Teardown is a replica Sentry dropped (reference §10.1): its pair, model and table, the
// category whose rows it consumed (still written, or left over, on a current Sentry) and
// where it happened.
type Teardown struct {
	Pair, Model, Table string
	Category           Enum
	Where              string
	// Retires: Sentry retired the category with the replica (category 26, as UNUSED_EIGHT),
	// so the replica's absence is the catalog's sign that its rows are leftovers.
	Retires bool
}

// Teardowns are the replicas torn down in July 2026.
var Teardowns = []Teardown{ //nolint:gochecknoglobals // constant table
	{Pair: "team", Model: "TeamReplica", Table: "sentry_teamreplica", Category: Enum{Value: 11, Name: "TEAM_UPDATE"},
		Where: "PRs #119640–#119654, 2026-07-14: TEAM_UPDATE rows are still written and drain, applying nothing"},
	{Pair: "organizationmemberteam", Model: "OrganizationMemberTeamReplica", Table: "sentry_organizationmember_teamsreplica",
		Category: Enum{Value: 26, Name: "ORGANIZATION_MEMBER_TEAM_UPDATE"}, Retires: true,
		Where: "PRs #120155–#120167 (migration 1145_delete_organizationmemberteamreplica), 2026-07-22; category 26 retired as UNUSED_EIGHT in Aug 2026: its rows are leftovers"},
	{Pair: "externalactor", Model: "ExternalActorReplica", Table: "hybridcloud_externalactorreplica", Category: Enum{Value: 35, Name: "EXTERNAL_ACTOR_UPDATE"},
		Where: "PRs #119532, #119533, 2026-07-13: EXTERNAL_ACTOR_UPDATE rows still drain, applying nothing"},
}

// TornDownReason is what verify and replicate say of a pair whose replica Sentry dropped.
const TornDownReason = "torn down in Sentry (July 2026): nothing to compare"

// TeardownOf is the teardown of the replica table (unqualified), if Sentry dropped it.
func TeardownOf(table string) (Teardown, bool) {
	i := slices.IndexFunc(Teardowns, func(t Teardown) bool { return t.Table == table })
	if i < 0 {
		return Teardown{}, false
	}
	return Teardowns[i], true
}

// EraTables are the tables the era model needs introspected: the torn-down replicas, the
// watermark tables, the group action log outbox and the webhook payloads (with the two
// outboxes, which LoadSchema always adds).
func EraTables() []string {
	out := make([]string, 0, len(Teardowns)+4)
	for _, t := range Teardowns {
		out = append(out, t.Table)
	}
	return append(out, CellWatermark, ControlWatermark, CellDeletionWatermark, ControlDeletionWatermark, GroupActionLogTable, WebhookPayloadTable)
}

// LeftoverSignTables are the replica tables whose absence tells that a retired category's
// rows are leftovers (Teardown.Retires): a read session looks them up with its outbox
// tables (one more name in the same catalog read), so its listings ask CategoryLeftover.
func LeftoverSignTables() []string {
	var out []string
	for _, t := range Teardowns {
		if t.Retires {
			out = append(out, t.Table)
		}
	}
	return out
}

// CategoryLeftover says whether rows of category value are leftovers Sentry no longer writes
// on this database, as its catalog tells; known is false when the catalog cannot tell: a
// category retired by no teardown (the registry's word stands), or whose sign was not looked
// up. Category 26 (ORGANIZATION_MEMBER_TEAM_UPDATE) is live on a May-2026 database, where its
// replica (sentry_organizationmember_teamsreplica) is still here, and a leftover past the
// July 2026 teardown (retired as UNUSED_EIGHT in Aug 2026).
func (s Schema) CategoryLeftover(value int) (leftover, known bool) {
	for _, t := range Teardowns {
		if !t.Retires || int(t.Category.Value) != value {
			continue
		}
		switch s.ReplicaState(t.Table) {
		case ReplicaTornDown:
			return true, true
		case ReplicaPresent, ReplicaNotYet:
			return false, true
		case ReplicaUnknown:
		}
	}
	return false, false
}

// ReplicaState is what the catalog says of a replica table.
type ReplicaState int

// The states of a replica table.
const (
	ReplicaUnknown  ReplicaState = iota // not looked up
	ReplicaPresent                      // the table is here
	ReplicaTornDown                     // Sentry dropped it (July 2026) and this database is past that
	ReplicaNotYet                       // not here, and not one Sentry dropped: a Sentry from before it (or another schema)
)

// ReplicaState says whether table (unqualified) is here, torn down or not there yet. A
// torn-down replica is one of Teardowns absent from a database whose outbox payload is jsonb:
// Sentry converted the payloads in Aug 2025 (PR #97849), when all three replicas existed, so a
// database past that conversion without one of them lost it to the July 2026 teardown; on a
// text-payload database (before Aug 2025) an absent replica is not there yet.
func (s Schema) ReplicaState(table string) ReplicaState {
	ti, ok := s.Tables[table]
	switch {
	case !ok:
		return ReplicaUnknown
	case ti.Present:
		return ReplicaPresent
	}
	if _, dropped := TeardownOf(table); dropped && s.PayloadJSONB() {
		return ReplicaTornDown
	}
	return ReplicaNotYet
}

// PayloadJSONB says an outbox table here has a jsonb payload (Sentry since Aug 2025).
func (s Schema) PayloadJSONB() bool {
	for _, t := range []string{CellTable, ControlTable, GroupActionLogTable} {
		if ti := s.Tables[t]; ti.Present && ti.PayloadType == "jsonb" {
			return true
		}
	}
	return false
}

// OutboxTables are the outbox tables here, of the ones Sentry has: the cell outbox, the
// control outbox, the group action log outbox.
func (s Schema) OutboxTables() []string {
	var out []string
	for _, t := range []string{CellTable, ControlTable, GroupActionLogTable} {
		if s.Tables[t].Present {
			out = append(out, t)
		}
	}
	return out
}

// WatermarksInPostgres says the silo's backfill watermarks live in PostgreSQL (Sentry since
// Sep 2026: its watermark table is here); otherwise they are Redis keys.
func (s Schema) WatermarksInPostgres(silo Silo) bool {
	if silo == SiloControl {
		return s.Tables[ControlWatermark].Present
	}
	return s.Tables[CellWatermark].Present
}

// The hybrid-cloud deletion (tombstone) watermarks in PostgreSQL (Sentry since Sep 2026;
// before, Redis keys "tombstone.<table>.<field>" and "row.<table>.<field>" of the default
// cluster, a JSON [low_bound, transaction_id]): src/sentry/deletions/models/watermark.py,
// models CellDeletionWatermark and ControlDeletionWatermark (PR #123171, INFRENG-559), one
// row per (prefix, table_name, field_name), prefix "tombstone" or "row"; read from them since
// #123260 and Redis removed by #123630 (2026-09-03). The tombstone watermark's low_bound is
// the highest tombstone id (sentry_regiontombstone in a cell, sentry_controltombstone in the
// control silo) whose cascade to that HybridCloudForeignKey column is done.
const (
	CellDeletionWatermark    = "sentry_celldeletionwatermark"
	ControlDeletionWatermark = "sentry_controldeletionwatermark"
	CellTombstoneTable       = "sentry_regiontombstone"
	ControlTombstoneTable    = "sentry_controltombstone"
)

// DeletionWatermarksInPostgres says the silo's deletion (tombstone) watermarks live in
// PostgreSQL: its deletion watermark table is here (Sentry since Sep 2026); otherwise they
// are Redis keys.
func (s Schema) DeletionWatermarksInPostgres(silo Silo) bool {
	if silo == SiloControl {
		return s.Tables[ControlDeletionWatermark].Present
	}
	return s.Tables[CellDeletionWatermark].Present
}

// IndexesOf are table's (unqualified) index names, sorted; nil when it is absent or was not
// looked up.
func (s Schema) IndexesOf(table string) []string { return s.Indexes[table] }

// HasIndex says table has an index named name.
func (s Schema) HasIndex(table, name string) bool {
	return slices.Contains(s.Indexes[table], name)
}

// WebhookPriorityIndex is the webhook payload index Sentry dropped in Aug 2026 (migration
// 0034_drop_webhookpayload_priority_index).
const WebhookPriorityIndex = "webhookpayload_priority_idx"

// WebhookIndexes says which of the webhook payload indexes Sentry dropped in Aug 2026 this
// database still has: the schedule_for index and webhookpayload_priority_idx. On a current
// Sentry neither is here, and mailbox heads are found through (mailbox_name, id). The
// schedule_for index's name is Django's, by either of its rules: a Meta index's hash name
// (hybridcloud_schedul_<hash>_idx, fixture.MailboxScheduleForIndex) or a db_index field's
// (hybridcloud_webhookpayload_schedule_for_<hash>); the reference does not say which.
func (s Schema) WebhookIndexes() (scheduleFor, priority bool) {
	for _, n := range s.Indexes[WebhookPayloadTable] {
		if strings.HasPrefix(n, WebhookPayloadTable+"_schedule_for") || strings.HasPrefix(n, "hybridcloud_schedul_") {
			scheduleFor = true
		}
	}
	return scheduleFor, s.HasIndex(WebhookPayloadTable, WebhookPriorityIndex)
}

// GroupActionLogCutover is when Sentry began writing every group action log row to its own
// table (PR #124428, 2026-09-15; reference §10.3): such rows in the cell outbox added before
// it are leftovers, after it they come from another writer (the bulk path of open PR #121378).
const GroupActionLogCutover = "2026-09-15 00:00:00+00"

// GroupActionLogPair reads the scope and category of table's (the group action log outbox,
// qualified) oldest row.
func GroupActionLogPair(table string) Statement {
	return sqlStatement("era-group-action-log-pair", []string{"The group action log outbox's scope and category, from its oldest row (their integers are unverified)."},
		map[string]string{"table": table}, nil)
}

// GroupActionLogPairRow is GroupActionLogPair's row.
type GroupActionLogPairRow struct {
	Scope    int64 `db:"shard_scope"`
	Category int64 `db:"category"`
}

// GroupActionLogInCellOutbox counts the rows of scope and category in the cell outbox table
// (qualified): in all, and added since GroupActionLogCutover.
func GroupActionLogInCellOutbox(table string, scope, category Enum) Statement {
	return sqlStatement("era-group-action-log-in-cell-outbox", []string{"Group action log rows in the cell outbox: how many, and how many added since 2026-09-15."},
		map[string]string{"table": table}, Args{"scope": {Value: scope.Value, Note: scope.Name}, "category": {Value: category.Value, Note: category.Name},
			"since": {Value: GroupActionLogCutover, Note: "PR #124428: every group action log row in its own table"}})
}

// GroupActionLogInCellOutboxRow is GroupActionLogInCellOutbox's row.
type GroupActionLogInCellOutboxRow struct {
	Total  int64      `db:"rows_total"`
	Since  int64      `db:"rows_since"`
	Oldest *time.Time `db:"oldest"`
	Newest *time.Time `db:"newest"`
}

// TombstoneWatermarks reads the tombstone watermarks of a silo's deletion watermark table
// against its tombstone table (both qualified), the column waiting on the oldest tombstone
// first, at most limit.
func TombstoneWatermarks(watermarks, tombstones string, limit int) Statement {
	return sqlStatement("era-tombstone-watermarks", []string{"Tombstone (deletion) watermarks: how far each HybridCloudForeignKey column's cascade went, and the oldest tombstone it waits on."},
		map[string]string{"watermarks": watermarks, "tombstones": tombstones}, Args{"limit": {Value: limit}})
}

// TombstoneWatermarkRow is TombstoneWatermarks' row.
type TombstoneWatermarkRow struct {
	TableName     string     `db:"table_name"`
	FieldName     string     `db:"field_name"`
	LowBound      int64      `db:"low_bound"`
	DateUpdated   time.Time  `db:"date_updated"`
	MaxID         *int64     `db:"max_id"`
	NextID        *int64     `db:"next_id"`
	NextCreatedAt *time.Time `db:"next_created_at"`
}
