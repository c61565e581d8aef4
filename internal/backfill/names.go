package backfill

// Names are the tables' names, in their order (backfill status's completion).
func Names(tables []Table) []string {
	var names []string
	for _, t := range tables {
		names = append(names, t.Name)
	}
	return names
}
