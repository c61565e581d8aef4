-- replicate of the control -> cell pairs: the cells a control model's outbox rows go to, as
-- its outbox_cell_names() decides (docs/replicas.md, control -> cell). Across silos only: in a
-- monolith Sentry's find_cells_for_orgs and find_all_cell_names answer the monolith's cell
-- (SENTRY_MONOLITH_REGION) whatever the mappings hold.

-- name: replica-cells-by-organization
-- find_cells_for_orgs([organization_id]): the cell each object's organization mapping names
-- (none without a mapping: Sentry writes no row then either).
SELECT s./* TEMPLATE: source_key */id::bigint AS object_id, om.region_name::text AS cell_name
  FROM /* TEMPLATE: source */sentry_apikey s
  JOIN /* TEMPLATE: org_mapping */sentry_organizationmapping om ON om.organization_id = s./* TEMPLATE: org_column */organization_id
 WHERE s./* TEMPLATE: source_key */id = ANY (@ids::bigint[])
 ORDER BY 1, 2;

-- name: replica-cells-by-column
-- A model naming its cell (OrganizationSlugReservation: [self.cell_name], the region_name
-- column).
SELECT s./* TEMPLATE: source_key */id::bigint AS object_id, s./* TEMPLATE: cell_column */region_name::text AS cell_name
  FROM /* TEMPLATE: source */sentry_organizationslugreservation s
 WHERE s./* TEMPLATE: source_key */id = ANY (@ids::bigint[])
 ORDER BY 1, 2;

-- name: replica-cells-all
-- find_all_cell_names(): every cell. outboxctl cannot read Sentry's cell directory (its
-- settings), so these are the cells the organization mappings name, and the run's own.
SELECT DISTINCT c.cell_name
  FROM (SELECT @cell::text AS cell_name
        UNION ALL
        SELECT om.region_name::text FROM /* TEMPLATE: org_mapping */sentry_organizationmapping om) c
 ORDER BY 1;

-- name: replica-cells-by-provider-organization
-- AuthIdentity.outbox_cell_names(): find_cells_for_orgs([auth_provider.organization_id]),
-- the cell the mapping of the identity's provider's organization names.
SELECT s.id::bigint AS object_id, om.region_name::text AS cell_name
  FROM /* TEMPLATE: source */sentry_authidentity s
  JOIN /* TEMPLATE: provider */sentry_authprovider ap ON ap.id = s.auth_provider_id
  JOIN /* TEMPLATE: org_mapping */sentry_organizationmapping om ON om.organization_id = ap.organization_id
 WHERE s.id = ANY (@ids::bigint[])
 ORDER BY 1, 2;
