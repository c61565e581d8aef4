package query

// The statements of the control -> cell pairs' replicate, in sql/replica_control.sql: the
// cells a control model's outbox rows go to across silos.

// ReplicaCellsByOrganization reads, for the objects ids of source (qualified; key its id
// column, orgColumn its organization), the cell their organization's mapping names.
func ReplicaCellsByOrganization(source, key, orgColumn, orgMapping string, ids []int64) Statement {
	return sqlStatement("replica-cells-by-organization", []string{"The cell of each object's organization (find_cells_for_orgs)."},
		map[string]string{"source": source, "source_key": Ident(key), "org_column": Ident(orgColumn), "org_mapping": orgMapping},
		Args{"ids": {Value: ids}})
}

// ReplicaCellsByColumn reads, for the objects ids of source, the cell their cellColumn names.
func ReplicaCellsByColumn(source, key, cellColumn string, ids []int64) Statement {
	return sqlStatement("replica-cells-by-column", []string{"The cell each object names."},
		map[string]string{"source": source, "source_key": Ident(key), "cell_column": Ident(cellColumn)}, Args{"ids": {Value: ids}})
}

// ReplicaCellsAll reads every cell outboxctl knows: the ones the organization mappings name
// and cell.
func ReplicaCellsAll(orgMapping, cell string) Statement {
	return sqlStatement("replica-cells-all", []string{"Every cell the organization mappings name, and this one (find_all_cell_names)."},
		map[string]string{"org_mapping": orgMapping}, Args{"cell": {Value: cell, Note: "the cell's name (region_name)"}})
}

// ReplicaCellRow is one row of ReplicaCellsByOrganization and ReplicaCellsByColumn.
type ReplicaCellRow struct {
	ObjectID int64  `db:"object_id"`
	Cell     string `db:"cell_name"`
}

// ReplicaCellName is one row of ReplicaCellsAll.
type ReplicaCellName struct {
	Cell string `db:"cell_name"`
}

// ReplicaCellsByProviderOrganization reads, for the auth identities ids of source, the cell
// of their provider's (provider, qualified) organization.
func ReplicaCellsByProviderOrganization(source, provider, orgMapping string, ids []int64) Statement {
	return sqlStatement("replica-cells-by-provider-organization", []string{"The cell of each identity's provider's organization (find_cells_for_orgs)."},
		map[string]string{"source": source, "provider": provider, "org_mapping": orgMapping}, Args{"ids": {Value: ids}})
}
