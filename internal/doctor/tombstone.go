package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// CheckTombstones warns about a stalled tombstone (deletion) watermark: a HybridCloudForeignKey
// column whose cascade has not reached a tombstone older than --tombstone-stall. Sentry
// records a deletion in one silo as a tombstone in the other (src/sentry/models/tombstone.py)
// and cascades it to each such column from a per-column watermark
// (src/sentry/deletions/tasks/hybrid_cloud.py: the "tombstone" watermark walks the tombstone
// table, 500 ids a batch, every 15 minutes and again while there is more). A stalled pass
// leaves rows that point at deleted objects: it looks like replica drift (reference §10.3).
// The watermarks are PostgreSQL rows since Sep 2026 (sentry_celldeletionwatermark,
// sentry_controldeletionwatermark: PR #123171; cut over by #123260, Redis removed by #123630),
// Redis keys "tombstone.<table>.<field>" before, which doctor does not read: the era model
// (query.Schema.DeletionWatermarksInPostgres) says which.
const CheckTombstones = "tombstones"

// DefaultTombstoneStall is --tombstone-stall: four of Sentry's 15-minute cascade runs.
const DefaultTombstoneStall = time.Hour

// DisableTombstoneCleanup is the option that stops the whole cascade (each task returns at
// once while it is on).
const DisableTombstoneCleanup = "hybrid_cloud.disable_tombstone_cleanup"

// tombstoneSilo is one silo's watermark and tombstone tables.
type tombstoneSilo struct {
	silo                   query.Silo
	watermarks, tombstones string
}

var tombstoneSilos = []tombstoneSilo{ //nolint:gochecknoglobals // constant table
	{query.SiloCell, query.CellDeletionWatermark, query.CellTombstoneTable},
	{query.SiloControl, query.ControlDeletionWatermark, query.ControlTombstoneTable},
}

func tombstoneStatements(schema string, cfg Config) query.Script {
	var sc query.Script
	for _, s := range tombstoneSilos {
		sc = append(sc, query.TombstoneWatermarks(query.QualifiedTable(schema, s.watermarks), query.QualifiedTable(schema, s.tombstones), cfg.Limit+1))
	}
	return sc
}

func checkTombstones(ctx context.Context, env *Env) ([]Finding, error) {
	tables := []string{query.CellDeletionWatermark, query.ControlDeletionWatermark, query.CellTombstoneTable, query.ControlTombstoneTable}
	era, err := outbox.ReadCatalog(ctx, env.Tx, env.SchemaName, tables)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, s := range tombstoneSilos {
		if !era.Table(s.tombstones).Present {
			continue // not this silo's database
		}
		if !era.DeletionWatermarksInPostgres(s.silo) {
			out = append(out, Finding{Check: CheckTombstones, Severity: OK, Target: s.tombstones, Short: "tombstone watermarks in Redis",
				Summary: fmt.Sprintf("no %s here: the %s silo's tombstone watermarks are Redis keys tombstone.<table>.<field> (Sentry before September 2026), which doctor does not read",
					s.watermarks, s.silo),
				Evidence: Evidence{{"store", "redis"}, {"tombstones", s.tombstones}},
				Next:     "redis-cli --scan --pattern 'tombstone.*'"})
			continue
		}
		fs, err := env.tombstoneFindings(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckTombstones, Severity: OK,
			Summary: "no tombstone table here (" + query.CellTombstoneTable + ", " + query.ControlTombstoneTable + ")"})
	}
	return out, nil
}

// tombstoneFindings are one silo's: a warning per column waiting on a tombstone older than
// the threshold (critical at 24 hours), at most Config.Limit, else one ok.
func (env *Env) tombstoneFindings(ctx context.Context, s tombstoneSilo) ([]Finding, error) {
	wm, tomb := query.QualifiedTable(env.SchemaName, s.watermarks), query.QualifiedTable(env.SchemaName, s.tombstones)
	rows, err := query.All[query.TombstoneWatermarkRow](ctx, env.Tx, query.TombstoneWatermarks(wm, tomb, env.Config.Limit+1))
	if err != nil {
		return nil, err
	}
	disabled, err := env.tombstoneCleanupDisabled(ctx, s.silo)
	if err != nil {
		return nil, err
	}
	stall := env.Config.TombstoneStall
	var out []Finding
	for _, r := range rows {
		if r.NextCreatedAt == nil || env.Now.Sub(*r.NextCreatedAt) < stall || len(out) == env.Config.Limit {
			continue
		}
		age := env.Now.Sub(*r.NextCreatedAt)
		sev := Warn
		if age >= 24*time.Hour {
			sev = Crit
		}
		column := Clean(r.TableName) + "." + Clean(r.FieldName)
		behind := int64(0)
		if r.MaxID != nil {
			behind = *r.MaxID - r.LowBound
		}
		why := "check that the deletions taskworker runs schedule_hybrid_cloud_foreign_key_jobs (every 15 minutes) and its errors for this column"
		if disabled {
			why = "the option " + DisableTombstoneCleanup + " is on: every cascade task returns at once"
		}
		out = append(out, Finding{Check: CheckTombstones, Severity: sev, Target: column, Short: "tombstone watermark stalled",
			Summary: fmt.Sprintf("the tombstone cascade of %s (%s silo) has waited %s on tombstone %d: its watermark stands at %d, up to %d tombstone id(s) behind; rows pointing at deleted objects stay (looks like replica drift): %s",
				column, s.silo, dur(age.Seconds()), *r.NextID, r.LowBound, behind, why),
			Evidence: Evidence{{"watermarks", s.watermarks}, {"table_name", Clean(r.TableName)}, {"field_name", Clean(r.FieldName)},
				{"low_bound", r.LowBound}, {"max_tombstone_id", r.MaxID}, {"waiting_on", *r.NextID}, {"waiting_seconds", seconds(age)},
				{"watermark_updated", r.DateUpdated}, {"cleanup_disabled", disabled}},
			Next: "outboxctl doctor --check " + CheckTombstones + " --print-sql"})
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckTombstones, Severity: OK, Target: s.watermarks,
			Summary:  fmt.Sprintf("%d tombstone watermark(s) of the %s silo: none waits on a tombstone older than %s", len(rows), s.silo, dur(stall.Seconds())),
			Evidence: Evidence{{"watermarks", len(rows)}, {"cleanup_disabled", disabled}}})
	}
	return out, nil
}

// tombstoneCleanupDisabled reads DisableTombstoneCleanup from the silo's options table
// (false when it has none, or the option is unset: Sentry's default).
func (env *Env) tombstoneCleanupDisabled(ctx context.Context, silo query.Silo) (bool, error) {
	table := options.OptionTableFor(silo, env.Schema)
	if table == "" {
		return false, nil
	}
	rows, err := options.ReadValues(ctx, env.Tx, query.OptionValues(env.SchemaName, table, []string{DisableTombstoneCleanup}))
	if err != nil || len(rows) == 0 {
		return false, err
	}
	v, err := options.Decode(DisableTombstoneCleanup, rows[0].Raw())
	if err != nil {
		return false, err
	}
	on, _ := v.Data.(bool)
	return on, nil
}
