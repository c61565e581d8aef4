package replica

import "github.com/outboxctl/outboxctl/internal/query"

// The cell -> control pairs: a ReplicatedCellModel of the cell silo and the replica its
// receiver upserts in the control silo (docs/replicas.md: the source files each is read
// from). Their outbox rows are the cell outbox's; outbox_for_update() is
// category.as_cell_outbox(model=self, payload=self.payload_for_update()) with the shard
// infer_identifiers gives (reference §2.3) unless the model passes its own.

// Scopes and categories of the pairs (reference §2: ints are append-only).
var (
	orgScope         = query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}
	integrationScope = query.Enum{Value: 5, Name: "INTEGRATION_SCOPE"}
)

// The organization's BitField flags, in Organization.flags' order (bit i = 1 << i).
var orgFlags = []struct {
	name string
	mask int64
}{
	{"allow_joinleave", 1}, {"enhanced_privacy", 2}, {"disable_shared_issues", 4}, {"early_adopter", 8},
	{"require_2fa", 16}, {"disable_new_visibility_features", 32}, {"require_email_verification", 64},
	{"codecov_access", 128}, {"disable_member_project_creation", 256}, {"prevent_superuser_access", 512},
	{"disable_member_invite", 1024},
}

// organizationFields are what update_organization_mapping_from_instance() copies: slug,
// name, status, the cell's name (region_name) and the flag bits, in the mapping's column
// order of the flags.
func organizationFields() []query.ReplicaField {
	fs := []query.ReplicaField{{Name: "slug", Source: query.Col("slug")}, {Name: "name", Source: query.Col("name")},
		{Name: "status", Source: query.Col("status")}, {Name: "region_name", Source: query.CellName()}}
	for _, n := range []string{"allow_joinleave", "enhanced_privacy", "require_2fa", "early_adopter", "disable_shared_issues",
		"disable_new_visibility_features", "require_email_verification", "codecov_access", "disable_member_project_creation",
		"prevent_superuser_access", "disable_member_invite"} {
		for _, f := range orgFlags {
			if f.name == n {
				fs = append(fs, query.ReplicaField{Name: n, Source: query.Flag("flags", f.mask)})
			}
		}
	}
	return fs
}

func cols(names ...string) []query.ReplicaField {
	out := make([]query.ReplicaField, len(names))
	for i, n := range names {
		out[i] = query.ReplicaField{Name: n, Source: query.Col(n)}
	}
	return out
}

// byOrganization is the control silo's rule for a replica carrying organization_id: it is
// the cell's when the organization's mapping names the cell.
var byOrganization = query.CellScope{ByOrganization: "organization_id"}

// OrganizationPair is organization -> organizationmapping, the pair doctor samples.
const OrganizationPair = "organization"

func init() {
	Register(
		Pair{ReplicaSpec: query.ReplicaSpec{Name: OrganizationPair, SourceSilo: query.SiloCell,
			Source: "sentry_organization", SourceKey: "id", Replica: "sentry_organizationmapping", ReplicaKey: "organization_id",
			Fields: organizationFields(),
			// ORGANIZATION_SCOPE's shard of an Organization is its own id.
			Shard: query.Col("id"), ReplicaShard: "organization_id",
			ReplicaCell: query.CellScope{Column: "region_name"},
			Scope:       orgScope, Category: query.Enum{Value: 2, Name: "ORGANIZATION_UPDATE"}}},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "organizationmember", SourceSilo: query.SiloCell,
			Source: "sentry_organizationmember", SourceKey: "id", Replica: "sentry_organizationmembermapping", ReplicaKey: "organizationmember_id",
			// RpcOrganizationMemberMappingUpdate.from_orm(), written by upsert_mapping().
			Fields: cols("organization_id", "role", "user_id", "email", "inviter_id", "invite_status"),
			Shard:  query.Col("organization_id"), ReplicaShard: "organization_id",
			// payload_for_update(): {"user_id": user_id}.
			Payload:     []query.ReplicaPayloadKey{{Key: "user_id", Source: query.Col("user_id"), Replica: "user_id"}},
			ReplicaCell: byOrganization, NullableKey: true,
			Scope: orgScope, Category: query.Enum{Value: 3, Name: "ORGANIZATION_MEMBER_UPDATE"}}},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "team", SourceSilo: query.SiloCell,
			Source: "sentry_team", SourceKey: "id", Replica: "sentry_teamreplica", ReplicaKey: "team_id",
			// upsert_replicated_team(): team_id, organization_id, slug, name, status.
			Fields: cols("organization_id", "slug", "name", "status"),
			Shard:  query.Col("organization_id"), ReplicaShard: "organization_id",
			ReplicaCell: byOrganization,
			Scope:       orgScope, Category: query.Enum{Value: 11, Name: "TEAM_UPDATE"}},
			Gone: "Team's deletion outbox is a no-op (the default handle_async_deletion): its replica goes when the team's tombstone is processed"},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "organizationmemberteam", SourceSilo: query.SiloCell,
			Source: "sentry_organizationmember_teams", SourceKey: "id",
			Replica: "sentry_organizationmember_teamsreplica", ReplicaKey: "organizationmemberteam_id",
			// serialize_rpc_organization_member_team(): the organization is the member's.
			Joins: []query.ReplicaJoin{{Alias: "m", Table: "sentry_organizationmember", Key: "id", From: "organizationmember_id"}},
			Fields: []query.ReplicaField{{Name: "team_id", Source: query.Col("team_id")}, {Name: "organization_id", Source: query.Via("m", "organization_id")},
				{Name: "organizationmember_id", Source: query.Col("organizationmember_id")}, {Name: "is_active", Source: query.Col("is_active")},
				{Name: "role", Source: query.Col("role")}},
			// outbox_for_update() passes the member's organization as the shard.
			Shard: query.Via("m", "organization_id"), ReplicaShard: "organization_id",
			ReplicaCell: byOrganization,
			Scope:       orgScope, Category: query.Enum{Value: 26, Name: "ORGANIZATION_MEMBER_TEAM_UPDATE"}}},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "externalactor", SourceSilo: query.SiloCell,
			Source: "sentry_externalactor", SourceKey: "id", Replica: "hybridcloud_externalactorreplica", ReplicaKey: "externalactor_id",
			// upsert_external_actor_replica() (serialize_external_actor()).
			Fields: cols("team_id", "user_id", "organization_id", "integration_id", "provider", "external_name", "external_id"),
			// INTEGRATION_SCOPE: infer_identifiers gives integration_id.
			Shard: query.Col("integration_id"), ReplicaShard: "integration_id",
			ReplicaCell: byOrganization,
			Scope:       integrationScope, Category: query.Enum{Value: 35, Name: "EXTERNAL_ACTOR_UPDATE"}},
			Gone: "ExternalActor's deletion outbox is a no-op (the default handle_async_deletion): Sentry deletes the replica only with its team, user, integration or organization"},
	)
}
