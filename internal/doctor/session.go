package doctor

import (
	"context"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Invocation is what a doctor run takes of the command line beyond its checks: the table
// the flags select and whether they name it, --schema, the registry, the clock, how a
// finding's command line starts, the ledger and the checks' thresholds. `outboxctl
// doctor` and top's poll fill it alike.
type Invocation struct {
	Target query.Target
	// Named is true when the flags name one outbox table (--silo, --table, --cell): only it
	// is checked, else every one of the two silos' present.
	Named      bool
	SchemaName string // --schema as given ("" for the search_path)
	Registry   *enums.Registry
	Now        time.Time
	Prefix     string // the command line a finding suggests starts so ("outboxctl --schema x")
	LedgerPath string // the ledger of the shards outboxctl made due ("": none is read)
	Config     Config
}

// Targets picks the outbox tables: t when named, or else every one of the two silos'
// tables present (both in a monolith). sch nil means "print": both.
func Targets(t query.Target, named bool, sch *query.Schema) ([]query.Target, error) {
	all := []query.Target{t}
	if !named {
		all = []query.Target{{Silo: query.SiloCell, Schema: t.Schema}, {Silo: query.SiloControl, Schema: t.Schema}}
	}
	if sch == nil {
		return all, nil
	}
	var present []query.Target
	for _, x := range all {
		if sch.Table(x.TableName()).Present {
			present = append(present, sch.Adapt(x))
		}
	}
	if len(present) == 0 {
		return nil, sch.CheckOutbox(all[0])
	}
	return present, nil
}

// InSnapshot runs the checks names in the snapshot s (the watermark tables added to its
// catalog) and returns the findings and the backfill cursors read (for Resample).
func InSnapshot(ctx context.Context, s *outbox.Snapshot, inv Invocation, names []string) ([]Finding, map[string]backfill.Cursor, error) {
	if err := addWatermarks(s); err != nil {
		return nil, nil, err
	}
	targets, err := Targets(inv.Target, inv.Named, &s.Schema)
	if err != nil {
		return nil, nil, err
	}
	env := EnvIn(s, inv.SchemaName, s.Schema)
	env.Targets, env.Registry, env.Now, env.Prefix, env.LedgerPath = targets, inv.Registry, inv.Now, inv.Prefix, inv.LedgerPath
	env.Config = inv.Config
	findings := Run(ctx, env, names)
	return findings, env.Cursors, nil
}

// Resample reads the backfill cursors again in s (a snapshot opened sample after the one
// that read first: a snapshot held open while waiting would itself pin the xmin horizon)
// and adds to fs the walks that did not move, sorted.
func Resample(s *outbox.Snapshot, fs []Finding, first map[string]backfill.Cursor, sample time.Duration, prefix string) ([]Finding, error) {
	if err := addWatermarks(s); err != nil {
		return fs, err
	}
	second, _, err := ReadCursors(s.Context(), s, s.Target.Schema, s.Schema)
	if err != nil {
		return fs, db.Classify(err, "backfill-watermarks")
	}
	return append(fs, Stalled(first, second, sample, prefix)...), nil
}

// addWatermarks adds the backfill watermark tables to what the session introspected.
func addWatermarks(s *outbox.Snapshot) error {
	extra, err := s.Catalog([]string{query.CellWatermark, query.ControlWatermark})
	if err != nil {
		return err
	}
	for k, v := range extra.Tables {
		s.Schema.Tables[k] = v
	}
	return nil
}
