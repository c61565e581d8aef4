package replica

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The control -> cell pairs: a ReplicatedControlModel of the control silo and the replica the
// cell's receiver upserts (docs/replicas.md, control -> cell: the source files each is read
// from). Their outbox rows are the control outbox's, one per cell outbox_cell_names() names
// (region_name): outboxes_for_update() is category.as_control_outboxes(cell_names=
// self.outbox_cell_names(), model=self, payload=self.payload_for_update()), the shard
// infer_identifiers gives, payload None (none of the four overrides payload_for_update).
// Their replicas live in the cell's database, which holds only its own: the replicas have no
// cell scope; the sources have the one outbox_cell_names() gives them.

var apiTokenScope = query.Enum{Value: 11, Name: "API_TOKEN_SCOPE"}

// secret is a field that is a token, a key or a hashed token: compared, never printed.
func secret(n string) query.ReplicaField {
	return query.ReplicaField{Name: n, Source: query.Col(n), Secret: true}
}

func init() {
	Register(
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "apitoken", SourceSilo: query.SiloControl,
			Source: "sentry_apitoken", SourceKey: "id", Replica: "hybridcloud_apitokenreplica", ReplicaKey: "apitoken_id",
			// upsert_replicated_api_token(serialize_api_token(token)): the token's own columns.
			// application_is_active and allowed_origins come from its ApiApplication, scope_list
			// from get_scopes(): not compared (docs/replicas.md).
			Fields: append(cols("user_id", "application_id", "scoping_organization_id", "expires_at"), secret("token"), secret("hashed_token")),
			// API_TOKEN_SCOPE's shard of an ApiToken is its own id (API_TOKEN_UPDATE was in
			// USER_SCOPE before late 2024: reference §2.2).
			Shard: query.Col("id"), ReplicaShard: "apitoken_id",
			Scope: apiTokenScope, Category: query.Enum{Value: 32, Name: "API_TOKEN_UPDATE"},
			SeveralReplicaRows: true}, // the replica's key column is indexed, not unique
			// ApiToken.outbox_cell_names(): every cell.
			CellsOf: cellsAll()},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "apikey", SourceSilo: query.SiloControl,
			Source: "sentry_apikey", SourceKey: "id", Replica: "hybridcloud_apikeyreplica", ReplicaKey: "apikey_id",
			// upsert_replicated_api_key(serialize_api_key(key)): allowed_origins is
			// "\n".join(get_allowed_origins()), the non-empty lines.
			Fields: append(cols("organization_id", "label", "status"), query.ReplicaField{Name: "allowed_origins", Source: query.Lines("allowed_origins")},
				secret("key")),
			Shard: query.Col("organization_id"), ReplicaShard: "organization_id",
			SourceCell: byOrganization,
			Scope:      orgScope, Category: query.Enum{Value: 28, Name: "API_KEY_UPDATE"},
			SeveralReplicaRows: true}, // the replica's key column is indexed, not unique
			// The default outbox_cell_names(): find_cells_for_orgs([organization_id]).
			CellsOf: cellsByOrganization("sentry_apikey")},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "orgauthtoken", SourceSilo: query.SiloControl,
			Source: "sentry_orgauthtoken", SourceKey: "id", Replica: "hybridcloud_orgauthtokenreplica", ReplicaKey: "orgauthtoken_id",
			// upsert_replicated_org_auth_token(serialize_org_auth_token(token)).
			Fields: append(cols("organization_id", "name", "scope_list", "created_by_id", "date_deactivated"), secret("token_hashed")),
			Shard:  query.Col("organization_id"), ReplicaShard: "organization_id",
			SourceCell: byOrganization,
			Scope:      orgScope, Category: query.Enum{Value: 33, Name: "ORG_AUTH_TOKEN_UPDATE"},
			SeveralReplicaRows: true}, // the replica's key column is indexed, not unique
			CellsOf: cellsByOrganization("sentry_orgauthtoken")},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "organizationslugreservation", SourceSilo: query.SiloControl,
			Source: "sentry_organizationslugreservation", SourceKey: "id",
			Replica: "hybridcloud_organizationslugreservationreplica", ReplicaKey: "organization_slug_reservation_id",
			// upsert_replicated_org_slug_reservation(serialize_slug_reservation(reservation)):
			// it deletes every replica that could conflict and creates this one.
			Fields: cols("slug", "organization_id", "user_id", "region_name", "reservation_type"),
			Shard:  query.Col("organization_id"), ReplicaShard: "organization_id",
			// outbox_cell_names() is [self.cell_name]: the region_name column.
			SourceCell: query.CellScope{Column: "region_name"},
			Scope:      orgScope, Category: query.Enum{Value: 27, Name: "ORGANIZATION_SLUG_RESERVATION_UPDATE"}},
			CellsOf: cellsByColumn("sentry_organizationslugreservation", "region_name")},
		Pair{ReplicaSpec: query.ReplicaSpec{Name: "authidentity", SourceSilo: query.SiloControl,
			Source: "sentry_authidentity", SourceKey: "id", Replica: "sentry_authidentityreplica", ReplicaKey: "auth_identity_id",
			// upsert_replicated_auth_identity(serialize_auth_identity(identity)); data holds the
			// identity provider's tokens: a secret.
			Joins: []query.ReplicaJoin{{Alias: "ap", Table: "sentry_authprovider", Key: "id", From: "auth_provider_id"}},
			Fields: append(cols("user_id", "auth_provider_id", "ident"), secret("data"),
				query.ReplicaField{Name: "last_verified", Source: query.Col("last_verified")}),
			// USER_SCOPE: infer_identifiers gives user_id.
			Shard: query.Col("user_id"), ReplicaShard: "user_id",
			// outbox_cell_names(): find_cells_for_orgs([self.auth_provider.organization_id]).
			SourceCell: query.CellScope{ByOrganization: "organization_id", From: "ap"},
			Scope:      query.Enum{Value: 1, Name: "USER_SCOPE"}, Category: query.Enum{Value: 25, Name: "AUTH_IDENTITY_UPDATE"}},
			CellsOf: cellsOf("sentry_authidentity", true, func(src string, at CellsAt, ids []int64) query.Statement {
				return query.ReplicaCellsByProviderOrganization(src, query.QualifiedTable(at.Schema, "sentry_authprovider"),
					query.QualifiedTable(at.Schema, query.OrganizationMapping), ids)
			}, nil)},
	)
}

// spread is objs, one row per cell of cellsOf(object) (in order), with the cells; a gone
// object's deletion outbox is for the run's cell, the one whose replica it was read from.
func spread(objs []Object, at CellsAt, cellsOf func(Object) []string) ([]Object, []string) {
	var out []Object
	var cells []string
	for _, o := range objs {
		cs := []string{at.Cell}
		if !o.Gone {
			cs = cellsOf(o)
		}
		for _, c := range cs {
			out, cells = append(out, o), append(cells, c)
		}
	}
	return out, cells
}

// existingIDs are the ids of objs whose source exists.
func existingIDs(objs []Object) []int64 {
	var ids []int64
	for _, o := range objs {
		if !o.Gone {
			ids = append(ids, o.ObjectID)
		}
	}
	return ids
}

// cellsOfObjects runs st (object_id, cell_name rows) into each object's cells.
func cellsOfObjects(ctx context.Context, q query.Querier, st query.Statement) (map[int64][]string, error) {
	rows, err := query.All[query.ReplicaCellRow](ctx, q, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.ObjectID] = append(out[r.ObjectID], r.Cell)
	}
	return out, nil
}

// cellsFunc is a Pair's CellsOf.
type cellsFunc = func(context.Context, query.Querier, CellsAt, []Object) ([]Object, []string, error)

// cellsOf is a CellsOf of the source table source whose objects' cells, across silos,
// statement reads (object_id, cell_name rows; nil: the same cells for every object, from
// all); in a monolith (monolith true) Sentry's find_cells_for_* answer the monolith's cell.
func cellsOf(source string, monolith bool, statement func(source string, at CellsAt, ids []int64) query.Statement,
	all func(ctx context.Context, q query.Querier, at CellsAt) ([]string, error)) cellsFunc {
	return func(ctx context.Context, q query.Querier, at CellsAt, objs []Object) ([]Object, []string, error) {
		if monolith && !at.Split {
			out, cells := spread(objs, at, func(Object) []string { return []string{at.Cell} })
			return out, cells, nil
		}
		if all != nil {
			every, err := all(ctx, q, at)
			if err != nil {
				return nil, nil, err
			}
			out, cells := spread(objs, at, func(Object) []string { return every })
			return out, cells, nil
		}
		var byObject map[int64][]string
		if ids := existingIDs(objs); len(ids) > 0 {
			var err error
			if byObject, err = cellsOfObjects(ctx, q, statement(query.QualifiedTable(at.Schema, source), at, ids)); err != nil {
				return nil, nil, err
			}
		}
		out, cells := spread(objs, at, func(o Object) []string { return byObject[o.ObjectID] })
		return out, cells, nil
	}
}

// cellsByOrganization is the default outbox_cell_names() of a model with organization_id:
// find_cells_for_orgs([organization_id]), the cell its organization's mapping names (none
// without a mapping).
func cellsByOrganization(source string) cellsFunc {
	return cellsOf(source, true, func(src string, at CellsAt, ids []int64) query.Statement {
		return query.ReplicaCellsByOrganization(src, "id", "organization_id", query.QualifiedTable(at.Schema, query.OrganizationMapping), ids)
	}, nil)
}

// cellsAll is find_all_cell_names(): every cell the organization mappings name, and the run's.
func cellsAll() cellsFunc {
	return cellsOf("", true, nil, func(ctx context.Context, q query.Querier, at CellsAt) ([]string, error) {
		rows, err := query.All[query.ReplicaCellName](ctx, q, query.ReplicaCellsAll(query.QualifiedTable(at.Schema, query.OrganizationMapping), at.Cell))
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r.Cell
		}
		return out, nil
	})
}

// cellsByColumn is a model naming its cell in column ([self.cell_name]), in a monolith too.
func cellsByColumn(source, column string) cellsFunc {
	return cellsOf(source, false, func(src string, _ CellsAt, ids []int64) query.Statement {
		return query.ReplicaCellsByColumn(src, "id", column, ids)
	}, nil)
}
