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
		"pinned-introspect": {Introspect(t.Schema, []string{CellTable, ControlTable}), OptionValues(t.Schema, OptionTable, []string{"a", "b"})},
		"pinned-replica":    replicaCases(t.Schema),
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
			got, err := InTransaction(testPreamble, Script{Reschedule(target, k, 0, Why{Command: "reschedule"})}).Render()
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

// replicaCases are verify's and replicate's statements (sql/replica.sql), each variant.
func replicaCases(schema string) Script {
	q := func(n string) string {
		if schema == "" {
			return Ident(n)
		}
		return Ident(schema) + "." + Ident(n)
	}
	tbl := func(src, rep string) ReplicaTables {
		return ReplicaTables{Source: q(src), Replica: q(rep), Outbox: q(CellTable), OrgReplica: q("sentry_organizationmapping")}
	}
	org, mem := tbl("sentry_organization", "sentry_organizationmapping"), tbl("sentry_organizationmember", "sentry_organizationmembermapping")
	scope := Enum{0, "ORGANIZATION_SCOPE"}
	orgSel := ReplicaSelect{Pair: "organization", Cell: "us", Scope: scope, Category: Enum{2, "ORGANIZATION_UPDATE"}}
	memSel := ReplicaSelect{Pair: "organizationmember", Cell: "us", Scope: scope, Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, IDs: []int64{7, 8}}
	rows := OutboxRows{Scope: scope, Category: Enum{3, "ORGANIZATION_MEMBER_UPDATE"}, Shards: []int64{1, 2}, Objects: []int64{7, 8},
		Payloads: []string{`{"user_id":70}`, ""}, PayloadType: "jsonb", ThePast: "2016-08-01 00:00:00+00"}
	text := rows
	text.PayloadType = "text"
	return Script{
		ReplicaSourceCount(org, orgSel), VerifyPair(org, orgSel), ReplicaSource(org, orgSel), ReplicaRows(org, orgSel),
		ReplicaSourceCount(mem, memSel), VerifyPair(mem, memSel), ReplicaSource(mem, memSel), ReplicaRows(mem, memSel),
		ReplicateSource(org, "organization", []int64{1}), ReplicateReplica(mem, "organizationmember", []int64{7}),
		ReplicateOutbox(mem, rows, Why{Command: "replicate", Reason: "INC-7"}), ReplicateOutbox(mem, text, Why{}),
		ReplicaSample(org, 100),
	}
}
