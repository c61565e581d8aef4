package render

// defaultPriority ranks, by column name, the columns of every table that can outgrow a
// terminal (shards, inspect shard's messages and categories, inspect category, backfill
// status, killswitch list, doctor): lower goes first. Column names are the stable JSON keys,
// so one table here serves every command, including tables built in cmd, with no per-command
// wiring. Columns not listed (a row's identity: scope, shard, id, table, state, check,
// severity) are never dropped. A Table's own Priority wins over this for the columns it names.
var defaultPriority = map[string]int{ //nolint:gochecknoglobals // constant table
	// Long lists and sentences a person can ask for with -o wide.
	"category_names": 10,
	"payload":        11,
	"evidence":       12,
	"note":           13,
	"next":           14,
	"governs":        15,
	// Times and counts that add colour to a row but do not identify it.
	"date_added":          20,
	"scheduled_from":      21,
	"newest_message":      22,
	"walked_version":      23,
	"rate_ids_per_minute": 24,
	"rows_done":           25,
	"rows_estimate":       26,
	"store":               27,
	"option":              28,
	"target":              29,
	"coalesce_groups":     30,
	"group_rows":          31,
	"object_identifier":   32,
	"options_table":       33,
	"objects":             34,
	"oldest_message":      40,
	"scheduled_for":       41,
	"next_attempt":        42,
	"eta_seconds":         43,
	"low_bound":           44,
	"max_id":              45,
	"region_name":         46,
	"detail":              50,
	"summary":             51,
}

// priority is the table's priorities over the defaults.
func (t *Table) priority() map[string]int {
	if len(t.Priority) == 0 {
		return defaultPriority
	}
	out := make(map[string]int, len(defaultPriority)+len(t.Priority))
	for k, v := range defaultPriority {
		out[k] = v
	}
	for k, v := range t.Priority {
		out[k] = v
	}
	return out
}
