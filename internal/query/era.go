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
}

// Teardowns are the replicas torn down in July 2026.
var Teardowns = []Teardown{ //nolint:gochecknoglobals // constant table
	{Pair: "team", Model: "TeamReplica", Table: "sentry_teamreplica", Category: Enum{Value: 11, Name: "TEAM_UPDATE"},
		Where: "PRs #119640–#119654, 2026-07-14: TEAM_UPDATE rows are still written and drain, applying nothing"},
	{Pair: "organizationmemberteam", Model: "OrganizationMemberTeamReplica", Table: "sentry_organizationmember_teamsreplica",
		Category: Enum{Value: 26, Name: "ORGANIZATION_MEMBER_TEAM_UPDATE"},
		Where:    "PRs #120155–#120167 (migration 1145_delete_organizationmemberteamreplica), 2026-07-22; category 26 retired as UNUSED_EIGHT in Aug 2026: its rows are leftovers"},
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
	return append(out, CellWatermark, ControlWatermark, GroupActionLogTable, WebhookPayloadTable)
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
