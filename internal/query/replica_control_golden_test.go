package query

import "testing"

// TestGoldenControlReplicas compares the printed SQL of the control -> cell pairs' own
// statements (sql/replica_control.sql) and of a control -> cell spec's verify statements
// (a secret field: its digest; a Lines field) with testdata/golden/replica-control/.
func TestGoldenControlReplicas(t *testing.T) {
	t.Parallel()
	spec := ReplicaSpec{Name: "apikey", SourceSilo: SiloControl, Source: "sentry_apikey", SourceKey: "id",
		Replica: "hybridcloud_apikeyreplica", ReplicaKey: "apikey_id",
		Fields: []ReplicaField{{Name: "label", Source: Col("label")}, {Name: "allowed_origins", Source: Lines("allowed_origins")},
			{Name: "key", Source: Col("key"), Secret: true}},
		Shard: Col("organization_id"), ReplicaShard: "organization_id", SourceCell: CellScope{ByOrganization: "organization_id"}, SeveralReplicaRows: true,
		Scope: Enum{0, "ORGANIZATION_SCOPE"}, Category: Enum{28, "API_KEY_UPDATE"}}
	mono := ReplicaSelect{SourceSchema: "sentry", ReplicaSchema: "sentry", Cell: evilCell, IDs: []int64{7}, Limit: 50}
	split := ReplicaSelect{SourceSchema: "ctl", ReplicaSchema: "us", Cell: evilCell}
	got, err := Script{
		VerifyPair(spec, mono), ReplicaSource(spec, split), ReplicaRows(spec, split),
		ReplicaCellsByOrganization(`"ctl".sentry_apikey`, "id", "organization_id", `"ctl".sentry_organizationmapping`, []int64{7, 8}),
		ReplicaCellsByColumn(`"ctl".sentry_organizationslugreservation`, "id", "region_name", []int64{7}),
		ReplicaCellsAll(`"ctl".sentry_organizationmapping`, evilCell),
		ReplicaCellsByProviderOrganization(`"ctl".sentry_authidentity`, `"ctl".sentry_authprovider`, `"ctl".sentry_organizationmapping`, []int64{7}),
	}.Render()
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "replica-control", "statements", got)
}
