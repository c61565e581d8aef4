package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// CheckEra says which side of Sentry's changes since May 2026 this database is on (reference
// §10: decided from its catalog, query.Schema's era model) and flags group action log rows in
// the cell outbox: before 2026-09-15 leftovers, after it another writer's, which drain apart
// from sentry_groupactionlogoutbox so a group's actions can apply out of order (§10.3).
const CheckEra = "era"

// Likely integers of GROUP_SCOPE and GROUP_ACTION_LOG_EVENT (reference §2: UNVERIFIED): only
// --print-sql uses them; a run takes them from the group action log outbox's own rows, or
// from an --enums registry that names them.
var likelyGroupScope, likelyGroupActionLog = query.Enum{Value: 14, Name: "GROUP_SCOPE (likely)"}, query.Enum{Value: 49, Name: "GROUP_ACTION_LOG_EVENT (likely)"} //nolint:gochecknoglobals // constants

// cellTarget is the cell outbox among targets.
func cellTarget(targets []query.Target) (query.Target, bool) {
	for _, t := range targets {
		if !t.Control() && t.TableName() == query.CellTable {
			return t, true
		}
	}
	return query.Target{}, false
}

func eraStatements(targets []query.Target) query.Script {
	t, ok := cellTarget(targets)
	if !ok {
		return nil
	}
	// The group action log outbox's own head (era-group-action-log-pair) is read only where
	// the catalog has the table, so the printed script leaves it out: it must run anywhere.
	return query.Script{query.GroupActionLogInCellOutbox(t.From(), likelyGroupScope, likelyGroupActionLog)}
}

func checkEra(ctx context.Context, env *Env) ([]Finding, error) {
	era, err := outbox.ReadCatalog(ctx, env.Tx, env.SchemaName, query.EraTables())
	if err != nil {
		return nil, err
	}
	out := []Finding{eraFinding(era)}
	t, ok := cellTarget(env.Targets)
	if !ok {
		return out, nil
	}
	scope, category, from, err := groupActionLogEnums(ctx, env, era)
	if err != nil {
		return nil, err
	}
	if from == "" {
		return append(out, Finding{Check: CheckEra, Severity: OK, Target: query.CellTable,
			Summary: "group action log rows in " + query.CellTable + " cannot be told: " + query.GroupActionLogTable +
				" is empty or absent and the registry has no GROUP_ACTION_LOG_EVENT (pass --enums from a Sentry checkout that has it)"}), nil
	}
	row, err := query.One[query.GroupActionLogInCellOutboxRow](ctx, env.Tx, query.GroupActionLogInCellOutbox(t.From(), scope, category))
	if err != nil {
		return nil, err
	}
	return append(out, groupActionLogFinding(env, t, scope, category, from, row)), nil
}

// groupActionLogEnums are GROUP_SCOPE's and GROUP_ACTION_LOG_EVENT's integers, and where they
// came from ("" when nothing says them): the group action log outbox's oldest row, else the
// registry (--enums).
func groupActionLogEnums(ctx context.Context, env *Env, era query.Schema) (scope, category query.Enum, from string, err error) {
	if era.Table(query.GroupActionLogTable).Present {
		rows, err := query.All[query.GroupActionLogPairRow](ctx, env.Tx, query.GroupActionLogPair(query.QualifiedTable(env.SchemaName, query.GroupActionLogTable)))
		if err != nil {
			return scope, category, "", err
		}
		if len(rows) == 1 {
			s, c := int(rows[0].Scope), int(rows[0].Category)
			return query.Enum{Value: s, Name: env.Registry.ScopeName(s)}, query.Enum{Value: c, Name: env.Registry.CategoryName(c)},
				query.GroupActionLogTable + "'s oldest row", nil
		}
	}
	for _, c := range env.Registry.Categories() {
		if c.Name == "GROUP_ACTION_LOG_EVENT" {
			return query.Enum{Value: c.Scope, Name: env.Registry.ScopeName(c.Scope)}, query.Enum{Value: c.Value, Name: c.Name}, "the registry (" + env.Registry.Origin() + ")", nil
		}
	}
	return scope, category, "", nil
}

// groupActionLogFinding judges the group action log rows found in the cell outbox by their
// age relative to the cutover.
func groupActionLogFinding(env *Env, t query.Target, scope, category query.Enum, from string, r query.GroupActionLogInCellOutboxRow) Finding {
	cutover, _ := time.Parse("2006-01-02 15:04:05-07", query.GroupActionLogCutover)
	f := Finding{Check: CheckEra, Severity: OK, Target: query.CellTable,
		Evidence: Evidence{{"scope", scope.Value}, {"category", category.Value}, {"from", from}, {"rows", r.Total}, {"rows_since_2026_09_15", r.Since}}}
	if r.Total == 0 {
		f.Summary = fmt.Sprintf("no %s rows in %s (Sentry writes them to %s)", category.Name, query.CellTable, query.GroupActionLogTable)
		return f
	}
	f.Evidence = append(f.Evidence, KV{"oldest", *r.Oldest}, KV{"newest", *r.Newest},
		KV{"newest_days_after_2026_09_15", float64(int(r.Newest.Sub(cutover).Hours()/24*10)) / 10})
	f.Next = env.command(t, "", "shards", "--category", categoryArg(category))
	if r.Since == 0 {
		f.Summary = fmt.Sprintf("%d %s row(s) in %s, all added before 2026-09-15: leftovers from before Sentry wrote every group action log row to %s; they drain as before (nothing to do unless they are stuck)",
			r.Total, category.Name, query.CellTable, query.GroupActionLogTable)
		f.Short = "group action log leftovers"
		return f
	}
	f.Severity = Warn
	f.Short = "group action log rows from another writer"
	f.Summary = fmt.Sprintf("%d %s row(s) in %s added on or after 2026-09-15 (newest %s): not leftovers but a writer of CellOutbox rows (the bulk path of open PR #121378); they drain apart from %s, so a group's actions can apply out of order: find and stop that writer, then let both tables drain and check the groups' action logs",
		r.Since, category.Name, query.CellTable, r.Newest.UTC().Format(time.RFC3339), query.GroupActionLogTable)
	return f
}

// categoryArg is a category as the command line takes it: its name, or raw:N for one this
// build does not know.
func categoryArg(c query.Enum) string {
	if c.Name == "" || strings.HasPrefix(c.Name, "UNKNOWN(") {
		return fmt.Sprintf("raw:%d", c.Value)
	}
	return c.Name
}

// eraFinding says what the catalog tells of Sentry's era, and where its workers run.
func eraFinding(era query.Schema) Finding {
	var gone, idle []string
	for _, td := range query.Teardowns {
		if era.ReplicaState(td.Table) == query.ReplicaTornDown {
			gone = append(gone, td.Pair)
			idle = append(idle, td.Category.Name)
		}
	}
	var facts []string
	if len(gone) > 0 {
		// Drained is not applied: these rows drain and write nothing (reference §10.1, §10.2).
		facts = append(facts, "replicas of "+strings.Join(gone, ", ")+" torn down (July 2026): verify skips them, and "+
			strings.Join(idle, ", ")+" rows drain applying nothing")
	}
	if era.WatermarksInPostgres(query.SiloCell) || era.WatermarksInPostgres(query.SiloControl) {
		facts = append(facts, "backfill watermarks in PostgreSQL (Sep 2026)")
	} else {
		facts = append(facts, "backfill watermarks in Redis (before Sep 2026)")
	}
	namespaces := "hybridcloud, hybridcloud.control"
	if era.Table(query.GroupActionLogTable).Present {
		facts = append(facts, query.GroupActionLogTable+" here")
		namespaces += ", issues.action_log"
	}
	if sf, pr := era.WebhookIndexes(); era.Table(query.WebhookPayloadTable).Present && !sf && !pr {
		facts = append(facts, "webhook payload schedule_for and priority indexes dropped (Aug 2026)")
	}
	return Finding{Check: CheckEra, Severity: OK, Short: "Sentry's era",
		Summary:  "catalog: " + strings.Join(facts, "; ") + "; Sentry's outbox workers run in the taskworker namespaces " + namespaces,
		Evidence: Evidence{{"torn_down_replicas", len(gone)}, {"outbox_tables", strings.Join(era.OutboxTables(), " ")}}}
}
