package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
)

// sentryIndexes are the column sets of Sentry's three outbox indexes after the shard key
// (reference §1.4), with what is slow without each.
var sentryIndexes = []struct { //nolint:gochecknoglobals // constant table
	cols []string
	use  string
}{
	{[]string{"category", "object_identifier"}, "coalescing reads every row of the shard"},
	{[]string{"scheduled_for"}, "finding due shards reads the table"},
	{[]string{"id"}, "claiming a shard's head reads the shard"},
}

// checkSchema: the outbox tables look like Sentry's (columns, payload type, the three
// indexes by column set, region_name on control) and the options tables' value type is one
// outboxctl decodes. Drift is a finding, never a crash.
func checkSchema(ctx context.Context, env *Env) ([]Finding, error) {
	rows, err := readRows[query.DoctorIndexRow](ctx, env, query.DoctorIndexes(env.SchemaName, tableNames(env.Targets)))
	if err != nil {
		return nil, err
	}
	indexes := map[string][]query.DoctorIndexRow{}
	for _, w := range rows {
		indexes[w.TableName] = append(indexes[w.TableName], w)
	}
	var out []Finding
	for _, t := range env.Targets {
		out = append(out, env.tableSchemaFinding(t, indexes[t.TableName()]))
	}
	return append(out, env.optionsSchemaFinding()), nil
}

func (env *Env) tableSchemaFinding(t query.Target, idx []query.DoctorIndexRow) Finding {
	ti := env.Schema.Table(t.TableName())
	var drift []string
	sev := OK
	if ti.OutboxColumns < 7 {
		sev = Crit
		drift = append(drift, fmt.Sprintf("only %d of Sentry's 7 outbox columns", ti.OutboxColumns))
	}
	switch ti.PayloadType {
	case "jsonb", "text":
	default:
		sev = max(sev, Warn)
		drift = append(drift, fmt.Sprintf("payload is %q, neither jsonb (Sentry since Aug 2025) nor text (before)", ti.PayloadType))
	}
	lead := []string{"shard_scope", "shard_identifier"}
	if t.Control() {
		switch ti.CellColumn {
		case "region_name":
		case "":
			sev = Crit
			drift = append(drift, "no region_name column (the control table is keyed by cell)")
		default:
			sev = max(sev, Warn)
			drift = append(drift, fmt.Sprintf("cell column is %s: Sentry kept db_column region_name", ti.CellColumn))
		}
		lead = append([]string{t.CellColumnName()}, lead...)
	}
	found, missing := matchIndexes(idx, lead)
	for _, m := range missing {
		sev = max(sev, Warn)
		drift = append(drift, m)
	}
	f := Finding{Check: CheckSchema, Severity: sev, Evidence: Evidence{
		{"table", t.TableName()}, {"outbox_columns", ti.OutboxColumns}, {"payload_type", ti.PayloadType},
		{"cell_column", nilIfEmpty(ti.CellColumn)}, {"indexes", found},
	}}
	if len(drift) == 0 {
		f.Summary = fmt.Sprintf("%s looks like Sentry's: payload %s, the three shard-key indexes present", t.TableName(), ti.PayloadType)
		return f
	}
	f.Summary = t.TableName() + " differs from Sentry's: " + strings.Join(drift, "; ")
	f.Next = "\\d " + t.From()
	return f
}

// matchIndexes finds Sentry's three indexes among idx by column set (names differ between
// databases that did or did not run migration 0640) and says which are missing or invalid.
func matchIndexes(idx []query.DoctorIndexRow, lead []string) (found []string, missing []string) {
	for _, want := range sentryIndexes {
		cols := append(append([]string(nil), lead...), want.cols...)
		key := strings.Join(cols, ",")
		hit := false
		for _, w := range idx {
			if strings.Join(strs(w.Columns), ",") != key {
				continue
			}
			hit = true
			found = append(found, Clean(w.IndexName))
			if !w.Valid {
				missing = append(missing, fmt.Sprintf("index %s (%s) is invalid (a failed CREATE INDEX CONCURRENTLY): %s", Clean(w.IndexName), key, want.use))
			}
			break
		}
		if !hit {
			missing = append(missing, fmt.Sprintf("no index on (%s): %s", key, want.use))
		}
	}
	return found, missing
}

func strs(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (env *Env) optionsSchemaFinding() Finding {
	f := Finding{Check: CheckSchema, Severity: OK}
	var present, drift []string
	for _, n := range []string{query.OptionTable, query.ControlOptionTable} {
		ti := env.Schema.Table(n)
		if !ti.Present {
			continue
		}
		present = append(present, n)
		f.Evidence = append(f.Evidence, KV{n + "_value_type", ti.ValueType})
		if ti.ValueType != "text" && ti.ValueType != "jsonb" {
			drift = append(drift, fmt.Sprintf("%s.value is %q, neither text nor jsonb", n, ti.ValueType))
		}
	}
	switch {
	case len(present) == 0:
		f.Severity = Warn
		f.Summary = "no sentry_option or sentry_controloption table: kill switches and backfill gates cannot be read"
	case len(drift) > 0:
		f.Severity = Warn
		f.Summary = strings.Join(drift, "; ")
	default:
		f.Summary = "options tables " + strings.Join(present, " and ") + " hold values outboxctl decodes (text or jsonb)"
	}
	return f
}
