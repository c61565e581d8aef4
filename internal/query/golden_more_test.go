package query

import (
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/query/session"
)

// pinnedCases are the statements no other golden case prints (the drain's, killswitch's,
// backfill's, the option writes and introspection), each variant Go can choose: pinned
// before they moved into the SQL files, so the move is shown to print the same bytes.
func pinnedCases(t Target) map[string]Script {
	k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 7}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return map[string]Script{
		"pinned-drain-head":            {DrainHead(t, k, 0, 0), DrainHead(t, k, 90, 40)},
		"pinned-drain-claim":           {DrainClaim(t, k, at, at.Add(time.Minute))},
		"pinned-drain-unclaim":         {DrainUnclaim(t, k, []int64{1, 2}, []int64{10, 20}, []int64{30, 40}, at, at.Add(time.Hour))},
		"pinned-drain-newest":          {DrainNewest(t, k, 3, 11)},
		"pinned-drain-dups":            {DrainDuplicateSlice(t, k, 3, 11)},
		"pinned-drain-delete":          {DrainDeleteIDs(t, []int64{4, 5})},
		"pinned-drain-next":            {DrainNext(t, k, 0, nil), DrainNext(t, k, 99, &GroupUpTo{Category: 3, Object: 11, UpTo: 50})},
		"pinned-drain-chunk":           {DrainDeleteGroupChunk(t, k, 3, 11, 50)},
		"pinned-drain-archive":         {DrainArchiveRows(t, k, []int64{3}, []int64{11}, []int64{50}, false), DrainArchiveRows(t, k, []int64{3}, []int64{11}, []int64{50}, true)},
		"pinned-shard-max-id":          {ShardMaxID(t, k)},
		"pinned-drain-plan-categories": {DrainPlanCategories(t, k)},
		"pinned-shard-max-ids":         {ShardMaxIDs(t, []int{0, 1}, []int64{7, 8})},
		"pinned-shard-category-counts": {ShardCategoryCounts(t, []int{0, 1}, []int64{7, 8})},
		"pinned-shard-depths-listed":   {ShardDepthsListed(t, []int{0, 1}, []int64{7, 8})},
		"pinned-drain-coalesced":       {DrainCoalesced(t, k, []int64{3}, []int64{11}, []int64{50}, false), DrainCoalesced(t, k, []int64{3}, []int64{11}, []int64{50}, true)},
		"pinned-shard-depths":          {ShardDepths(t, Enum{0, "ORGANIZATION_SCOPE"}, []int64{1, 2})},
		"pinned-killswitch-none":       {KillswitchShards(nil, []KillswitchList{{OptionsTable: OptionTable, Scope: 0, IDs: []int64{1}}})},
		"pinned-killswitch-both":       {KillswitchShards([]Target{{Silo: SiloCell, Schema: t.Schema}, t}, []KillswitchList{{OptionsTable: OptionTable, Scope: 0, IDs: []int64{1}}})},
		"pinned-backfill": {
			Watermarks(t.Schema, "sentry_backfill_watermark", []string{"a", "b"}),
			TableBounds(t.Schema, []string{"sentry_a", "sentry_b"}),
			RowsBelow(t.Schema, "sentry_a", 10),
			WatermarkTables(t.Schema, "sentry_backfill_watermark"),
			Watermarks("", "w", []string{"a"}),
		},
		"pinned-options": {
			OptionEnsure(t.Schema, OptionTable, "jsonb", "k", "[]", "incident 1"),
			OptionEnsure(t.Schema, OptionTable, "text", "k", "[]", ""),
			OptionLock(t.Schema, OptionTable, "k"),
			ShardListUpdate(t.Schema, OptionTable, "jsonb", "k", []int64{1, 2}, true, "why"),
			ShardListUpdate(t.Schema, OptionTable, "text", "k", []int64{1}, false, ""),
			OptionWrite(t.Schema, OptionTable, "jsonb", "k", "true", "r", "backfill gate"),
			OptionWrite(t.Schema, OptionTable, "text", "k", "true", "", "killswitch add"),
		},
		"pinned-introspect": {Introspect(t.Schema, []string{CellTable, ControlTable}), OptionValues(t.Schema, OptionTable, []string{"a", "b"}),
			IntrospectIndexes(t.Schema, []string{CellTable, WebhookPayloadTable}),
			GroupActionLogInCellOutbox(qualified(t.Schema, CellTable), Enum{Value: 14, Name: "GROUP_SCOPE"}, Enum{Value: 49, Name: "GROUP_ACTION_LOG_EVENT"}),
			TombstoneWatermarks(qualified(t.Schema, CellDeletionWatermark), qualified(t.Schema, CellTombstoneTable), 11)},
		"pinned-replica": replicaCases(t.Schema),
	}
}

// testPreamble is a session preamble as db.WritePreamble makes it, fixed for the goldens.
var testPreamble = []string{ //nolint:gochecknoglobals // test value
	session.BeginWrite(),
	session.SetLocal("application_name", session.Quote("outboxctl/drain")),
	session.SetLocal("statement_timeout", session.Quote("30000")),
	session.SetLocal("jit", "off"),
}

// TestGoldenPinned compares the pinned statements' printed SQL with their golden files.
func TestGoldenPinned(t *testing.T) {
	t.Parallel()
	for tname, target := range targets("") {
		for name, sc := range pinnedCases(target) {
			t.Run(tname+"/"+name, func(t *testing.T) {
				t.Parallel()
				got, err := sc.Render()
				if err != nil {
					t.Fatal(err)
				}
				assertGolden(t, tname, name, got)
			})
		}
	}
	for tname, target := range targets("") {
		t.Run(tname+"/drain-script", func(t *testing.T) {
			t.Parallel()
			got, err := DrainScript(target, ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 7}, testPreamble)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tname, "pinned-drain-script", got)
		})
	}
	for tname, target := range targets("") {
		t.Run(tname+"/archiving-delete", func(t *testing.T) {
			t.Parallel()
			k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 7}
			why := Why{Command: "compact", Reason: "INC-1"}
			got, err := ArchivingDeleteScript("compact", testPreamble, Superseded(target, k, 0, why), DeleteSelected(target, Superseded(target, k, 0, Why{}), why))
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tname, "pinned-archiving-delete", got)
		})
		t.Run(tname+"/reschedule-in-transaction", func(t *testing.T) {
			t.Parallel()
			k := ShardKey{Scope: Enum{0, "ORGANIZATION_SCOPE"}, ID: 7}
			got, err := InTransaction(testPreamble, Script{Reschedule(target, k, 0, RescheduleAllRows, Why{Command: "reschedule"})}).Render()
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tname, "pinned-reschedule-in-transaction", got)
		})
	}
	for name, sc := range pinnedCases(Target{Silo: SiloControl, Schema: "sentry", Cell: "us"}) {
		t.Run("schema/"+name, func(t *testing.T) {
			t.Parallel()
			got, err := sc.Render()
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, "schema", name, got)
		})
	}
}

// replicaCases are verify's and replicate's statements (sql/replica.sql), each variant: a
// pair with a flag, the cell's name and a cell column; one with a payload and an
// organization-scoped replica; one whose field and shard come through a join; a control
// outbox.
func replicaCases(schema string) Script {
	org := ReplicaSpec{Name: "organization", SourceSilo: SiloCell, Source: "sentry_organization", SourceKey: "id",
		Replica: "sentry_organizationmapping", ReplicaKey: "organization_id",
		Fields: []ReplicaField{{Name: "slug", Source: Col("slug")}, {Name: "region_name", Source: CellName()}, {Name: "require_2fa", Source: Flag("flags", 16)}},
		Shard:  Col("id"), ReplicaShard: "organization_id", ReplicaCell: CellScope{Column: "region_name"},
		Scope: Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{2, "ORGANIZATION_UPDATE"}}
	mem := ReplicaSpec{Name: "organizationmember", SourceSilo: SiloCell, Source: "sentry_organizationmember", SourceKey: "id",
		Replica: "sentry_organizationmembermapping", ReplicaKey: "organizationmember_id",
		Fields: []ReplicaField{{Name: "role", Source: Col("role")}, {Name: "user_id", Source: Col("user_id")}},
		Shard:  Col("organization_id"), ReplicaShard: "organization_id",
		Payload:     []ReplicaPayloadKey{{Key: "user_id", Source: Col("user_id"), Replica: "user_id"}},
		ReplicaCell: CellScope{ByOrganization: "organization_id"},
		Scope:       Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}}
	omt := ReplicaSpec{Name: "organizationmemberteam", SourceSilo: SiloCell, Source: "sentry_organizationmember_teams", SourceKey: "id",
		Replica: "sentry_organizationmember_teamsreplica", ReplicaKey: "organizationmemberteam_id",
		Joins:  []ReplicaJoin{{Alias: "m", Table: "sentry_organizationmember", Key: "id", From: "organizationmember_id"}},
		Fields: []ReplicaField{{Name: "organization_id", Source: Via("m", "organization_id")}, {Name: "is_active", Source: Col("is_active")}},
		Shard:  Via("m", "organization_id"), ReplicaShard: "organization_id", ReplicaCell: CellScope{ByOrganization: "organization_id"},
		Scope: Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{26, "ORGANIZATION_MEMBER_TEAM_UPDATE"}}
	control := ReplicaSpec{Name: "apikey", SourceSilo: SiloControl, Source: "sentry_apikey", SourceKey: "id",
		Replica: "hybridcloud_apikeyreplica", ReplicaKey: "apikey_id",
		Fields: []ReplicaField{{Name: "label", Source: Col("label")}},
		Shard:  Col("organization_id"), ReplicaShard: "organization_id", SourceCell: CellScope{ByOrganization: "organization_id"},
		Scope: Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{28, "API_KEY_UPDATE"}}
	byUser := control
	byUser.Name, byUser.SourceCell = "authidentity", CellScope{ByUser: "user_id"}
	all := ReplicaSelect{SourceSchema: schema, ReplicaSchema: schema, Cell: "us", Limit: 50}
	some := ReplicaSelect{SourceSchema: schema, ReplicaSchema: schema, Cell: "us", IDs: []int64{7, 8}}
	rows := OutboxRows{Scope: Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Shards: []int64{1, 2}, Objects: []int64{7, 8},
		Payloads: []string{`{"user_id":70}`, ""}, PayloadType: "jsonb", ThePast: "2016-08-01 00:00:00+00"}
	text := rows
	text.PayloadType = "text"
	ctl := rows
	ctl.Cells = []string{"us", "de"}
	return Script{
		ReplicaColumns([]string{qualified(schema, "sentry_organization"), qualified(schema, "sentry_organizationmapping")}),
		ReplicaUnkeyed(mem, schema),
		VerifyPair(org, all), ReplicaSource(org, all), ReplicaRows(org, all),
		VerifyPair(mem, some), ReplicaSource(mem, some), ReplicaRows(mem, some),
		VerifyPair(omt, all), ReplicaSource(omt, all), ReplicaRows(omt, some),
		ReplicaSource(control, all), ReplicaRows(control, all), ReplicaSource(byUser, all),
		ReplicateSource(org, schema, []int64{1}), ReplicateReplica(mem, schema, []int64{7}), ReplicateSource(omt, schema, []int64{3}),
		ReplicateOutbox(qualified(schema, CellTable), rows, Why{Command: "replicate", Reason: "INC-7"}), ReplicateOutbox(qualified(schema, CellTable), text, Why{}),
		ReplicateOutbox(qualified(schema, ControlTable), ctl, Why{}),
		ReplicaSample(ReplicaTables{Source: qualified(schema, "sentry_organization"), Replica: qualified(schema, "sentry_organizationmapping")}, 100),
	}
}
